extension BluetoothUUID {
    /// Parses `text`, or returns nil when it is not a UUID (see
    /// ``init(parsing:)`` for the accepted forms and the reasons).
    public init?(_ text: String) {
        guard let uuid = try? BluetoothUUID(parsing: text) else { return nil }
        self = uuid
    }

    /// Parses only the canonical form ``uuidString`` writes (lowercase
    /// 8-4-4-4-12 hex digits, as BlueZ reports UUIDs), without allocating;
    /// nil for any other text, even another form of a UUID.
    public static func canonical(_ text: String) -> BluetoothUUID? {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        var offset = 0
        for byte in text.utf8 {
            defer { offset += 1 }
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(nibble) } else { low = low << 4 | UInt64(nibble) }
            digits += 1
            guard digits <= 32 else { return nil }
        }
        guard offset == 36 else { return nil }
        return BluetoothUUID(high: high, low: low)
    }

    /// Parses a UUID in any of the forms people and BlueZ write, in either
    /// case:
    /// - 4 hex digits, a 16-bit UUID: `180D`, `0x180d`;
    /// - 8 hex digits, a 32-bit UUID: `0000180D`, `0x12345678`;
    /// - 8-4-4-4-12 hex digits, a 128-bit UUID:
    ///   `0000180d-0000-1000-8000-00805f9b34fb`.
    ///
    /// No whitespace is accepted and the `0x` prefix is for the short forms only.
    ///
    /// - Throws: ``BluetoothUUID/ParseError`` naming the input and what is wrong.
    public init(parsing text: String) throws(BluetoothUUID.ParseError) {
        let characters = Array(text)
        guard !characters.isEmpty else { throw ParseError(input: text, reason: .empty) }
        let hasPrefix = characters.count >= 2 && characters[0] == "0" && (characters[1] == "x" || characters[1] == "X")
        let bodyStart = hasPrefix ? 2 : 0
        let body = characters[bodyStart...]

        if body.contains("-") {
            guard !hasPrefix else { throw ParseError(input: text, reason: .prefixOnFullUUID) }
            self = try Self.parseFull(body, text: text)
        } else {
            var value: UInt64 = 0
            for (offset, character) in zip(body.indices, body) {
                guard let digit = character.hexDigitValue, character.isASCII else {
                    throw ParseError(input: text, reason: .invalidCharacter(character, offset: offset))
                }
                value = value << 4 | UInt64(digit)
            }
            switch body.count {
            case 4: self.init(uuid16: UInt16(truncatingIfNeeded: value))
            case 8: self.init(uuid32: UInt32(truncatingIfNeeded: value))
            default: throw ParseError(input: text, reason: .wrongDigitCount(body.count))
            }
        }
    }

    private static func parseFull(_ body: ArraySlice<Character>, text: String) throws(ParseError) -> BluetoothUUID {
        let hyphenOffsets: Set<Int> = [8, 13, 18, 23]
        guard body.count == 36 else {
            throw ParseError(input: text, reason: .wrongDigitCount(body.filter { $0 != "-" }.count))
        }
        var digits: [UInt8] = []
        for (offset, character) in body.enumerated() {
            if hyphenOffsets.contains(offset) {
                guard character == "-" else { throw ParseError(input: text, reason: .missingHyphen(offset: offset)) }
            } else if character == "-" {
                throw ParseError(input: text, reason: .misplacedHyphen(offset: offset))
            } else if let digit = character.hexDigitValue, character.isASCII {
                digits.append(UInt8(digit))
            } else {
                throw ParseError(input: text, reason: .invalidCharacter(character, offset: offset))
            }
        }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for digit in digits[0..<16] { high = high << 4 | UInt64(digit) }
        for digit in digits[16..<32] { low = low << 4 | UInt64(digit) }
        return BluetoothUUID(high: high, low: low)
    }

    /// Why a string is not a Bluetooth UUID.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The rejected text, as given.
        public let input: String
        /// What is wrong with it.
        public let reason: Reason

        /// `input` rejected for `reason`.
        public init(input: String, reason: Reason) {
            self.input = input
            self.reason = reason
        }

        /// The ways a UUID string can be wrong. Offsets count characters from the
        /// start of ``input``.
        public enum Reason: Hashable, Sendable {
            /// The string is empty.
            case empty
            /// A character that is not a hex digit (or a hyphen where one belongs).
            case invalidCharacter(Character, offset: Int)
            /// The number of hex digits is not 4, 8 or 32.
            case wrongDigitCount(Int)
            /// A 128-bit UUID lacks the hyphen expected at `offset`.
            case missingHyphen(offset: Int)
            /// A hyphen where a hex digit belongs.
            case misplacedHyphen(offset: Int)
            /// `0x` before a 128-bit UUID.
            case prefixOnFullUUID
        }

        /// Quotes the input, says what is wrong and lists the accepted forms.
        public var description: String {
            let problem: String
            switch reason {
            case .empty: problem = "it is empty"
            case .invalidCharacter(let character, let offset):
                problem = "\"\(character)\" at offset \(offset) is not a hex digit"
            case .wrongDigitCount(let count): problem = "it has \(count) hex digits"
            case .missingHyphen(let offset): problem = "a hyphen is missing at offset \(offset)"
            case .misplacedHyphen(let offset): problem = "a hyphen at offset \(offset) is misplaced"
            case .prefixOnFullUUID: problem = "the 0x prefix is only for 16- and 32-bit UUIDs"
            }
            return "not a Bluetooth UUID: \"\(input)\": \(problem); expected 4 or 8 hex digits (optionally "
                + "0x-prefixed) or 8-4-4-4-12 hex digits"
        }
    }
}
