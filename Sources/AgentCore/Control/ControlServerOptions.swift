/// The control server's settings and limits (docs/control-api.md, "Limits").
public struct ControlServerOptions: Sendable, Hashable {
    /// The socket path.
    public var socketPath: String
    /// The socket file's mode.
    public var mode: UInt32
    /// The socket file's group (`control.group`); nil: the agent's own.
    public var group: UInt32?
    /// Who may connect.
    public var policy: PeerPolicy
    /// The most clients connected at once; more are told and closed.
    public var maxClients: Int = 16
    /// The longest request line, in bytes (without the newline).
    public var maxMessageBytes: Int = 1 << 20
    /// The most events queued for one client before the oldest are dropped.
    public var maxQueuedEvents: Int = 1024
    /// The most events published and not yet queued for the clients (the
    /// server's loop takes them in batches); past it the oldest is dropped.
    public var maxPendingEvents: Int = 1024
    /// The most reply bytes queued for one client before it is closed.
    public var maxQueuedReplyBytes: Int = 4 << 20
    /// The most requests of one client whose handlers run at once; past it the
    /// client's socket is not read until one finishes.
    public var maxRequestsInFlight: Int = 32
    /// How long a client may leave a line unfinished (bytes without their
    /// newline, no more arriving) before it is told and closed.
    public var partialLineTimeout: Duration = .seconds(10)

    /// Options with the default limits.
    public init(socketPath: String, mode: UInt32 = 0o600, group: UInt32? = nil, policy: PeerPolicy) {
        self.socketPath = socketPath
        self.mode = mode
        self.group = group
        self.policy = policy
    }
}
