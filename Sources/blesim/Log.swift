#if canImport(Glibc)
    import Glibc
#endif

/// blesim's diagnostics, on standard error (standard output carries only the ready line).
enum Log {
    static func error(_ message: String) { write("blesim: error: " + message) }
    static func info(_ message: String) { write("blesim: " + message) }

    /// The one line on standard output: blesim serves from now on.
    static func ready(_ line: String) { write(line, to: 1) }

    private static func write(_ line: String, to descriptor: Int32 = 2) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }
}
