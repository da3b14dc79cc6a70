import CJSONC

// The only file in the JSON module that calls json-c (0.16). Everything json-c
// allocates is owned here, by exactly one Swift value, and released once.
//
// Ownership rules, in one place:
// 1. OWNED: a json_object returned by json_tokener_parse_ex or by any
//    json_object_new_* function carries one reference that belongs to us.
//    A tree is released exactly once, by json_object_put on its root
//    (CJSONRoot.deinit); json-c then releases every child.
// 2. TRANSFERRED: json_object_array_add and json_object_object_add take over
//    the child's reference. After a successful call we never put the child;
//    only its new parent (ultimately the root) releases it.
// 3. BORROWED: children reached through json_object_array_get_idx and
//    json_object_iter_peek_value belong to their parent. They are valid while
//    the root lives and are never put (putting one would free it under its
//    parent and crash later).
// 4. Strings returned by json_object_get_string, json_object_iter_peek_name and
//    json_object_to_json_string_length belong to their json_object; they are
//    copied into Swift Strings before the root is released.
// 5. A json_tokener is owned by one CJSONTokener and freed once with
//    json_tokener_free.
// json-c represents the JSON null value as a NULL json_object pointer; every
// function used here accepts NULL (json_object_put(NULL) does nothing).
// Allocation failure inside json-c is treated like allocation failure in Swift:
// the process stops (`CJSON.allocationFailed`). It never depends on input.

/// Namespace for helpers shared by the json-c wrappers.
enum CJSON {
    /// Stops the process when json-c cannot allocate memory, as Swift itself does.
    static func allocationFailed(_ what: StaticString) -> Never {
        fatalError("json-c could not allocate memory (\(what))")
    }
}

/// The one owned reference to a json-c tree (rule 1). Noncopyable, so the
/// reference is put exactly once, when this value is destroyed.
struct CJSONRoot: ~Copyable {
    private let object: OpaquePointer?

    /// Takes over the reference the caller owns.
    fileprivate init(owning object: OpaquePointer?) { self.object = object }

    deinit { json_object_put(object) }

    /// A borrowed view of the root (rule 3); it must not escape `body`.
    func withNode<R, E: Error>(_ body: (CJSONNode) throws(E) -> R) throws(E) -> R {
        try body(CJSONNode(object: object))
    }
}

/// A borrowed json_object (rule 3): valid only while its root lives; never put.
struct CJSONNode {
    /// What a json-c value holds.
    enum Kind { case null, bool, int, double, string, array, object }

    fileprivate let object: OpaquePointer?

    var kind: Kind {
        switch json_object_get_type(object) {
        case json_type_boolean: .bool
        case json_type_int: .int
        case json_type_double: .double
        case json_type_string: .string
        case json_type_array: .array
        case json_type_object: .object
        default: .null
        }
    }

    var bool: Bool { json_object_get_boolean(object) != 0 }
    var int64: Int64 { json_object_get_int64(object) }
    var double: Double { json_object_get_double(object) }

    /// The string's bytes (which may include NUL) copied into Swift (rule 4).
    var string: String {
        guard let bytes = json_object_get_string(object) else { return "" }
        let count = Int(json_object_get_string_len(object))
        return bytes.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }

    var count: Int { Int(json_object_array_length(object)) }

    /// The element at `index` of an array, borrowed (rule 3).
    func element(at index: Int) -> CJSONNode {
        CJSONNode(object: json_object_array_get_idx(object, index))
    }

    /// Calls `body` with each member of an object in insertion order; names
    /// are copied (rule 4), values are borrowed (rule 3).
    func forEachMember<E: Error>(_ body: (String, CJSONNode) throws(E) -> Void) throws(E) {
        var member = json_object_iter_begin(object)
        var end = json_object_iter_end(object)
        while json_object_iter_equal(&member, &end) == 0 {
            let name = json_object_iter_peek_name(&member).map { String(cString: $0) } ?? ""
            try body(name, CJSONNode(object: json_object_iter_peek_value(&member)))
            json_object_iter_next(&member)
        }
    }
}

/// How json_tokener_get_error described a failed parse.
enum CJSONTokenerError {
    case depth, endOfData, unexpectedCharacter, literal, number, arraySeparator
    case objectKey, objectKeySeparator, objectValueSeparator, string, comment, utf8, size, other
}

/// A failed json-c parse: the error, json-c's own wording, and the byte
/// offset where json-c stopped.
struct CJSONTokenerFailure {
    let error: CJSONTokenerError
    let description: String
    let offset: Int
}

/// The outcome of one json-c parse.
enum CJSONParseOutcome: ~Copyable {
    /// A value and the offset of the first byte after it.
    case value(CJSONRoot, end: Int)
    case failure(CJSONTokenerFailure)
}

/// One json_tokener (rule 5), strict, with a nesting limit.
struct CJSONTokener: ~Copyable {
    private let tokener: UnsafeMutablePointer<json_tokener>

