import CLinux
import Glibc

/// Delivers SIGHUP, SIGTERM and SIGINT through a signalfd read by the event
/// loop: no Swift code runs in a signal handler.
///
/// ``blockAgentSignals()`` must run on the main thread before any other
/// thread starts, so every thread inherits the blocked mask and the signals
/// stay pending for the signalfd.
public final class SignalSource: Sendable {
    /// The signals the agent handles.
    public static let handled: [Int32] = [SIGHUP, SIGTERM, SIGINT]

    private let fd: Int32
    private let loop: EventLoop

    /// Blocks the handled signals in the calling thread (and threads it starts later).
    public static func blockAgentSignals() {
        var mask = mask()
        pthread_sigmask(SIG_BLOCK, &mask, nil)
    }

    private static func mask() -> sigset_t {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in handled { sigaddset(&mask, signal) }
        return mask
    }

    /// A signalfd for the handled signals whose arrivals call `handler` on `loop`.
    public init(loop: EventLoop, handler: @escaping @Sendable (Int32) -> Void) throws(SystemError) {
        var mask = Self.mask()
        fd = signalfd(-1, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC))
        guard fd >= 0 else { throw .current("signalfd") }
        self.loop = loop
        let fd = self.fd
        loop.register(fd, events: Int16(POLLIN)) { _ in
            var info = signalfd_siginfo()
            while read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
                handler(Int32(info.ssi_signo))
            }
        }
    }

    deinit {
        loop.unregister(fd)
        close(fd)
    }
}
