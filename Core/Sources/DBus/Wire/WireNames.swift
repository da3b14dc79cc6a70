/// The format's rules for the names a message header carries, checked on the bytes before they become strings.
enum WireNames {
    private static let maximumLength = 255

    @inline(__always)
    private static func isLetterOrUnderscore(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_")
    }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// `/`, or `/`-separated non-empty elements of `[A-Za-z0-9_]` with no trailing `/`.
    static func isObjectPath(_ text: UnsafeRawBufferPointer) -> Bool { ObjectPath.isValid(bytes: text) }

    /// A method or signal name: `[A-Za-z_][A-Za-z0-9_]*`, at most 255 bytes.
    static func isMember(_ text: UnsafeRawBufferPointer) -> Bool {
        guard let first = text.first, text.count <= maximumLength, isLetterOrUnderscore(first) else { return false }
        return text.allSatisfy { isLetterOrUnderscore($0) || isDigit($0) }
    }

    /// An interface or error name: two or more `.`-separated elements, each a valid member name.
    static func isInterface(_ text: UnsafeRawBufferPointer) -> Bool {
        guard text.count <= maximumLength else { return false }
        return dottedElements(text, allowHyphen: false, allowLeadingDigit: false)
    }

    /// A unique (`:1.42`) or well-known (`org.bluez`) bus name.
    static func isBusName(_ text: UnsafeRawBufferPointer) -> Bool {
        guard text.count <= maximumLength, let first = text.first else { return false }
        if first == UInt8(ascii: ":") {
            return dottedElements(
                UnsafeRawBufferPointer(rebasing: text.dropFirst()), allowHyphen: true, allowLeadingDigit: true)
        }
        return dottedElements(text, allowHyphen: true, allowLeadingDigit: false)
    }

    private static func dottedElements(
        _ text: UnsafeRawBufferPointer, allowHyphen: Bool, allowLeadingDigit: Bool
    ) -> Bool {
        var elements = 1
        var elementLength = 0
        for byte in text {
            if byte == UInt8(ascii: ".") {
                guard elementLength > 0 else { return false }
                elements += 1
                elementLength = 0
                continue
            }
            let allowed =
                isLetterOrUnderscore(byte) || (allowHyphen && byte == UInt8(ascii: "-"))
                || (isDigit(byte) && (elementLength > 0 || allowLeadingDigit))
            guard allowed else { return false }
            elementLength += 1
        }
        return elements >= 2 && elementLength > 0
    }
}
