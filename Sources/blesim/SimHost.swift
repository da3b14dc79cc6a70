import GATT
import SimCore
import Synchronization

/// Owns the simulated world and runs it on the real clock: one lock around `SimWorld`, one task
/// that wakes at the world's next deadline (or when a request changed what the next deadline
/// is) and advances it. Every change becomes `BusSignal`s handed to `emit`, in order, with the
/// lock held (`emit` must not call back into the host).
final class SimHost: Sendable {
    private struct State {
        var world: SimWorld
        var wakeUp: CheckedContinuation<Void, Never>?
        var wakeRequested = false
        /// The instant the loop's pending timer fires at, while one is pending.
        var timerDue: ContinuousClock.Instant?
        var emit: @Sendable ([BusSignal]) -> Void = { _ in }
    }

    private let state: Mutex<State>
    private let origin = ContinuousClock.now
    /// Each adapter's advertisement reports as of the last advance, apart from the world's lock.
    private let reports: Mutex<[UInt64]>

    /// Refusals queued by Control1.FailRegistration, by kind (`application`, `advertisement`).
    private let registrationRefusals = Mutex<[String: (remaining: Int, error: BlueZError)]>([:])

    /// Ticks closer together than this are merged (bounds the wake-up rate under load).
    static let minimumTick = Duration.milliseconds(2)

    init(world: SimWorld) {
        state = Mutex(State(world: world))
        reports = Mutex(world.adapters.map(\.advertisementReports))
    }

    /// Makes the next `count` registrations of `kind` (`application`: GattManager1.RegisterApplication,
    /// `advertisement`: LEAdvertisingManager1.RegisterAdvertisement) answer `error`.
    func refuseRegistrations(_ kind: String, count: Int, error: BlueZError) {
        registrationRefusals.withLock { $0[kind] = (count, error) }
    }

    /// The refusal due for a registration of `kind` now, if any (counting it).
    func takeRegistrationRefusal(_ kind: String) -> BlueZError? {
        registrationRefusals.withLock { refusals in
            guard let (remaining, error) = refusals[kind] else { return nil }
            refusals[kind] = remaining > 1 ? (remaining - 1, error) : nil
            return error
        }
    }

    /// Where signals go from now on (set once the D-Bus objects exist).
    func setEmitter(_ emit: @escaping @Sendable ([BusSignal]) -> Void) {
        state.withLock { $0.emit = emit }
    }

