/// A dictionary that remembers the order keys were first added, so encoding
/// it (service data, manufacturer data) is deterministic and follows the
/// input. Setting an existing key replaces its value in place; setting nil
/// removes it.
///
/// Equality is order-sensitive: two maps are equal when they hold the same
/// pairs in the same order.
///
/// The pairs are kept in one array: an advertisement's map holds a few
/// entries, and every discovered device keeps its own, so a map costs one
/// allocation (none when empty). Past ``indexThreshold`` pairs a key → position
/// index is kept beside them, so a large map (from a hostile peer) still finds
/// a key in constant time. Inlinable, so the BLE layer's code, which builds
/// and compares one per advertisement report, is specialised for its types.
public struct OrderedMap<Key: Hashable, Value> {
    @usableFromInline var pairs: [(key: Key, value: Value)]
    @usableFromInline var index: [Key: Int]?

    /// Maps with more pairs than this keep an index of their keys.
    @inlinable static var indexThreshold: Int { 16 }

    /// An empty map.
    @inlinable public init() {
        pairs = []
    }

    /// The pairs in order; a repeated key keeps its first position and its
    /// last value.
    @inlinable public init<S: Sequence>(_ pairs: S) where S.Element == (Key, Value) {
        self.init()
        for (key, value) in pairs { self[key] = value }
    }

    /// The value for `key`, or nil. Setting a new key appends it; setting an
    /// existing key replaces its value and keeps its position; setting nil
    /// removes the key.
    @inlinable public subscript(key: Key) -> Value? {
        get { position(of: key).map { pairs[$0].value } }
        set {
            switch (position(of: key), newValue) {
            case (let position?, let newValue?):
                pairs[position].value = newValue
            case (nil, let newValue?):
                pairs.append((key, newValue))
                if index != nil {
                    index?[key] = pairs.count - 1
                } else if pairs.count > Self.indexThreshold {
                    buildIndex()
                }
            case (let position?, nil):
                pairs.remove(at: position)
                if index != nil { buildIndex() }
            case (nil, nil):
                break
            }
        }
    }

    /// The keys, in the order they were first added.
    @inlinable public var keys: [Key] { pairs.map(\.key) }

    /// The values, in key order.
    @inlinable public var values: [Value] { pairs.map(\.value) }

    /// The number of pairs.
    @inlinable public var count: Int { pairs.count }

    /// Whether the map is empty.
    @inlinable public var isEmpty: Bool { pairs.isEmpty }

    @inlinable func position(of key: Key) -> Int? {
        if let index { return index[key] }
        return pairs.firstIndex { $0.key == key }
    }

    @inlinable mutating func buildIndex() {
        guard pairs.count > Self.indexThreshold else {
            index = nil
            return
        }
        var built: [Key: Int] = [:]
        built.reserveCapacity(pairs.count)
        for (position, pair) in pairs.enumerated() { built[pair.key] = position }
        index = built
    }
}

extension OrderedMap: Sequence {
    /// Iterates the pairs in order.
    @inlinable public func makeIterator() -> IndexingIterator<[(key: Key, value: Value)]> {
        pairs.makeIterator()
    }
}

extension OrderedMap: ExpressibleByDictionaryLiteral {
    /// The literal's pairs in order; a repeated key keeps its last value.
    @inlinable public init(dictionaryLiteral elements: (Key, Value)...) {
        self.init(elements)
    }
}

extension OrderedMap: Equatable where Value: Equatable {
    /// Same pairs in the same order.
    @inlinable public static func == (lhs: OrderedMap, rhs: OrderedMap) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.key == $1.key && $0.value == $1.value }
    }
}

extension OrderedMap: Hashable where Value: Hashable {
    /// Hashes the pairs in order.
    @inlinable public func hash(into hasher: inout Hasher) {
        hasher.combine(pairs.count)
        for pair in pairs {
            hasher.combine(pair.key)
            hasher.combine(pair.value)
        }
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
