import BLE
import ControlProtocol
import IO
import JSON

/// The control API's part of state restoration. The central manager persists
/// its wanted connections and subscriptions (docs/ble-api.md); which of those
/// subscriptions `central.subscribe` made is the control API's own record,
/// kept beside the manager's file as `<restoreIdentifier>-control.json` (the
/// same format, subscriptions only, written atomically before
/// `central.subscribe` or `central.unsubscribe` answers). When the central
/// role starts on a state directory with such a record, each recorded
/// subscription the manager restored delivers `value` events again, and a
/// `state` event says what was restored.
extension CentralControl {
    /// The record's store, beside `central`'s restoration store (nil without one).
    static func recordStore(for central: CentralManager) -> RestorationStore? {
        guard let store = central.restorationStore else { return nil }
        return RestorationStore(directory: store.directory, restoreIdentifier: store.restoreIdentifier + "-control")
    }

    /// Writes the subscriptions the control API holds now, on the blocking
    /// pool, and returns once they (or a later set) are on disk: saves asked
    /// for while a write runs fold into the next, which takes the set as it
    /// is then, so concurrent changes end with the last one.
    func saveSubscriptions(of central: CentralManager) async throws(RPCError) {
        guard let writer = recordWriter(for: central) else { return }
        do {
            try await writer.save(())
        } catch {
            throw RPCError(.internalError, "saving the control API's subscriptions: \(error)")
        }
    }

    /// The record's writer while `central` is the bound manager (nil without a store).
    private func recordWriter(for central: CentralManager) -> CoalescingWriter<Void>? {
        guard let store = Self.recordStore(for: central) else { return nil }
        return state.withLock { state in
            guard state.central === central else { return nil }
            if let writer = state.recordWriter { return writer }
            let writer = CoalescingWriter<Void> { [weak self, weak central] () throws(SystemError) in
                guard let self, let central else { return }
                let references = self.state.withLock { state in
                    state.central === central ? state.subscriptions.keys.sorted() : nil
                }
                guard let references else { return }
                if references.isEmpty {
                    try store.remove()
                } else {
                    try store.save(RestorationState(subscriptions: references))
                }
            }
            state.recordWriter = writer
            return writer
        }
    }

    /// Starts forwarding the recorded subscriptions `central` restored, and
    /// publishes what was restored (a `state` event with `agentState`
    /// `"restored"`; also in `agent.status`'s `central.restored`).
    func restoreSubscriptions(of central: CentralManager) {
        guard let store = Self.recordStore(for: central) else { return }
        var recorded: [CharacteristicReference] = []
        var problem: String?
        do {
            switch try store.load() {
            case .restored(let saved): recorded = saved.subscriptions
            case .empty: break
            case .corrupt(let reason, let preservedAt):
                problem = "the control API's record was unreadable (\(reason)); kept at \(preservedAt)"
            }
        } catch {
            problem = "reading the control API's record: \(error)"
        }
        let wanted = Set(central.wantedSubscriptions)
        let restored = recorded.filter(wanted.contains)
        let forwarders = restored.map { ($0, forward(central, $0)) }
        state.withLock { state in
            for (reference, forwarder) in forwarders { state.subscriptions[reference] = forwarder }
        }
        let connections = central.wantedConnections
        guard !recorded.isEmpty || !connections.isEmpty || problem != nil else { return }
        var summary: JSONObject = [
            "subscriptions": .array(restored.map(Self.json(reference:))),
            "notRestored": .array(recorded.filter { !wanted.contains($0) }.map(Self.json(reference:))),
            "connections": .array(connections.map { .string($0.uuidString) }),
        ]
        if let problem { summary["problem"] = .string(problem) }
        state.withLock { $0.restored = .object(summary) }
        if restored.count != recorded.count { Task { try? await self.saveSubscriptions(of: central) } }
        summary["agentState"] = "restored"
        summary["role"] = "central"
        bus.publish(.state, .object(summary))
    }

    /// `{"id", "service", "characteristic"}` (128-bit UUIDs).
    static func json(reference: CharacteristicReference) -> JSON {
        [
            "id": .string(reference.peripheral.uuidString), "service": .string(reference.service.uuidString),
            "characteristic": .string(reference.characteristic.uuidString),
        ]
    }
}
