extension AdvertisingData {
    /// The AD structures this value encodes to, in the order BlueZ 5.66 and
    /// the kernel emit them: Flags first (added by the kernel), then as
    /// src/shared/ad.c `bt_ad_generate` orders its fields — service UUID lists
    /// (16-, 32-, then 128-bit), manufacturer data, service data, local name,
    /// appearance, other structures — and Tx Power last (appended by the
    /// kernel). Each UUID is written in its shortest form.
    ///
    /// - Throws: ``AdvertisingDataError/modelledTypeInOthers(_:)`` when
    ///   ``others`` holds a type that has a typed field.
    public func structures() throws(AdvertisingDataError) -> [AdvertisingStructure] {
        if let modelled = others.first(where: { $0.type.isModelled }) {
            throw .modelledTypeInOthers(modelled.type)
        }
        let name = localName.map { (bytes: Array($0.utf8), complete: isCompleteName) }
        return structures(name: name)
    }

    /// Encodes the advertising data within `limit`.
    ///
    /// With `shortenNameToFit`, a local name that does not fit is cut (at a
    /// character boundary, so it stays valid UTF-8) to the room left and sent
    /// as a Shortened Local Name (0x08), as BlueZ does; at least one character
    /// must fit.
    ///
    /// - Throws: ``AdvertisingDataError/tooLong(length:limit:fields:)`` naming
    ///   the size, the limit and each structure's size;
    ///   ``AdvertisingDataError/modelledTypeInOthers(_:)``.
    public func encode(
        limit: AdvertisingDataLimit = .legacy, shortenNameToFit: Bool = false
    ) throws(AdvertisingDataError) -> [UInt8] {
        let full = try structures()
        let length = full.reduce(0) { $0 + $1.encodedLength }
        if length <= limit.maximumLength { return try AdvertisingStructure.encodeAll(full) }

        if shortenNameToFit, let localName {
            let nameLength = 2 + localName.utf8.count
            let room = limit.maximumLength - (length - nameLength) - 2
            let shortened = Self.prefix(of: localName, fittingIn: room)
            if !shortened.isEmpty {
                return try AdvertisingStructure.encodeAll(structures(name: (Array(shortened.utf8), false)))
            }
        }
        let fields = full.map { AdvertisingDataError.FieldSize(type: $0.type, size: $0.encodedLength) }
        throw .tooLong(length: length, limit: limit, fields: fields)
    }

    private func structures(name: (bytes: [UInt8], complete: Bool)?) -> [AdvertisingStructure] {
        var list: [AdvertisingStructure] = []
        if let flags { list.append(AdvertisingStructure(type: .flags, data: [flags.rawValue])) }
        for width in BluetoothUUID.Width.allCases {
            let uuids = serviceUUIDs.filter { $0.shortestWidth == width }
            guard !uuids.isEmpty else { continue }
            list.append(
                AdvertisingStructure(
                    type: .serviceUUIDs(width, complete: serviceUUIDsAreComplete),
                    data: uuids.flatMap(\.littleEndianBytes)))
        }
        for (company, value) in manufacturerData {
            list.append(AdvertisingStructure(type: .manufacturerSpecificData, data: company.littleEndianBytes + value))
        }
        for (uuid, value) in serviceData {
            list.append(
                AdvertisingStructure(type: .serviceData(uuid.shortestWidth), data: uuid.littleEndianBytes + value))
        }
        if let name {
            let type: AdvertisingDataType = name.complete ? .completeLocalName : .shortenedLocalName
            list.append(AdvertisingStructure(type: type, data: name.bytes))
        }
        if let appearance { list.append(AdvertisingStructure(type: .appearance, data: appearance.littleEndianBytes)) }
        list += others
        if let txPower { list.append(AdvertisingStructure(type: .txPowerLevel, data: [UInt8(bitPattern: txPower)])) }
        return list
    }

    /// The longest prefix of whole characters of `name` whose UTF-8 takes at
    /// most `room` bytes.
    private static func prefix(of name: String, fittingIn room: Int) -> String {
        var prefix = ""
        var used = 0
        for character in name {
            used += character.utf8.count
            if used > room { break }
            prefix.append(character)
        }
        return prefix
    }
}
