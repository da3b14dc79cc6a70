/// One value a device reported: a sensor's number, a binary sensor's state,
/// an event (a button press), or a text.
public struct Reading: Sendable, Hashable {
    /// What sort of value it is (Home Assistant's entity platforms).
    public enum Kind: String, Sendable, Hashable, CaseIterable, Comparable {
        /// A measurement or a text: `temperature`, `humidity`, `text`.
        case sensor
        /// On/off: `door`, `motion`.
        case binary
        /// Something that happened: `button` `press`.
        case event

        /// sensor < binary < event.
        public static func < (lhs: Kind, rhs: Kind) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// The kind.
    public var kind: Kind
    /// The name, as Home Assistant's BTHome integration keys it
    /// (`temperature`, `temperature_2` for the second of one kind in a packet).
    public var name: String
    /// The value.
    public var value: ReadingValue
    /// The unit (`°C`, `%`, `hPa`, `dBm`), nil for unitless values.
    public var unit: String?

    /// A reading.
    public init(kind: Kind = .sensor, name: String, value: ReadingValue, unit: String? = nil) {
        self.kind = kind
        self.name = name
        self.value = value
        self.unit = unit
    }

    /// The key a device keeps its latest reading of this name under.
    public var key: ReadingKey { ReadingKey(kind: kind, name: name) }
}

/// A reading's identity within one device: its kind and name (a binary
/// `power` and a sensor `power` are different readings).
public struct ReadingKey: Sendable, Hashable, Comparable {
    /// The kind.
    public var kind: Reading.Kind
    /// The name.
    public var name: String

    /// A key.
    public init(kind: Reading.Kind, name: String) {
        self.kind = kind
        self.name = name
    }

    /// By kind, then name.
    public static func < (lhs: ReadingKey, rhs: ReadingKey) -> Bool {
        (lhs.kind, lhs.name) < (rhs.kind, rhs.name)
    }
}

/// A reading's value.
public enum ReadingValue: Sendable, Hashable {
    /// A number in the reading's unit.
    case number(Double)
    /// A binary sensor's state.
    case flag(Bool)
    /// A text (BTHome text, a raw object as hex, a beacon identifier, a URL).
    case text(String)
    /// An event: its type (`press`, `rotate_left`), with a dimmer's steps or
    /// a command's argument bytes (hex) when it has them.
    case event(type: String, steps: Int? = nil, arguments: String? = nil)
}
