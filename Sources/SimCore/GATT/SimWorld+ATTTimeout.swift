import GATT

/// An ATT request the peer never answers (an injected `timeout` fault), as bluetoothd 5.66 ends it.
extension SimWorld {
    /// What the client gets when its request times out. src/shared/att.c's `timeout_cb` fails
    /// the pending request with an Error Response that has no PDU; gatt-client.c's
    /// `process_error` reads that as `BT_ATT_ERROR_UNLIKELY` (0x0e), which src/gatt-client.c's
    /// `create_gatt_dbus_error` replies as `Failed "Operation failed with ATT error: 0x0e"`.
    public static let attTimeoutError = BluetoothdError.failed("Operation failed with ATT error: 0x0e")

    /// `operation` timed out (after `attTimeout` seconds): the client gets `attTimeoutError`,
    /// then the ATT bearer is shut down (att.c: "Directly terminate the connection as required
    /// by the ATT protocol"), so the link drops: ServicesResolved and Connected false,
    /// notification sessions end. The shell sends the reply before the batches' signals.
    public mutating func attTimedOut(_ operation: GATTOperation) -> (BlueZError, [Batch]) {
        let key = LinkKey(adapter: operation.adapter, address: operation.address)
        if var link = links[key] {
            switch operation.request {
            case .read: link.reads[operation.handle] = nil
            case .write: link.writes.remove(operation.handle)
            }
            links[key] = link
        }
        return (Self.attTimeoutError, linkLost(adapter: operation.adapter, address: operation.address))
    }
}
