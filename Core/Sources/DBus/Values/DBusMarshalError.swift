/// A value, a name or a message body that cannot be marshalled or does not have the expected shape.
///
/// Raised when building messages from bad input (an invalid object path, a string with a NUL byte, an array whose
/// elements do not match its element type) and when decoding a body whose signature is not the one the caller
/// expected. Peer input never crashes the process: it ends here.
public enum DBusMarshalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not a valid D-Bus type signature.
    case invalidSignature(String, reason: String)
    /// The text is not a valid D-Bus object path.
    case invalidObjectPath(String)
    /// The text is not a valid bus, interface, member or error name (`kind` says which).
    case invalidName(String, kind: String, reason: String)
    /// A value of one type was found where another was expected (D-Bus signatures).
    case typeMismatch(expected: String, actual: String)
    /// A body had a different number of arguments than expected.
    case argumentCount(expected: Int, actual: Int)
    /// A string to be sent contains a NUL byte, which D-Bus strings cannot carry.
    case stringContainsNUL
    /// Containers (arrays, structs, dict entries, variants) are nested deeper than D-Bus allows (64).
    case nestingTooDeep
    /// An array is longer than the D-Bus maximum of 64 MiB.
    case arrayTooLong(bytes: Int)
    /// A structure with no fields (D-Bus forbids empty structs).
    case emptyStructure
    /// A `UnixFD` that was already closed or taken was to be sent.
    case closedFileDescriptor
    /// The connection cannot pass Unix file descriptors (not a Unix socket, or the peer refused).
    case fileDescriptorsUnsupported
    /// libdbus could not allocate memory.
    case outOfMemory
    /// Bytes that are not a valid D-Bus message in wire form (``DBusMessage/init(wireBytes:)``), with libdbus's reason.
    case invalidMessage(reason: String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .invalidSignature(let text, let reason): "invalid D-Bus signature \"\(text)\": \(reason)"
        case .invalidObjectPath(let text): "invalid D-Bus object path \"\(text)\""
        case .invalidName(let text, let kind, let reason): "invalid D-Bus \(kind) name \"\(text)\": \(reason)"
        case .typeMismatch(let expected, let actual): "expected D-Bus type \"\(expected)\", found \"\(actual)\""
        case .argumentCount(let expected, let actual): "expected \(expected) argument(s), found \(actual)"
        case .stringContainsNUL: "D-Bus strings cannot contain NUL bytes"
        case .nestingTooDeep: "D-Bus containers nested too deeply"
        case .arrayTooLong(let bytes): "D-Bus array of \(bytes) bytes exceeds the 64 MiB limit"
        case .emptyStructure: "D-Bus structures must have at least one field"
        case .closedFileDescriptor: "the Unix file descriptor was already closed or taken"
        case .fileDescriptorsUnsupported: "this connection cannot pass Unix file descriptors"
        case .outOfMemory: "libdbus ran out of memory"
        case .invalidMessage(let reason): "not a valid D-Bus message: \(reason)"
        }
    }
}
