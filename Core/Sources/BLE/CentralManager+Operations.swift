extension CentralManager {
    /// Runs `body` through the device's operation queue: one operation per
    /// attribute at a time, a deadline, InProgress retried with backoff, and a
    /// prompt ``BLEError/notConnected`` when the link drops.
    func enqueue<Value: Sendable>(
        devicePath: String, attribute: String,
        _ body: @escaping @Sendable () async throws(BLEError) -> Value
    ) async throws(BLEError) -> Value {
        let slot = OperationSlot<Value>()
        let runner = Runner(
            start: {
                do throws(BLEError) {
                    slot.store(.success(try await body()))
                } catch {
                    if error.code == .inProgress { return .inProgress }
                    slot.store(.failure(error))
                }
                return .finished
            }, deliver: { slot.deliver() }, fail: { slot.fail($0) })
        let (id, actions): (OperationQueue.ID, [OperationQueue.Action]) = try state.withLock { state throws(BLEError) in
            if let refusal = state.machine.state.refusal { throw refusal }
            guard let device = state.mirror.device(at: devicePath), device.connected else {
                throw BLEError.notConnected
            }
            var queue = state.queues[devicePath] ?? OperationQueue(policy: options.operationPolicy)
            let (id, actions) = queue.enqueue(attribute: attribute, now: clock.now)
            state.queues[devicePath] = queue
            state.runners[id] = runner
            return (id, actions)
        }
        run(actions, devicePath: devicePath)
        return try await withTaskCancellationHandler {
            await slot.wait()
        } onCancel: {
            cancelOperation(id, devicePath: devicePath)
        }.get()
    }

    /// The caller's task was cancelled: the operation fails with
    /// ``BLEError/cancelled`` and the next one on its attribute starts.
    private func cancelOperation(_ id: OperationQueue.ID, devicePath: String) {
        let (actions, orphan) = state.withLock { state -> ([OperationQueue.Action], Runner?) in
            var actions: [OperationQueue.Action] = []
            if var queue = state.queues[devicePath] {
                actions = queue.cancel(id)
                state.queues[devicePath] = queue
            }
            // A runner the queue no longer knows must still never wait forever.
            let orphan = actions.contains(.fail(id, .cancelled)) ? nil : state.runners.removeValue(forKey: id)
            return (actions, orphan)
        }
        orphan?.fail(.cancelled)
        run(actions, devicePath: devicePath)
    }

    /// Performs queue actions for `devicePath` (or, without one, only the
    /// deliver/fail actions, e.g. after a link drop).
    func run(_ actions: [OperationQueue.Action], devicePath: String? = nil) {
        for action in actions {
            switch action {
            case .start(let id):
                guard let runner = state.withLock({ $0.runners[id] }), let devicePath else { continue }
                Task { [weak self] in
                    let outcome = await runner.start()
                    guard let self else { return }
                    let next = self.state.withLock { state -> [OperationQueue.Action] in
                        guard var queue = state.queues[devicePath] else { return [] }
                        let actions = queue.completed(id, outcome: outcome, now: self.clock.now)
                        state.queues[devicePath] = queue
                        return actions
                    }
                    self.run(next, devicePath: devicePath)
                }
            case .deliver(let id):
                state.withLock { $0.runners.removeValue(forKey: id) }?.deliver()
            case .fail(let id, let error):
                state.withLock { $0.runners.removeValue(forKey: id) }?.fail(error)
            }
        }
        if let devicePath { scheduleTick(devicePath) }
    }

    private func scheduleTick(_ devicePath: String) {
        let clock = self.clock
        state.withLock { state in
            state.timers[devicePath]?.cancel()
            guard let wake = state.queues[devicePath]?.nextWakeup else {
                state.timers[devicePath] = nil
                return
            }
            state.timers[devicePath] = Task { [weak self] in
                do { try await clock.sleep(until: wake) } catch { return }
                guard let self else { return }
                let actions = self.state.withLock { state -> [OperationQueue.Action] in
                    guard var queue = state.queues[devicePath] else { return [] }
                    let actions = queue.tick(now: clock.now)
                    state.queues[devicePath] = queue
                    return actions
                }
                self.run(actions, devicePath: devicePath)
            }
        }
    }
}
