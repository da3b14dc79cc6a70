import IO

/// Reads a number from the contents of a sensor file (hwmon, IIO, or any
/// file holding one number) and applies scale and offset. Pure: the bytes
/// come from ``SensorFileReader``.
public enum SensorFileParser {
    /// The number in `contents`: optional surrounding whitespace (sysfs ends
    /// attributes with a newline), an optional sign, digits, an optional
    /// fraction and exponent. Nothing else may be in the file.
    ///
    /// - Throws: ``SensorFileError/notANumber(_:)`` otherwise.
    public static func number(in contents: [UInt8]) throws(SensorFileError) -> Double {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let trimmed = contents.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        let text = String(decoding: trimmed, as: UTF8.self)
        guard !trimmed.isEmpty, trimmed.count <= 64, isDecimal(Array(trimmed)), let value = Double(text), value.isFinite
        else {
            throw .notANumber(String(decoding: contents.prefix(32), as: UTF8.self))
        }
        return value
    }

    /// `(raw + offset) * scale`, with the raw number (and, for IIO, the
    /// channel's own offset and scale) read from file contents, and the
    /// configured `offset` and `scale` of ``FileSource`` applied around them:
    /// `((raw + fileOffset) * fileScale + offset) * scale`.
    ///
    /// hwmon `temp1_input` `"23500\n"` with scale 0.001 gives 23.5 °C; IIO
    /// `in_temp_raw` `"1200"`, `in_temp_offset` `"-500"`, `in_temp_scale`
    /// `"30.0"` (milli °C) with scale 0.001 gives 21.0 °C.
    ///
    /// - Throws: ``SensorFileError/notANumber(_:)`` for any file that does
    ///   not hold one number.
    public static func value(
        raw: [UInt8], fileOffset: [UInt8]? = nil, fileScale: [UInt8]? = nil, source: FileSource
    ) throws(SensorFileError) -> Double {
        var value = try number(in: raw)
        if let fileOffset { value += try number(in: fileOffset) }
        if let fileScale { value *= try number(in: fileScale) }
        return (value + source.offset) * source.scale
    }

    /// Whether `bytes` is `[+-]digits[.digits][(e|E)[+-]digits]` (no hex,
    /// `inf` or `nan`, which `Double.init` would also take).
    private static func isDecimal(_ bytes: [UInt8]) -> Bool {
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            return index - start
        }
        if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
        var count = digits()
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            count += digits()
        }
        guard count > 0 else { return false }
        if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {
            index += 1
            if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == bytes.count
    }
}

/// Why a sensor file gave no value.
public enum SensorFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The contents (first 32 bytes shown) are not one number.
    case notANumber(String)
    /// Reading the file failed, or it is not a regular file.
    case system(SystemError)
    /// The file is longer than a sensor attribute can be.
    case tooLarge(path: String)

    /// One sentence.
    public var description: String {
        switch self {
        case .notANumber(let text): "the file does not hold a number: \"\(text)\""
        case .system(let error): error.description
        case .tooLarge(let path): "\(path) is longer than 4096 bytes; not a sensor attribute"
        }
    }
}
