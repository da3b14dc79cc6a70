import Glibc
import IO

/// Creates the listening control socket at a path with its final mode from
/// the first moment, and removes it again.
///
/// The socket is bound inside a fresh private directory (mkdtemp, mode 0700)
/// next to the final path, chmod'ed to the configured mode, put to listening,
/// and only then renamed onto the final path; no one can reach it before it
/// has its mode (and, with a group, its group: chown before chmod). An existing file at the path is replaced only if it is a
/// socket that nobody listens on (a dead agent's); a live agent's socket is
/// left alone and anything that is not a socket is never replaced.
struct SocketFile {
    let path: String
    let fd: Int32
    private let device: UInt64
    private let inode: UInt64

    /// Why the socket could not be created.
    enum Failure: Error, CustomStringConvertible {
        case inUse(String)
        case notASocket(String)
        case system(SystemError)

        var description: String {
            switch self {
            case .inUse(let path): "another agent is listening on \(path)"
            case .notASocket(let path): "\(path) exists and is not a socket; not replacing it"
            case .system(let error): "\(error)"
            }
        }
    }

    static func create(
        at path: String, mode: UInt32, group: UInt32? = nil, backlog: Int32 = 64
    ) throws(Failure)
        -> SocketFile
    {
        try checkExisting(path)
        let parent = FilePath.directory(of: path)
        do {
            try makeDirectories(parent)
        } catch {
            throw .system(error)
        }
        var template = Array("\(parent == "/" ? "" : parent)/.bleagent-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ buffer in buffer.baseAddress.flatMap(mkdtemp) }) != nil
        else {
            throw .system(.current("mkdtemp in \(parent)"))
        }
        let privateDirectory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { rmdir(privateDirectory) }
        let temporary = "\(privateDirectory)/socket"
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .system(.current("socket")) }
        do throws(SystemError) {
            let bound = try UnixSocket.withAddress(temporary) { bind(fd, $0, $1) }
            guard bound == 0 else { throw SystemError.current("bind \(temporary)") }
            if let group, chown(temporary, uid_t.max, gid_t(group)) != 0 {
                throw SystemError.current("chown \(temporary) to group \(group) (the agent's user must be a member)")
            }
            guard chmod(temporary, mode_t(mode)) == 0 else { throw SystemError.current("chmod \(temporary)") }
            guard listen(fd, backlog) == 0 else { throw SystemError.current("listen") }
            guard rename(temporary, path) == 0 else { throw SystemError.current("rename onto \(path)") }
        } catch {
            unlink(temporary)
            close(fd)
            throw .system(error)
        }
        var status = stat()
        stat(path, &status)
        return SocketFile(path: path, fd: fd, device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    private init(path: String, fd: Int32, device: UInt64, inode: UInt64) {
        self.path = path
        self.fd = fd
        self.device = device
        self.inode = inode
    }

    private static func checkExisting(_ path: String) throws(Failure) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path) }
        do {
            let probe = try UnixSocket.connect(to: path)
            probe.close()
        } catch {
            // ECONNREFUSED: nobody listens, a stale socket; rename replaces it.
            if error.errno == .wouldBlock { throw .inUse(path) }
            guard error.errno == .connectionRefused else { throw .system(error) }
            return
        }
        throw .inUse(path)
    }

    private static func makeDirectories(_ directory: String) throws(SystemError) {
        var status = stat()
        if stat(directory, &status) == 0 { return }
        try makeDirectories(FilePath.directory(of: directory))
        guard mkdir(directory, 0o755) == 0 || errno == EEXIST else { throw .current("mkdir \(directory)") }
    }

    /// Closes the socket and removes the path if it is still this socket.
    func remove() {
        var status = stat()
        if stat(path, &status) == 0, UInt64(status.st_dev) == device, UInt64(status.st_ino) == inode {
            unlink(path)
        }
        close(fd)
    }
}
