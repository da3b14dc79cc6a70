internal import CLinux

extension FileDescriptor {
    /// A pipe with both ends close-on-exec.
    public static func pipe() throws(SystemError) -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        try systemCall("pipe2") { clinux_pipe_cloexec(&fds) }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }
}
