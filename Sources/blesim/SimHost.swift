import GATT
import SimCore
import Synchronization

/// Owns the simulated world and runs it on the real clock: one lock around `SimWorld`, one task
/// that wakes at the world's next deadline (or when a request changed what the next deadline
/// is) and advances it. Every change becomes `BusSignal`s handed to `emit`, in order.
final class SimHost: Sendable {
    private struct State {
        var world: SimWorld
        var wakeUp: CheckedContinuation<Void, Never>?
        var wakeRequested = false
    }

    private let state: Mutex<State>
    private let origin = ContinuousClock.now
    private let emit: @Sendable ([BusSignal]) -> Void

    /// Ticks closer together than this are merged (bounds the wake-up rate under load).
    static let minimumTick = Duration.milliseconds(2)

    init(world: SimWorld, emit: @escaping @Sendable ([BusSignal]) -> Void) {
        state = Mutex(State(world: world))
        self.emit = emit
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

    /// A client's request on adapter `index`: runs `operation`, returns its result and the
    /// signals it caused (for the caller to emit after its reply), and wakes the run loop.
    /// Throws DoesNotExist-like `BlueZError` when there is no such adapter.
    func request<R: Sendable>(
        adapter index: Int, _ operation: (inout SimAdapter) throws(BlueZError) -> (R, [AdapterEvent])
    ) throws(BlueZError) -> (R, [BusSignal]) {
        let (result, signals, wake) = try state.withLock { (state) throws(BlueZError) in
            let now = now
            let catchUp = state.world.advance(to: now).flatMap { $0.signals(in: state.world) }
            guard let (result, events) = try state.world.withAdapter(index, operation) else {
                throw BluetoothdError.doesNotExist
            }
            let signals = catchUp + SimWorld.Batch(adapter: index, events: events).signals(in: state.world)
            return (result, signals, Self.takeWakeUp(&state))
        }
        wake?.resume()
        return (result, signals)
    }

    /// A bus name left: its sessions end. Emits the signals.
    func clientLeft(_ owner: String) {
        let (signals, wake) = state.withLock { state in
            let batches = state.world.clientLeft(owner: owner)
            return (batches.flatMap { $0.signals(in: state.world) }, Self.takeWakeUp(&state))
        }
        wake?.resume()
        if !signals.isEmpty { emit(signals) }
    }

    /// Emits signals a request caused, after its reply went out.
    func publish(_ signals: [BusSignal]) {
        if !signals.isEmpty { emit(signals) }
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
            let signals = state.withLock { state in
                state.world.advance(to: now).flatMap { $0.signals(in: state.world) }
            }
            if !signals.isEmpty { emit(signals) }
        }
    }

    /// Sleeps until `deadline` (simulation time), or until a request wakes the loop; with no
    /// deadline, only a request wakes it.
    private func sleep(until deadline: SimInstant?) async {
        var timer: Task<Void, Never>? = nil
        if let deadline {
            let target = max(origin + .nanoseconds(deadline.nanoseconds), ContinuousClock.now + Self.minimumTick)
            timer = Task { [weak self] in
                guard (try? await Task.sleep(until: target, clock: .continuous)) != nil else { return }
                self?.wake()
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
        timer?.cancel()
    }

    /// Wakes the run loop (now, or as soon as it next waits).
    private func wake() {
        state.withLock { Self.takeWakeUp(&$0) }?.resume()
    }
}
