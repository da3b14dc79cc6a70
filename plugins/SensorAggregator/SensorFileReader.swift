import IO

/// The I/O around ``SensorFileParser``: reads a ``FileSource``'s files
/// (one whole read each, as sysfs attributes are meant to be read) on the
/// process's ``BlockingPool`` and returns the scaled value. Only regular
/// files are read: a FIFO, a device or a socket at a sensor path is refused
/// before anything could wait on it.
public struct SensorFileReader: Sendable {
    /// The largest file read (sysfs attributes are one page at most).
    public static let maximumBytes = 4096

    /// A reader.
    public init() {}

    /// The current value of `source`, its files read on the blocking pool.
    ///
    /// - Throws: ``SensorFileError`` when a file cannot be read, is not a
    ///   regular file, or does not hold a number.
    public func read(_ source: FileSource) async throws(SensorFileError) -> Double {
        let files = try await BlockingPool.shared.run { () throws(SensorFileError) in
            let raw = try contents(of: source.path)
            let offset = try source.offsetPath.map { path throws(SensorFileError) in try contents(of: path) }
            let scale = try source.scalePath.map { path throws(SensorFileError) in try contents(of: path) }
            return (raw, offset, scale)
        }
        return try SensorFileParser.value(raw: files.0, fileOffset: files.1, fileScale: files.2, source: source)
    }

    /// The bytes of the regular file at `path` (blocking: call it on a ``BlockingPool``).
    public func contents(of path: String) throws(SensorFileError) -> [UInt8] {
        do {
            return try RegularFile.read(path, limit: Self.maximumBytes)
        } catch  where error.errno == .fileTooLarge {
            throw .tooLarge(path: path)
        } catch {
            throw .system(error)
        }
    }
}
