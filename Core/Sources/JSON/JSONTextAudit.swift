/// A second, lexical pass over text that json-c has read, for what json-c's
/// strict mode lets through or cannot report precisely:
/// - numbers JSON does not allow (`-01`, `1.`, `00`), `NaN` and `Infinity`;
/// - integers outside `Int64` (json-c silently clamps them) and numbers too
///   large for a `Double` (json-c gives infinity);
/// - raw control characters in strings and whitespace JSON does not allow;
/// - object keys containing `\u0000` (json-c would cut the key short);
/// - a key an object repeats (json-c keeps the last silently), under
///   ``JSONParseOptions/DuplicateKeyPolicy/reject``;
/// - the opening bracket that first nests deeper than the limit.
///
/// It reads `text[0..<end]`. After a successful parse, `end` is where the
/// value ends; after a failed one it is where json-c stopped, so the last
/// token may be cut short (`endIsComplete == false`) and is then only
/// rejected if no continuation could make it valid. Problems are reported in
/// text order, so they come before json-c's own later error.
struct JSONTextAudit {
    let text: UnsafeBufferPointer<UInt8>
    let end: Int
    let endIsComplete: Bool
    let maxDepth: Int
    let largeIntegers: JSONParseOptions.LargeIntegerPolicy
    let duplicateKeys: JSONParseOptions.DuplicateKeyPolicy

    /// Throws the first problem; otherwise returns the offsets just past each
    /// integer outside `Int64` (found only under `.double`).
    func run() throws(JSONParseError) -> [Int] {
        var largeIntegerEnds: [Int] = []
        var depth = 0
        // The keys seen so far in each open object (nil for an open array).
        var keys: [Set<String>?] = []
        var index = 0
        while index < end {
            switch text[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
                UInt8(ascii: ","), UInt8(ascii: ":"):
                index += 1
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                guard depth <= maxDepth else {
                    throw JSONParseError(
                        .depthLimitExceeded(limit: maxDepth), at: index, in: text,
                        reason:
                            "arrays and objects nest deeper than the limit of \(maxDepth) (JSONParseOptions.maxDepth)")
                }
                keys.append(text[index] == UInt8(ascii: "{") ? [] : nil)
                index += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                _ = keys.popLast()
                index += 1
            case UInt8(ascii: "\""):
                index = try skipString(at: index, keys: &keys)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                index = try checkNumber(at: index, largeIntegerEnds: &largeIntegerEnds)
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                index = try checkWord(at: index, reportedAt: index)
            default:
                let found = JSONParseError.describeCharacter(at: index, in: text)
                throw JSONParseError(
                    .syntax, at: index, in: text,
                    reason: "unexpected \(found) (only space, tab, CR and LF may separate JSON tokens)")
            }
        }
        return largeIntegerEnds
    }

    // MARK: Strings

    private func skipString(at start: Int, keys: inout [Set<String>?]) throws(JSONParseError) -> Int {
        var nulEscape: Int?
        var index = start + 1
        while index < end {
            let byte = text[index]
            if byte == UInt8(ascii: "\"") {
                return try checkKey(opening: start, closing: index, nulEscape: nulEscape, keys: &keys)
            }
            if byte == UInt8(ascii: "\\") {
                if nulEscape == nil, isNulEscape(at: index) { nulEscape = index }
                index += 2
                continue
            }
            guard byte >= 0x20 else {
                let found = JSONParseError.describeCharacter(at: index, in: text)
                throw JSONParseError(
                    .syntax, at: index, in: text,
                    reason:
                        "control character \(found) in a string must be written as an escape (such as \\n or \\u0009)")
            }
            index += 1
        }
        return end
    }

    private func isNulEscape(at backslash: Int) -> Bool {
        guard backslash + 5 < end, text[backslash + 1] == UInt8(ascii: "u") else { return false }
        return text[(backslash + 2)...(backslash + 5)].allSatisfy { $0 == UInt8(ascii: "0") }
    }

    /// A string followed by `:` is an object key: rejected if it contains
    /// `\u0000`, or (under `.reject`) if its object already has it.
    private func checkKey(
        opening: Int, closing quote: Int, nulEscape: Int?, keys: inout [Set<String>?]
    ) throws(JSONParseError) -> Int {
        var next = quote + 1
        while next < end, [0x20, 0x09, 0x0A, 0x0D].contains(text[next]) { next += 1 }
        guard next < end, text[next] == UInt8(ascii: ":") else { return quote + 1 }
        if let nulEscape {
            throw JSONParseError(
                .unsupportedKey, at: nulEscape, in: text,
                reason: "object key contains \\u0000, which json-c cannot store (the key would be cut short)")
        }
        guard duplicateKeys == .reject, let scope = keys.indices.last, var seen = keys[scope] else { return quote + 1 }
        keys[scope] = nil  // the set is mutated alone, not copied
        let key = JSONStringDecoder.decode(text[(opening + 1)..<quote])
        let inserted = seen.insert(key).inserted
        keys[scope] = seen
        guard inserted else {
            let shown = JSON.string(key.count > 40 ? String(key.prefix(40)) + "…" : key).serialized()
            throw JSONParseError(
                .duplicateKey, at: opening, in: text,
                reason: "duplicate key \(shown) in an object (each key may appear once; JSONParseOptions.duplicateKeys)"
            )
        }
        return quote + 1
    }

