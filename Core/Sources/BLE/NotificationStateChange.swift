/// A subscription's outcome, as Core Bluetooth's `didUpdateNotificationStateFor`: sent when
/// `setNotifyValue` turns a subscription on or off, and when the manager restores one after a
/// reconnect. A link going down sends nothing: the subscription stays wanted (``Peripheral/isNotifying(_:)``)
/// and its restore sends the next change.
public struct NotificationStateChange: Hashable, Sendable {
    /// The characteristic.
    public var characteristic: CharacteristicReference
    /// Whether BlueZ now notifies the manager for it.
    public var isNotifying: Bool
    /// Why turning it on or off failed, if it did.
    public var error: BLEError?

    /// A change.
    public init(characteristic: CharacteristicReference, isNotifying: Bool, error: BLEError? = nil) {
        self.characteristic = characteristic
        self.isNotifying = isNotifying
        self.error = error
    }
}
