import Glibc

/// Reads the key file with its checks: a regular file, owned by the agent's
/// user or root, that neither group nor others may read or write (the
/// checks are made on the opened file, so it cannot be swapped between
/// check and read). Blocking: call it off Swift's cooperative pool.
enum BindKeyFileReader {
    static func read(_ path: String) throws(BindKeyFileError) -> BindKeyFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw .system(operation: "open", errno: errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .system(operation: "fstat", errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile }
        let owner = geteuid()
        guard status.st_uid == owner || status.st_uid == 0 else {
            throw .foreignOwner(uid: status.st_uid, expected: owner)
        }
        guard status.st_mode & 0o077 == 0 else { throw .tooOpen(mode: status.st_mode & 0o7777) }
        guard status.st_size <= BindKeyFile.maximumBytes else { throw .tooLarge }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(operation: "read", errno: errno)
            }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= BindKeyFile.maximumBytes else { throw .tooLarge }
        }
        return try BindKeyFile.parse(bytes)
    }
}