    // MARK: Numbers and words

    private func checkNumber(at start: Int, largeIntegerEnds: inout [Int]) throws(JSONParseError) -> Int {
        var index = start
        while index < end, Self.isNumberByte(text[index]) { index += 1 }
        let token = text[start..<index]
        if token.count == 1, token.first == UInt8(ascii: "-"), index < end, Self.isLetter(text[index]) {
            return try checkWord(at: index, reportedAt: start)
        }
        let cutShort = index == end && !endIsComplete
        let spelling = String(decoding: UnsafeBufferPointer(rebasing: token), as: UTF8.self)
        switch JSONNumberShape(token) {
        case .incomplete where cutShort:
            return index
        case .incomplete(let why), .invalid(let why):
            throw JSONParseError(.syntax, at: start, in: text, reason: "invalid number '\(spelling)': \(why)")
        case .integer:
            guard !cutShort, token.count >= 19, Int64(spelling) == nil else { return index }
            guard largeIntegers == .reject else {
                largeIntegerEnds.append(index)
                return index
            }
            throw JSONParseError(
                .numberOutOfRange, at: start, in: text,
                reason: "integer \(spelling) is outside the range of Int64 (\(Int64.min)...\(Int64.max));"
                    + " JSONParseOptions.largeIntegers is .reject")
        case .real:
            guard !cutShort, let value = Double(spelling), !value.isFinite else { return index }
            throw JSONParseError(
                .numberOutOfRange, at: start, in: text,
                reason:
                    "number \(spelling) is too large for a Double (its magnitude is above \(Double.greatestFiniteMagnitude))"
            )
        }
    }

    private func checkWord(at start: Int, reportedAt position: Int) throws(JSONParseError) -> Int {
        var index = start
        while index < end, Self.isLetter(text[index]) { index += 1 }
        let word = String(decoding: UnsafeBufferPointer(rebasing: text[start..<index]), as: UTF8.self)
        let literals = ["true", "false", "null"]
        if position == start, literals.contains(word) { return index }
        if index == end, !endIsComplete, position == start, literals.contains(where: { $0.hasPrefix(word) }) {
            return index
        }
        let spelling = String(decoding: UnsafeBufferPointer(rebasing: text[position..<index]), as: UTF8.self)
        let reason =
            word == "NaN" || word == "Infinity"
            ? "'\(spelling)' is not JSON: JSON numbers have no NaN or Infinity"
            : "unexpected word '\(spelling)' (the JSON literals are true, false and null)"
        throw JSONParseError(.syntax, at: position, in: text, reason: reason)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default: false
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}

/// What a run of number characters is, by RFC 8259's grammar
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
enum JSONNumberShape {
    /// Valid, without fraction or exponent.
    case integer
    /// Valid, with a fraction or exponent.
    case real
    /// A valid beginning that needs more characters, and why.
    case incomplete(String)
    /// Invalid whatever follows, and why.
    case invalid(String)

    init(_ token: Slice<UnsafeBufferPointer<UInt8>>) {
        var index = token.startIndex
        func skipDigits() -> Int {
            let start = index
            while index < token.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(token[index]) { index += 1 }
            return index - start
        }
        func next(is characters: String) -> Bool {
            index < token.endIndex && characters.utf8.contains(token[index])
        }
        if next(is: "-") { index += 1 }
        if next(is: "0") {
            index += 1
            if next(is: "0123456789") {
                self = .invalid("leading zeros are not allowed")
                return
            }
        } else if skipDigits() == 0 {
            self =
                index == token.endIndex ? .incomplete("a digit must follow '-'") : .invalid("a digit must follow '-'")
            return
        }
        var real = false
        if next(is: ".") {
            index += 1
            real = true
            if skipDigits() == 0 {
                let why = "a '.' must be followed by digits"
                self = index == token.endIndex ? .incomplete(why) : .invalid(why)
                return
            }
        }
        if next(is: "eE") {
            index += 1
            real = true
            if next(is: "+-") { index += 1 }
            if skipDigits() == 0 {
                let why = "an exponent needs digits"
                self = index == token.endIndex ? .incomplete(why) : .invalid(why)
                return
            }
        }
        guard index == token.endIndex else {
            let found = Character(Unicode.Scalar(token[index]))
            self = .invalid("unexpected '\(found)' after the number")
            return
        }
        self = real ? .real : .integer
    }
}
