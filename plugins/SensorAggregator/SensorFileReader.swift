import Glibc

/// The I/O around ``SensorFileParser``: reads a ``FileSource``'s files
/// (one `read` each, as sysfs attributes are meant to be read) and returns
/// the scaled value.
public struct SensorFileReader: Sendable {
    /// The largest file read (sysfs attributes are one page at most).
    public static let maximumBytes = 4096

    /// A reader.
    public init() {}

    /// The current value of `source`.
    ///
    /// - Throws: ``SensorFileError`` when a file cannot be read or does not
    ///   hold a number.
    public func read(_ source: FileSource) throws(SensorFileError) -> Double {
        let raw = try contents(of: source.path)
        let offset = try source.offsetPath.map { path throws(SensorFileError) in try contents(of: path) }
        let scale = try source.scalePath.map { path throws(SensorFileError) in try contents(of: path) }
        return try SensorFileParser.value(raw: raw, fileOffset: offset, fileScale: scale, source: source)
    }

    /// The bytes of the file at `path`.
    public func contents(of path: String) throws(SensorFileError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: Self.maximumBytes + 1)
        var total = 0
        while total < buffer.count {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, $0.count - total) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(operation: "read", path: path, errno: errno)
            }
            if count == 0 { break }
            total += count
        }
        guard total <= Self.maximumBytes else { throw .tooLarge(path: path) }
        return Array(buffer[..<total])
    }
}