    /// The simulation time now.
    var now: SimInstant {
        let elapsed = ContinuousClock.now - origin
        let (seconds, attoseconds) = elapsed.components
        return SimInstant(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Reads the world.
    func read<R>(_ body: (SimWorld) -> R) -> R {
        state.withLock { body($0.world) }
    }

    /// A client's request on adapter `index`: catches the air up to now, runs `operation`, emits
    /// the signals (all under the world's lock, so signals leave in the order things happened),
    /// and wakes the run loop. A change of the property `suppressing` names (on that object path)
    /// is not emitted: the object server announces a remote `Set` itself. DoesNotExist when there
    /// is no such adapter.
    func request<R: Sendable>(
        adapter index: Int, suppressing: (path: String, property: String)? = nil,
        _ operation: (inout SimAdapter) throws(BlueZError) -> (R, [AdapterEvent])
    ) throws(BlueZError) -> R {
        let (result, wake) = try state.withLock { (state) throws(BlueZError) in
            emitAdvance(&state)
            guard let (result, events) = try state.world.withAdapter(index, operation) else {
                throw BluetoothdError.doesNotExist
            }
            var signals = SimWorld.Batch(adapter: index, events: events).signals(in: state.world)
            if let suppressing { signals = signals.compactMap { Self.removing(suppressing, from: $0) } }
            if !signals.isEmpty { state.emit(signals) }
            return (result, Self.takeWakeUp(&state))
        }
        wake?.resume()
        return result
    }

    /// A request on the whole world (connections, GATT, faults): catches the air up to now, runs
    /// `operation` with the time, emits its batches in order, and wakes the run loop.
    func world<R: Sendable>(
        _ operation: (inout SimWorld, SimInstant) throws(BlueZError) -> (R, [SimWorld.Batch])
    ) throws(BlueZError) -> R {
        let (result, wake) = try state.withLock { (state) throws(BlueZError) in
            emitAdvance(&state)
            let (result, batches) = try operation(&state.world, now)
            let signals = batches.flatMap { $0.signals(in: state.world) }
            if !signals.isEmpty { state.emit(signals) }
            return (result, Self.takeWakeUp(&state))
        }
        wake?.resume()
        return result
    }

    /// Like `world(_:)` for an operation that cannot fail.
    func update(_ operation: (inout SimWorld, SimInstant) -> [SimWorld.Batch]) {
        let wake = state.withLock { state in
            emitAdvance(&state)
            let signals = operation(&state.world, now).flatMap { $0.signals(in: state.world) }
            if !signals.isEmpty { state.emit(signals) }
            return Self.takeWakeUp(&state)
        }
        wake?.resume()
    }

    /// A bus name left: its sessions end.
    func clientLeft(_ owner: String) {
        let wake = state.withLock { state in
            let batches =
                state.world.clientLeft(owner: owner) + state.world.clientLeftGATT(owner: owner)
                + state.world.peripheralOwnerLeft(owner)
            let signals = batches.flatMap { $0.signals(in: state.world) }
            if !signals.isEmpty { state.emit(signals) }
            return Self.takeWakeUp(&state)
        }
        wake?.resume()
    }

    private func emitAdvance(_ state: inout State) {
        let signals = state.world.advance(to: now).flatMap { $0.signals(in: state.world) }
        reports.withLock { $0 = state.world.adapters.map(\.advertisementReports) }
        if !signals.isEmpty { state.emit(signals) }
    }

    /// Each adapter's advertisement reports as of the last advance (`SimAdapter.advertisementReports`); never
    /// waits for the world's lock, so it answers while the host is saturated.
    var advertisementReports: [UInt64] { reports.withLock { $0 } }

    private static func removing(_ target: (path: String, property: String), from signal: BusSignal) -> BusSignal? {
        guard case .propertiesChanged(let path, let interface, let changed, let invalidated) = signal,
            path == target.path
        else { return signal }
        let kept = changed.filter { $0.name != target.property }
        guard !kept.isEmpty || !invalidated.isEmpty else { return nil }
        return .propertiesChanged(path: path, interface: interface, changed: kept, invalidated: invalidated)
    }

    private static func takeWakeUp(_ state: inout State) -> CheckedContinuation<Void, Never>? {
        guard let wake = state.wakeUp else {
            state.wakeRequested = true
            return nil
        }
        state.wakeUp = nil
        return wake
    }

    /// Runs the air until the task is cancelled.
    func run() async {
        while !Task.isCancelled {
            let deadline = state.withLock { $0.world.nextDeadline }
            await sleep(until: deadline)
            state.withLock { emitAdvance(&$0) }
        }
    }

    /// Sleeps until `deadline` (simulation time), or until a request wakes the loop; with no
    /// deadline, only a request wakes it.
    ///
    /// At most one timer is armed for a given instant or later: a request wakes the loop once per change (tens of
    /// thousands a second under a flood of notifications), and a cancelled `Task.sleep` keeps its timer in the
    /// runtime until its deadline, so a timer per wake-up piled up by the second and fired all at once later
    /// (stalling the simulator for a fraction of a second). A timer that is no longer the next one still fires and
    /// wakes the loop once, which then finds nothing due.
    private func sleep(until deadline: SimInstant?) async {
        if let deadline {
            let target = max(origin + .nanoseconds(deadline.nanoseconds), ContinuousClock.now + Self.minimumTick)
            let arm = state.withLock { state -> Bool in
                if let due = state.timerDue, due <= target { return false }
                state.timerDue = target
                return true
            }
            if arm {
                Task { [weak self] in
                    try? await Task.sleep(until: target, clock: .continuous)
                    self?.timerFired(at: target)
                }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.wakeRequested {
                    state.wakeRequested = false
                    return true
                }
                state.wakeUp = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// The timer armed for `instant` fired: the loop may arm another, and wakes.
    private func timerFired(at instant: ContinuousClock.Instant) {
        let wake = state.withLock { state in
            if state.timerDue == instant { state.timerDue = nil }
            return Self.takeWakeUp(&state)
        }
        wake?.resume()
    }
}
