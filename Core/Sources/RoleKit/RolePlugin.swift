/// A role plugin: the code that does a node's job in one BLE role (the
/// payment-terminal scanner, the sensor aggregator, the diagnostics plugin).
///
/// The agent creates one instance per start through the descriptor's factory,
/// with the ``RoleContext`` of that start, then calls ``start()`` once and
/// ``stop()`` once. An instance is never started again: a restart (reload)
/// creates a new one.
public protocol RolePlugin: AnyObject, Sendable {
    /// Brings the role up: read the config, register control methods, start
    /// the plugin's own tasks. Return promptly (long-running work belongs in
    /// tasks the plugin owns); the agent gives up after a deadline and reports
    /// the role as failed. A thrown error is reported in `agent.status` and a
    /// `plugin` event; its description should say what is wrong.
    func start() async throws

    /// Brings the role down: cancel the plugin's tasks, flush its state,
    /// release BLE resources. The agent has already removed the plugin's
    /// control methods; events emitted from now on are dropped. Must return
    /// within the agent's stop deadline, or the agent proceeds without it.
    func stop() async
}
