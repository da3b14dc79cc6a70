import VirtualPaymentTerminal

/// Run-time changes to the air for fault injection (blesim's control interface).
extension SimWorld {
    /// Silences device `address` (it stops advertising and cannot be connected) or lets it
    /// advertise again. False when there is no such device.
    public mutating func silence(_ address: DeviceAddress, _ on: Bool) -> Bool {
        guard let index = deviceIndex(address) else { return false }
        if on { silenced.insert(index) } else { silenced.remove(index) }
        return true
    }

    /// Moves device `address` to `distance` metres along x from the origin, where it stays.
    /// False when there is no such device.
    public mutating func move(_ address: DeviceAddress, toDistance distance: Double) -> Bool {
        guard let index = deviceIndex(address), distance.isFinite, distance >= 0 else { return false }
        devices[index].radio.path = .fixed(Position(x: distance, y: 0))
        return true
    }

    /// Drops every link of device `address` (as a supervision timeout would).
    public mutating func dropLinks(_ address: DeviceAddress) -> [Batch] {
        links(of: address).flatMap { linkLost(adapter: $0.adapter, address: $0.address) }
    }
}

extension SimWorld {
    /// The transactions of the virtual payment terminal at `address` (as of the world's last
    /// advance); nil when no device there is a payment terminal.
    public func terminalTransactions(_ address: DeviceAddress) -> [TerminalTransaction]? {
        guard let index = deviceIndex(address) else { return nil }
        return terminals[index]?.transactions
    }
}
