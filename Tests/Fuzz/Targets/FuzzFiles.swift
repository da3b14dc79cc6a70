import Glibc

/// Corpus files on disk, for blefuzz's replayer and the corpus tests.
public enum FuzzFiles {
    /// The names in `directory` (without `.` and `..`), sorted, and whether
    /// each is a directory; empty when `directory` cannot be opened.
    public static func entries(in directory: String) -> [(name: String, isDirectory: Bool)] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var entries: [(name: String, isDirectory: Bool)] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { entries.append((name, entry.pointee.d_type == UInt8(DT_DIR))) }
        }
        return entries.sorted { $0.name < $1.name }
    }

    /// The paths of the files (not directories) in `directory`, sorted.
    public static func files(in directory: String) -> [String] {
        entries(in: directory).filter { !$0.isDirectory }.map { directory + "/" + $0.name }
    }

    /// The contents of the file at `path`, or the reason it cannot be read.
    public static func read(_ path: String) -> Result<[UInt8], FileError> {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return .failure(FileError(path: path, errno: errno)) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return .failure(FileError(path: path, errno: errno)) }
            guard count > 0 else { return .success(bytes) }
            bytes += buffer[..<count]
        }
    }

    /// Writes `bytes` to `path` (created or replaced).
    public static func write(_ bytes: [UInt8], to path: String) -> Result<Void, FileError> {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { return .failure(FileError(path: path, errno: errno)) }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return .failure(FileError(path: path, errno: errno)) }
            offset += count
        }
        return .success(())
    }

    /// A file that could not be read or written.
    public struct FileError: Error, CustomStringConvertible {
        /// The file.
        public let path: String
        /// The system's error number.
        public let errno: Int32

        /// `path: reason`.
        public var description: String { "\(path): \(String(cString: strerror(errno)))" }
    }
}
