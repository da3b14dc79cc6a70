/// A dictionary that remembers the order keys were first added, so encoding
/// it (service data, manufacturer data) is deterministic and follows the
/// input. Setting an existing key replaces its value in place; setting nil
/// removes it.
///
/// Equality is order-sensitive: two maps are equal when they hold the same
/// pairs in the same order.
public struct OrderedMap<Key: Hashable, Value> {
    /// The keys, in the order they were first added.
    public private(set) var keys: [Key]
    private var storage: [Key: Value]

    /// An empty map.
    public init() {
        keys = []
        storage = [:]
    }

    /// The pairs in order; a repeated key keeps its first position and its
    /// last value.
    public init<S: Sequence>(_ pairs: S) where S.Element == (Key, Value) {
        self.init()
        for (key, value) in pairs { self[key] = value }
    }

    /// The value for `key`, or nil. Setting a new key appends it; setting an
    /// existing key replaces its value and keeps its position; setting nil
    /// removes the key.
    public subscript(key: Key) -> Value? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// The values, in key order.
    public var values: [Value] {
        keys.compactMap { storage[$0] }
    }

    /// The number of pairs.
    public var count: Int { keys.count }

    /// Whether the map is empty.
    public var isEmpty: Bool { keys.isEmpty }
}

extension OrderedMap: Sequence {
    /// Iterates the pairs in order.
    public func makeIterator() -> AnyIterator<(key: Key, value: Value)> {
        var index = 0
        return AnyIterator {
            while index < keys.count {
                defer { index += 1 }
                if let value = storage[keys[index]] { return (keys[index], value) }
            }
            return nil
        }
    }
}

extension OrderedMap: ExpressibleByDictionaryLiteral {
    /// The literal's pairs in order; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (Key, Value)...) {
        self.init(elements)
    }
}

extension OrderedMap: Equatable where Value: Equatable {
    /// Same pairs in the same order.
    public static func == (lhs: OrderedMap, rhs: OrderedMap) -> Bool {
        lhs.keys == rhs.keys && lhs.storage == rhs.storage
    }
}

extension OrderedMap: Hashable where Value: Hashable {
    /// Hashes the pairs in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(keys)
        for key in keys { hasher.combine(storage[key]) }
    }
}

extension OrderedMap: Sendable where Key: Sendable, Value: Sendable {}

extension OrderedMap: CustomStringConvertible {
    /// `[key: value, ...]` in order.
    public var description: String {
        guard !isEmpty else { return "[:]" }
        return "[" + map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
    }
}
