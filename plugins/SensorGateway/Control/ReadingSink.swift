import RoleKit

/// Where decoded readings leave the gateway: the one seam between the
/// engine and whatever hands readings on. The engine's rate limits apply
/// before it; a sink must not block (it runs on the gateway's actor).
///
/// Readings leave as `reading` plugin events (``EventReadingSink``) and, when
/// the agent is on a fleet broker, as MQTT messages (``FleetReadingSink``).
public protocol ReadingSink: Sendable {
    /// Hands on one device's changed readings.
    func publish(_ update: ReadingUpdate, clock: GatewayClock)

    /// The device at `address` is gone: evicted, expired, or the gateway stopped.
    func departed(_ address: DeviceAddress)
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

    /// Nothing: an event says what changed, and a device that went says nothing more.
    public func departed(_ address: DeviceAddress) {}
}
