extension JSON {
    /// Parses JSON text (RFC 8259) into a value.
    ///
    /// The text must hold exactly one value, optionally surrounded by JSON
    /// whitespace (space, tab, CR, LF). Errors give the line and column; see
    /// ``JSONParseError`` for every kind.
    public init(parsing text: String, options: JSONParseOptions = JSONParseOptions()) throws(JSONParseError) {
        self = try JSONParser(options: options).parse(text.utf8, knownValidUTF8: true)
    }

    /// Parses JSON text given as UTF-8 bytes (for example one line read from
    /// a socket). Invalid UTF-8 is rejected with its position.
    public init(
        parsing bytes: some Collection<UInt8>, options: JSONParseOptions = JSONParseOptions()
    )
        throws(JSONParseError)
    {
        self = try JSONParser(options: options).parse(bytes, knownValidUTF8: false)
    }
}

/// Runs the checks and json-c's tokener in order: size limit, byte order
/// mark, raw bytes, empty input, json-c, the lexical audit (which also finds
/// repeated keys), trailing data, conversion.
struct JSONParser {
    let options: JSONParseOptions

    func parse(_ bytes: some Collection<UInt8>, knownValidUTF8: Bool) throws(JSONParseError) -> JSON {
        let limit = options.effectiveMaxInputBytes
        // Copy at most one byte past the limit, plus json-c's NUL terminator.
        var buffer = Array(bytes.prefix(limit + 1))
        let size = buffer.count > limit ? bytes.count : buffer.count
        buffer.append(0)
        let result = buffer.withUnsafeBufferPointer { terminated in
            Result { () throws(JSONParseError) -> JSON in
                let text = UnsafeBufferPointer(rebasing: terminated.dropLast())
                guard size <= limit else {
                    throw JSONParseError(
                        .sizeLimitExceeded(size: size, limit: limit), at: limit, in: text,
                        reason: "input is \(size) bytes, more than the limit of \(limit) bytes"
                            + " (JSONParseOptions.maxInputBytes)")
                }
                if text.starts(with: [0xEF, 0xBB, 0xBF]) {
                    throw JSONParseError(
                        .byteOrderMark, at: 0, in: text,
                        reason: "the text starts with a UTF-8 byte order mark (U+FEFF), which JSON does not allow;"
                            + " save it as UTF-8 without a BOM")
                }
                if let problem = JSONInputCheck.firstProblem(in: text, validateUTF8: !knownValidUTF8) { throw problem }
                guard text.contains(where: { !Self.isWhitespace($0) }) else {
                    throw JSONParseError(
                        .emptyInput, at: text.count, in: text, reason: "empty input: expected a JSON value")
                }
                return try parseChecked(terminated)
            }
        }
        return try result.get()
    }

    /// Parses `terminated` (input plus a NUL) with json-c, after the raw checks.
    private func parseChecked(_ terminated: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSON {
        let text = UnsafeBufferPointer(rebasing: terminated.dropLast())
        let depth = options.effectiveMaxDepth
        // json-c counts the top-level value as one level; the audit enforces the exact limit.
        let tokener = CJSONTokener(maxNesting: depth + 1)
        switch tokener.parse(terminated) {
        case .failure(let failure):
            throw diagnose(failure, in: text)
        case .value(let root, let parseEnd):
            let end = min(parseEnd, text.count)  // never past the input, whatever json-c reports
            let audit = JSONTextAudit(
                text: text, end: end, endIsComplete: true, maxDepth: depth, largeIntegers: options.largeIntegers,
                duplicateKeys: options.duplicateKeys)
            let largeIntegerEnds = try audit.run()
            if let trailing = text[end...].firstIndex(where: { !Self.isWhitespace($0) }) {
                let found = JSONParseError.describeCharacter(at: trailing, in: text)
                throw JSONParseError(
                    .trailingData, at: trailing, in: text, reason: "unexpected \(found) after the JSON value")
            }
            guard largeIntegerEnds.isEmpty else {
                return try reparse(text[..<end], asDoublesAt: largeIntegerEnds)
            }
            return root.withNode(JSON.init(converting:))
        }
    }

    /// Under `.double`, reads the text again with ".0" after each integer
    /// outside `Int64`, so json-c reads them as the nearest `Double` instead
    /// of clamping them. The text was already accepted, so this parse succeeds.
    private func reparse(
        _ text: Slice<UnsafeBufferPointer<UInt8>>, asDoublesAt ends: [Int]
    ) throws(JSONParseError)
        -> JSON
    {
        var patched: [UInt8] = []
        patched.reserveCapacity(text.count + 2 * ends.count + 1)
        var start = text.startIndex
        for end in ends {
            patched += text[start..<end]
            patched += [UInt8(ascii: "."), UInt8(ascii: "0")]
            start = end
        }
        patched += text[start...]
        patched.append(0)
        let result = patched.withUnsafeBufferPointer { terminated in
            Result { () throws(JSONParseError) -> JSON in
                let tokener = CJSONTokener(maxNesting: options.effectiveMaxDepth + 1)
                switch tokener.parse(terminated) {
                case .failure(let failure):
                    throw diagnose(failure, in: UnsafeBufferPointer(rebasing: terminated.dropLast()))
                case .value(let root, end: _):
                    return root.withNode(JSON.init(converting:))
                }
            }
        }
        return try result.get()
    }

    /// The error for a failed json-c parse. A problem the audit finds before
    /// the place json-c stopped comes first.
    private func diagnose(_ failure: CJSONTokenerFailure, in text: UnsafeBufferPointer<UInt8>) -> JSONParseError {
        let offset = min(failure.offset, text.count)
        let audit = JSONTextAudit(
            text: text, end: offset, endIsComplete: false, maxDepth: options.effectiveMaxDepth,
            largeIntegers: options.largeIntegers, duplicateKeys: options.duplicateKeys)
        do {
            _ = try audit.run()
        } catch {
            return error
        }
        let jsonC = "(json-c: \(failure.description))"
        switch failure.error {
        case .depth:
            let limit = options.effectiveMaxDepth
            return JSONParseError(
                .depthLimitExceeded(limit: limit), at: offset, in: text,
                reason: "arrays and objects nest deeper than the limit of \(limit) (JSONParseOptions.maxDepth) \(jsonC)"
            )
        case .endOfData where offset == text.count:
            return JSONParseError(.unexpectedEnd, at: offset, in: text, reason: "unexpected end of input \(jsonC)")
        case .utf8:
            return JSONParseError(.invalidUTF8, at: offset, in: text, reason: "invalid UTF-8 \(jsonC)")
        case .size:
            let limit = options.effectiveMaxInputBytes
            return JSONParseError(
                .sizeLimitExceeded(size: text.count, limit: limit), at: offset, in: text,
                reason: "input too large for json-c \(jsonC)")
        default:
            let found = JSONParseError.describeCharacter(at: offset, in: text)
            return JSONParseError(.syntax, at: offset, in: text, reason: "unexpected \(found) \(jsonC)")
        }
    }

    /// JSON whitespace (RFC 8259): space, tab, LF, CR.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

extension JSON {
    /// Copies a borrowed json-c value into Swift.
    fileprivate init(converting node: CJSONNode) {
        switch node.kind {
        case .null: self = .null
        case .bool: self = .bool(node.bool)
        case .int: self = .int(node.int64)
        case .double: self = .double(node.double)
        case .string: self = .string(node.string)
        case .array: self = .array((0..<node.count).map { JSON(converting: node.element(at: $0)) })
        case .object:
            var object = JSONObject()
            node.forEachMember { key, value in object[key] = JSON(converting: value) }
            self = .object(object)
        }
    }
}
