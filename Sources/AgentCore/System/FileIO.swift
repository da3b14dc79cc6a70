#if canImport(Glibc)
    import Glibc
#endif

/// Whole-file reads without Foundation.
public enum FileIO {
    /// The bytes of the file at `path`, failing if it holds more than `limit`.
    public static func readAll(_ path: String, limit: Int) throws(SystemError) -> [UInt8] {
        let fd = try retryingEINTR("open \(path)") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = try retryingEINTR("read \(path)") {
                chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit { throw SystemError("read \(path): larger than \(limit) bytes", errno: EFBIG) }
        }
    }

    /// Replaces the file at `path` with `bytes` (created with `mode`).
    static func writeAll(_ path: String, _ bytes: [UInt8], mode: mode_t) throws(SystemError) {
        let fd = try retryingEINTR("open \(path)") { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }
        defer { close(fd) }
        var rest = bytes[...]
        while !rest.isEmpty {
            let count = try retryingEINTR("write \(path)") {
                rest.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            }
            rest = rest.dropFirst(count)
        }
    }
}

/// Path arithmetic for config paths (no normalisation beyond what is needed).
enum FilePath {
    /// The process's working directory ("/" if it cannot be read).
    static func currentDirectory() -> String {
        guard let pointer = getcwd(nil, 0) else { return "/" }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// `path` if absolute, else `path` under `directory`, without `./` segments.
    static func absolute(_ path: String, relativeTo directory: String) -> String {
        if path.hasPrefix("/") { return path }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        var rest = Substring(path)
        while rest.hasPrefix("./") { rest = rest.dropFirst(2) }
        if rest == "." { rest = "" }
        return rest.isEmpty ? (base.isEmpty ? "/" : base) : "\(base)/\(rest)"
    }

    /// The directory part of an absolute path (`/` for a file at the root).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = path[..<slash]
        return directory.isEmpty ? "/" : String(directory)
    }
}
