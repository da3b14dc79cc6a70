import DBus
import GATT

/// The `options` dictionary bluetoothd passes to our ReadValue, WriteValue
/// (and AcquireWrite/AcquireNotify) calls.
///
/// What bluetoothd 5.66 really sends (src/gatt-database.c `append_options`):
/// `device` (always), `offset` (only when not zero), `link` ("LE" or
/// "BR/EDR"), `prepare-authorize` (only when true, for a prepared write the
/// application must authorize), and `mtu` (always). It never sends `type`,
/// although doc/gatt-api.txt lists it: a write command and a write request
/// look the same. Unknown keys are ignored; a known key of the wrong type is
/// a ``DBusError`` `InvalidArgs`.
public struct GATTRequestOptions: Hashable, Sendable {
    /// The central's Device1 path.
    public var device: ObjectPath?
    /// The value offset (0 when absent).
    public var offset: Int
    /// The link's ATT MTU.
    public var mtu: ATTMTU?
    /// "LE" or "BR/EDR".
    public var link: String?
    /// The write is a prepared write bluetoothd asks us to authorize (the
    /// value is not to be applied yet).
    public var prepareAuthorize: Bool
    /// `type` ("request", "command", "reliable"), should a later BlueZ send it.
    public var type: String?

    /// Options with the given fields.
    public init(
        device: ObjectPath? = nil, offset: Int = 0, mtu: ATTMTU? = nil, link: String? = nil,
        prepareAuthorize: Bool = false, type: String? = nil
    ) {
        self.device = device
        self.offset = offset
        self.mtu = mtu
        self.link = link
        self.prepareAuthorize = prepareAuthorize
        self.type = type
    }

    /// Parses an `a{sv}` options argument.
    public init(_ value: DBusValue) throws(DBusError) {
        self.init()
        guard let entries = value.dictionaryEntries else { throw DBusError(.invalidArgs, "options must be a{sv}") }
        for entry in entries {
            guard let key = entry.key.stringValue else { continue }
            let field = entry.value.unwrapped
            switch key {
            case "device":
                guard case .objectPath(let path) = field else { throw Self.bad(key) }
                device = path
            case "offset":
                guard case .uint16(let number) = field else { throw Self.bad(key) }
                offset = Int(number)
            case "mtu":
                guard case .uint16(let number) = field else { throw Self.bad(key) }
                mtu = ATTMTU(clamping: number)
            case "link":
                guard case .string(let text) = field else { throw Self.bad(key) }
                link = text
            case "prepare-authorize":
                guard case .boolean(let flag) = field else { throw Self.bad(key) }
                prepareAuthorize = flag
            case "type":
                guard case .string(let text) = field else { throw Self.bad(key) }
                type = text
            default: continue
            }
        }
    }

    private static func bad(_ key: String) -> DBusError { DBusError(.invalidArgs, "option \(key) has the wrong type") }
}