    /// `maxNesting` is json-c's depth: how many values may be open at once,
    /// counting the top-level value (so `[[1]]` needs 3).
    init(maxNesting: Int) {
        guard let tokener = json_tokener_new_ex(Int32(clamping: maxNesting)) else {
            CJSON.allocationFailed("json_tokener_new_ex")
        }
        json_tokener_set_flags(
            tokener, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS | JSON_TOKENER_VALIDATE_UTF8)
        self.tokener = tokener
    }

    deinit { json_tokener_free(tokener) }

    /// Parses one value from `text`, whose last byte must be a NUL terminator
    /// (json-c needs it to finish a number at the end of input) and whose
    /// count must fit in Int32. Trailing bytes are left for the caller.
    func parse(_ text: UnsafeBufferPointer<UInt8>) -> CJSONParseOutcome {
        let start = UnsafeRawPointer(text.baseAddress)?.assumingMemoryBound(to: CChar.self)
        let object = json_tokener_parse_ex(tokener, start, Int32(clamping: text.count))
        let root = CJSONRoot(owning: object)
        let error = json_tokener_get_error(tokener)
        let offset = json_tokener_get_parse_end(tokener)
        guard error == json_tokener_success else {
            let description = String(cString: json_tokener_error_desc(error))
            return .failure(.init(error: Self.map(error), description: description, offset: offset))
        }
        return .value(root, end: offset)
    }

    private static func map(_ error: json_tokener_error) -> CJSONTokenerError {
        switch error {
        case json_tokener_error_depth: .depth
        case json_tokener_continue, json_tokener_error_parse_eof: .endOfData
        case json_tokener_error_parse_unexpected: .unexpectedCharacter
        case json_tokener_error_parse_null, json_tokener_error_parse_boolean: .literal
        case json_tokener_error_parse_number: .number
        case json_tokener_error_parse_array: .arraySeparator
        case json_tokener_error_parse_object_key_name: .objectKey
        case json_tokener_error_parse_object_key_sep: .objectKeySeparator
        case json_tokener_error_parse_object_value_sep: .objectValueSeparator
        case json_tokener_error_parse_string: .string
        case json_tokener_error_parse_comment: .comment
        case json_tokener_error_parse_utf8_string: .utf8
        case json_tokener_error_size: .size
        default: .other
        }
    }
}

// MARK: - Building and serialising

extension CJSONRoot {
    /// Builds a json-c tree for `value` (rules 1 and 2).
    init(building value: JSON) {
        self.init(owning: Self.newObject(value))
    }

    /// Serialises the tree with json_object_to_json_string_ext flags; "/" is never escaped.
    func serialized(pretty: Bool) -> String {
        let flags =
            pretty
            ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE
            : JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE
        var length = 0
        // The text belongs to `object` (rule 4): copy it before the root goes.
        guard let text = json_object_to_json_string_length(object, flags, &length) else {
            CJSON.allocationFailed("json_object_to_json_string_length")
        }
        return text.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// Returns a new owned json_object (rule 1), or NULL for JSON null.
    private static func newObject(_ value: JSON) -> OpaquePointer? {
        switch value {
        case .null:
            return nil
        case .bool(let flag):
            return allocated(json_object_new_boolean(flag ? 1 : 0))
        case .int(let number):
            return allocated(json_object_new_int64(number))
        case .double(let number):
            // json-c would print NaN and Infinity, which are not JSON: use null.
            guard number.isFinite else { return nil }
            // Swift's description is the shortest text that reads back as the same
            // Double and keeps a ".0" or exponent, so 2.0 stays a double.
            return allocated(number.description.withCString { json_object_new_double_s(number, $0) })
        case .string(let text):
            return newString(text)
        case .array(let elements):
            let array = allocated(json_object_new_array_ext(Int32(clamping: elements.count)))
            for element in elements {
                let child = newObject(element)
                // Rule 2: the array now owns `child`.
                guard json_object_array_add(array, child) == 0 else {
                    json_object_put(child)
                    CJSON.allocationFailed("json_object_array_add")
                }
            }
            return array
        case .object(let members):
            let object = allocated(json_object_new_object())
            for (key, member) in members {
                let child = newObject(member)
                // json-c keys are C strings (copied by json-c); a NUL would cut the key short.
                let added = cKey(key).withCString { json_object_object_add(object, $0, child) }
                // Rule 2: the object now owns `child`.
                guard added == 0 else {
                    json_object_put(child)
                    CJSON.allocationFailed("json_object_object_add")
                }
            }
            return object
        }
    }

    private static func newString(_ text: String) -> OpaquePointer {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count < Int32.max else { CJSON.allocationFailed("string longer than 2 GiB") }
            guard let start = UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self) else {
                return allocated(json_object_new_string(""))
            }
            return allocated(json_object_new_string_len(start, Int32(bytes.count)))
        }
    }

    /// The key json-c will store: U+0000 (which a C string cannot hold) becomes U+FFFD.
    static func cKey(_ key: String) -> String {
        guard key.utf8.contains(0) else { return key }
        var scalars = String.UnicodeScalarView()
        for scalar in key.unicodeScalars { scalars.append(scalar == "\0" ? "\u{FFFD}" : scalar) }
        return String(scalars)
    }

    private static func allocated(_ object: OpaquePointer?) -> OpaquePointer {
        guard let object else { CJSON.allocationFailed("json_object_new") }
        return object
    }
}
