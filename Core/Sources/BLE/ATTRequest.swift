import GATT
import Synchronization

/// A read or write from a central, answered once by the plugin, in the image
/// of `CBATTRequest`. Answering twice, or after the deadline (when the
/// manager already answered with an ATT error), does nothing and returns false.
public final class ATTRequest: Sendable {
    /// What the central sent.
    public let info: ATTRequestInfo
    private let answered = Mutex(false)
    private let reply: @Sendable (Result<[UInt8], ATTError>) -> Void

    init(info: ATTRequestInfo, reply: @escaping @Sendable (Result<[UInt8], ATTError>) -> Void) {
        self.info = info
        self.reply = reply
    }

    /// The central.
    public var central: PeripheralIdentifier { info.central }
    /// The characteristic.
    public var characteristic: LocalCharacteristic { info.characteristic }
    /// The offset into the value.
    public var offset: Int { info.offset }
    /// The written value (empty for a read).
    public var value: [UInt8] { info.value }
    /// Whether this is a read.
    public var isRead: Bool { info.write == nil }
    /// Whether this has been answered (by the plugin or by the deadline).
    public var isAnswered: Bool { answered.withLock { $0 } }

    /// Answers a read with `value` (already sliced at ``offset``), or a write
    /// with success (pass nothing).
    @discardableResult
    public func respond(with value: [UInt8] = []) -> Bool {
        answer(.success(value))
    }

    /// Answers with an ATT error.
    @discardableResult
    public func respond(withError error: ATTError) -> Bool {
        answer(.failure(error))
    }

    @discardableResult
    func answer(_ result: Result<[UInt8], ATTError>) -> Bool {
        let first = answered.withLock { done in
            defer { done = true }
            return !done
        }
        if first { reply(result) }
        return first
    }
}

/// A subscription change on the local GATT application.
public enum SubscriptionEvent: Hashable, Sendable {
    /// `central` subscribed to `characteristic`; its link has ATT MTU `mtu`.
    case subscribed(central: PeripheralIdentifier, characteristic: LocalCharacteristic, mtu: ATTMTU)
    /// `central` unsubscribed.
    case unsubscribed(central: PeripheralIdentifier, characteristic: LocalCharacteristic)
}
