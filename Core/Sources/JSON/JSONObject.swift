/// The members of a JSON object: unique keys, in order, with lookup by key.
///
/// Members are stored as an ordered array of key/value pairs, plus a
/// key-to-position index once there are more than
/// ``JSONObject/indexThreshold`` of them. The array keeps the order of the
/// text or of the code that built the object, so configuration files and
/// replies are written back in a readable, stable order; the index keeps
/// lookup by key O(1) for large objects, while a small object (a reply's row,
/// most requests) is looked up by a short scan and costs no hash table. Keys are unique, as in json-c: setting an existing key
/// replaces its value in place. Parsed text that repeats a key is refused
/// (``JSONParseOptions/duplicateKeys``); under `.lastWins` the member keeps
/// the position of the first occurrence and the value of the last.
///
/// Equality compares members in order, so `{"a":1,"b":2}` differs from
/// `{"b":2,"a":1}`: equal objects always serialise to the same text.
public struct JSONObject: Sendable, Hashable {
    /// A member: its key and value.
    public typealias Element = (key: String, value: JSON)

    private var members: [Element] = []
    /// Key → position, kept only while there are more than ``indexThreshold`` members.
    private var positions: [String: Int]?

    /// Objects with more members than this keep an index by key.
    static let indexThreshold = 8

    /// An empty object.
    public init() {}

    /// An object with `pairs` in order; a repeated key keeps its first
    /// position and its last value.
    public init<Pairs: Sequence>(_ pairs: Pairs) where Pairs.Element == (String, JSON) {
        members.reserveCapacity(pairs.underestimatedCount)
        for (key, value) in pairs { self[key] = value }
    }

    /// Makes room for `count` members, so adding up to that many allocates nothing more.
    public mutating func reserveCapacity(_ count: Int) {
        members.reserveCapacity(count)
    }

    /// The keys, in order.
    public var keys: [String] { members.map(\.key) }

    /// The values, in the order of their keys.
    public var values: [JSON] { members.map(\.value) }

    /// The value for `key`, or `nil` if there is none. Setting a value for a
    /// new key appends it; for an existing key replaces the value in place;
    /// setting `nil` removes the member.
    public subscript(key: String) -> JSON? {
        get { position(of: key).map { members[$0].value } }
        set {
            guard let newValue else {
                removeValue(forKey: key)
                return
            }
            if let position = position(of: key) {
                members[position].value = newValue
            } else {
                positions?[key] = members.count
                members.append((key, newValue))
                if positions == nil && members.count > Self.indexThreshold { reindex() }
            }
        }
    }

    /// Removes the member for `key` and returns its value, if it had one.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSON? {
        guard let position = position(of: key) else { return nil }
        let removed = members.remove(at: position).value
        if members.count > Self.indexThreshold { reindex() } else { positions = nil }
        return removed
    }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    private mutating func reindex() {
        var index: [String: Int] = [:]
        index.reserveCapacity(members.count)
        for (position, member) in members.enumerated() { index[member.key] = position }
        positions = index
    }

    /// Whether the objects have the same members in the same order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.elementsEqual(rhs.members) { $0.key == $1.key && $0.value == $1.value }
    }

    /// Hashes the members in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}

extension JSONObject: RandomAccessCollection {
    /// The position of the first member.
    public var startIndex: Int { members.startIndex }
    /// The position after the last member.
    public var endIndex: Int { members.endIndex }
    /// The member at `position`.
    public subscript(position: Int) -> Element { members[position] }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object with the literal's members in order; a repeated key keeps
    /// its first position and its last value.
    public init(dictionaryLiteral elements: (String, JSON)...) { self.init(elements) }
}

extension JSONObject: CustomStringConvertible {
    /// The object as compact JSON text.
    public var description: String { JSON.object(self).serialized() }
}
