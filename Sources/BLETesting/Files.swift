import IO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory of the test's own under /tmp (`/tmp/<prefix>-XXXXXX`, mode 0700): tests that run in parallel
/// never share a path. Remove it with ``removeTree(_:)``.
public func temporaryDirectory(_ prefix: String = "bletest") throws(SystemError) -> String {
    brokenPipesIgnored
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard made != nil else {
        throw SystemError("mkdtemp", path: "/tmp/\(prefix)-XXXXXX", errno: .current)
    }
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Writes `text` to `path` (created or truncated, mode 0644) on the core's blocking pool.
public func writeText(_ text: String, to path: String) async throws(SystemError) {
    try await BlockingPool.shared.run { () throws(SystemError) in
        let file = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate], permissions: 0o644)
        defer { file.close() }
        try file.writeAll(Array(text.utf8))
    }
}

/// Removes `path` and everything below it (a test's temporary directory); errors are ignored.
public func removeTree(_ path: String) {
    var status = stat()
    guard lstat(path, &status) == 0 else { return }
    if status.st_mode & S_IFMT == S_IFDIR, let directory = opendir(path) {
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { removeTree("\(path)/\(name)") }
        }
        closedir(directory)
        rmdir(path)
    } else {
        unlink(path)
    }
}

/// A fresh directory of one test's own under /tmp, removed (with what is in it) by ``remove()``.
public struct TemporaryDirectory: Sendable {
    /// The directory.
    public let path: String

    /// Makes the directory (`/tmp/<prefix>-XXXXXX`); when that fails the test gets an issue and a path that does
    /// not exist, so what it does there fails too.
    public init(_ prefix: String = "bletest") {
        do {
            path = try temporaryDirectory(prefix)
        } catch {
            Issue.record("no temporary directory: \(error)")
            path = "/nonexistent/\(prefix)"
        }
    }

    /// Removes the directory and everything in it.
    public func remove() { removeTree(path) }
}
