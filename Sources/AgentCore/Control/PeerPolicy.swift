/// Who may use the control socket, checked against SO_PEERCRED.
///
/// An empty `allowedUids` allows only the agent's own effective uid. A
/// non-empty list allows exactly the uids it names: the agent's own uid and
/// root get no exception (list them to allow them). Root can always reach the
/// socket file, so this rule is what keeps a root-run client out when it
/// should be; it also makes rejection testable as root.
public struct PeerPolicy: Sendable, Hashable {
    /// The configured list.
    public var allowedUids: [UInt32]
    /// The agent's own effective uid.
    public var ownUid: UInt32

    /// A policy.
    public init(allowedUids: [UInt32], ownUid: UInt32) {
        self.allowedUids = allowedUids
        self.ownUid = ownUid
    }

    /// Whether a peer with `uid` may talk to the agent.
    public func allows(uid: UInt32) -> Bool {
        allowedUids.isEmpty ? uid == ownUid : allowedUids.contains(uid)
    }
}
