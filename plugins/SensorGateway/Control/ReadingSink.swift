import RoleKit

/// Where decoded readings leave the gateway: the one seam between the
/// engine and whatever hands readings on. The engine's rate limits apply
/// before it; a sink must not block (it runs on the gateway's actor).
///
/// Today readings leave as `reading` plugin events (``EventReadingSink``);
/// another hand-off (an MQTT publisher) is one more conforming type in the
/// list the plugin gives its node.
public protocol ReadingSink: Sendable {
    /// Hands on one device's changed readings.
    func publish(_ update: ReadingUpdate, clock: GatewayClock)
}

/// Publishes each update as a `reading` plugin event
/// (`blectl events --kind plugin`, `blectl gateway readings`).
public struct EventReadingSink: ReadingSink {
    private let events: any PluginEventSink

    /// A sink emitting through `events`.
    public init(events: any PluginEventSink) { self.events = events }

    /// Emits `reading` with ``GatewayJSON/update(_:clock:)``.
    public func publish(_ update: ReadingUpdate, clock: GatewayClock) {
        events.emit("reading", GatewayJSON.update(update, clock: clock))
    }
}
