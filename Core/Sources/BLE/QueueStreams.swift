/// Ends an ``AsyncQueue`` when the last stream or iterator holding it goes,
/// as an `AsyncStream` terminates when it is released.
final class QueueLifetime: Sendable {
    private let end: @Sendable () -> Void

    init(end: @escaping @Sendable () -> Void) {
        self.end = end
    }

    deinit { end() }
}

/// The discoveries of one scan (``CentralManager/scanForPeripherals(withServices:options:)``).
///
/// One value waits per peripheral at most: when the consumer falls behind,
/// a newer report of a peripheral whose discovery is still waiting replaces
/// it (the newest wins, in the older one's place in line) and the count of
/// reports it stands for, ``Discovery/reportCount``, grows. So a consumer that
/// stops reading under a flood holds memory for one discovery per peripheral
/// (at most ``capacity``; new peripherals beyond that are dropped and
/// counted), never for the time it stopped, and then sees every peripheral's
/// newest state. Ending the iteration (or releasing the stream, or
/// cancelling the consuming task) stops this scan. The stream ends by itself
/// when the manager leaves poweredOn; ``end`` says why it ended.
public struct DiscoveryStream: AsyncSequence, Sendable {
    /// Each element is one peripheral's newest discovery.
    public typealias Element = Discovery

    let queue: AsyncQueue<CoalescingBuffer<PeripheralIdentifier, Discovery>>
    let lifetime: QueueLifetime
    let ending: ScanEnding
    let modeCell: ScanModeCell

    /// Why the scan ended; nil while it runs. Set before the iteration sees its end.
    public var end: ScanEnd? { ending.value }

    /// How the scan runs now: active, passive through its advertisement monitor, or active as a
    /// fallback (with the reason) for a scan that asked for a monitor (``ScanOptions/monitor``).
    public var mode: ScanMode { modeCell.value }

    /// The mode now and each change after (a passive scan's monitor activated, refused or released).
    public func modeUpdates() -> AsyncStream<ScanMode> { modeCell.updates() }

    /// The most peripherals that can wait at once.
    public let capacity: Int

    /// What went through this scan's queue so far.
    public var counters: QueueCounters { queue.counters }

    /// An iterator over the discoveries.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: AsyncQueue<CoalescingBuffer<PeripheralIdentifier, Discovery>>
        let lifetime: QueueLifetime

        /// The next discovery, with its ``Discovery/reportCount``; nil once the scan ended.
        public mutating func next() async -> Discovery? {
            guard let (discovery, count) = await queue.next() else { return nil }
            var merged = discovery
            merged.reportCount = count
            return merged
        }
    }

    /// An iterator over the discoveries.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue, lifetime: lifetime) }
}

/// Notified and indicated values of one characteristic
/// (``Peripheral/notifications(for:)``), in order.
///
/// At most ``capacity`` values wait. Past half of that the manager asks the
/// backend to stop reading the characteristic's AcquireNotify socket until
/// the consumer has taken half of them (backpressure: the values wait in the
/// socket and in bluetoothd, nothing is dropped here); values that cannot be
/// held back (StartNotify sends them on the bus) drop the oldest waiting
/// value when the buffer is full, counted in ``counters``.
public struct NotificationStream: AsyncSequence, Sendable {
    /// Each element is one value.
    public typealias Element = [UInt8]

    let queue: AsyncQueue<FIFOBuffer<[UInt8]>>
    let lifetime: QueueLifetime

    /// The most values that can wait at once.
    public let capacity: Int

    /// What went through this stream's queue so far.
    public var counters: QueueCounters { queue.counters }

    /// An iterator over the values.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: AsyncQueue<FIFOBuffer<[UInt8]>>
        let lifetime: QueueLifetime

        /// The next value; nil once the stream ended.
        public mutating func next() async -> [UInt8]? { await queue.next() }
    }

    /// An iterator over the values.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue, lifetime: lifetime) }
}
