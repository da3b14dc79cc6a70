/// Who may use the control socket, checked against SO_PEERCRED and
/// SO_PEERGROUPS.
///
/// An empty `allowedUids` allows only the agent's own effective uid. A
/// non-empty list allows exactly the uids it names: the agent's own uid and
/// root get no exception (list them to allow them). Root can always reach the
/// socket file, so this rule is what keeps a root-run client out when it
/// should be; it also makes rejection testable as root.
///
/// With an `operatorGroup` (`control.group`), a peer whose primary or
/// supplementary groups include it is allowed as well, whatever its uid.
public struct PeerPolicy: Sendable, Hashable {
    /// The configured list.
    public var allowedUids: [UInt32]
    /// The agent's own effective uid.
    public var ownUid: UInt32
    /// The gid whose members may connect (`control.group`), if any.
    public var operatorGroup: UInt32?

    /// A policy.
    public init(allowedUids: [UInt32], ownUid: UInt32, operatorGroup: UInt32? = nil) {
        self.allowedUids = allowedUids
        self.ownUid = ownUid
        self.operatorGroup = operatorGroup
    }

    /// Whether a peer with `uid` may talk to the agent, whatever its groups.
    public func allows(uid: UInt32) -> Bool {
        allowedUids.isEmpty ? uid == ownUid : allowedUids.contains(uid)
    }

    /// Whether a peer with `uid`, primary group `gid` and supplementary
    /// groups `groups` may talk to the agent.
    public func allows(uid: UInt32, gid: UInt32, groups: [UInt32]) -> Bool {
        if allows(uid: uid) { return true }
        guard let operatorGroup else { return false }
        return gid == operatorGroup || groups.contains(operatorGroup)
    }
}
