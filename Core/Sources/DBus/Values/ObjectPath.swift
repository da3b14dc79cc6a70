/// A validated D-Bus object path such as `/org/bluez/hci0/dev_00_11_22_33_44_55`.
///
/// A path is `/` or a sequence of `/element` parts, each element made of ASCII letters, digits and `_`, with no empty
/// element and no trailing slash. Building one from untrusted text throws ``DBusMarshalError/invalidObjectPath(_:)``.
public struct ObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The path text.
    public let rawValue: String

    /// Validates `text` as an object path.
    public init(_ text: String) throws(DBusMarshalError) {
        guard ObjectPath.isValid(text) else { throw .invalidObjectPath(text) }
        rawValue = text
    }

    /// Wraps text already validated (by libdbus, or by construction).
    init(trusted text: String) { rawValue = text }

    /// The root path `/`.
    public static let root = ObjectPath(trusted: "/")

    /// The path text.
    public var description: String { rawValue }

    /// Orders paths by their text.
    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether `text` is a valid object path.
    public static func isValid(_ text: String) -> Bool { isValid(bytes: text.utf8) }

    /// Whether `bytes` spell a valid object path (the one rule, for text and for bytes read from a message).
    static func isValid<Bytes: Collection<UInt8>>(bytes: Bytes) -> Bool {
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        var previousWasSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
            } else {
                guard byte.isPathCharacter else { return false }
                previousWasSlash = false
            }
        }
        return !previousWasSlash
    }

    /// The elements between slashes (`[]` for the root).
    public var elements: [Substring] {
        rawValue.split(separator: "/", omittingEmptySubsequences: true)
    }

    /// The path with `element` appended; throws if `element` is empty or has characters outside `[A-Za-z0-9_]`.
    public func appending(_ element: String) throws(DBusMarshalError) -> ObjectPath {
        try ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// The parent path, or `nil` for the root.
    public var parent: ObjectPath? {
        guard rawValue != "/" else { return nil }
        guard let slash = rawValue.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        if slash == rawValue.startIndex { return .root }
        return ObjectPath(trusted: String(rawValue[..<slash]))
    }

    /// Whether `self` is `other` or one of its ancestors.
    public func isAncestor(orSelfOf other: ObjectPath) -> Bool {
        if self == other || rawValue == "/" { return true }
        return other.rawValue.hasPrefix(rawValue)
            && other.rawValue.utf8.dropFirst(rawValue.utf8.count).first
                == UInt8(ascii: "/")
    }

    /// Whether `self` is a strict ancestor of `other`.
    public func isStrictAncestor(of other: ObjectPath) -> Bool { self != other && isAncestor(orSelfOf: other) }

    /// The first element of `descendant` below `self`, if `descendant` is strictly below `self`.
    func childElement(toward descendant: ObjectPath) -> Substring? {
        guard isStrictAncestor(of: descendant) else { return nil }
        let rest = descendant.rawValue.dropFirst(rawValue == "/" ? 1 : rawValue.count + 1)
        return rest.split(separator: "/", maxSplits: 1).first
    }
}

extension UInt8 {
    fileprivate var isPathCharacter: Bool {
        (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "z"))
            || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z"))
            || (self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9")) || self == UInt8(ascii: "_")
    }
}
