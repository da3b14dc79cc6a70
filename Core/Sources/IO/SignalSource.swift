internal import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Delivers signals through a signalfd read on an ``EventLoop``: no Swift code runs in a signal handler.
///
/// The signals must be blocked in every thread (``block(_:)`` on the main thread before any other thread starts,
/// which they inherit), so that they stay pending for the signalfd instead of running their default action.
public final class SignalSource: Sendable {
    private let fd: FileDescriptor
    private let loop: EventLoop
    private let registration: Mutex<EventLoop.Registration?>

    /// Blocks `signals` in the calling thread (and in the threads it starts later).
    public static func block(_ signals: [Int32]) {
        var mask = mask(signals)
        pthread_sigmask(SIG_BLOCK, &mask, nil)
    }

    private static func mask(_ signals: [Int32]) -> sigset_t {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        return mask
    }

    /// A signalfd for `signals` whose arrivals call `handler` (with the signal number) on `loop`.
    public init(
        signals: [Int32], loop: EventLoop = .shared, handler: @escaping @Sendable (Int32) -> Void
    ) throws(SystemError) {
        var mask = Self.mask(signals)
        let fd = FileDescriptor(
            rawValue: try systemCall("signalfd") { signalfd(-1, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) })
        self.fd = fd
        self.loop = loop
        do {
            registration = Mutex(
                try loop.register(fd, interest: .readable) { _ in
                    var info = signalfd_siginfo()
                    let size = MemoryLayout<signalfd_siginfo>.size
                    while withUnsafeMutableBytes(of: &info, { Glibc.read(fd.rawValue, $0.baseAddress, size) }) == size {
                        handler(Int32(info.ssi_signo))
                    }
                })
        } catch {
            fd.close()
            throw error
        }
    }

    /// Stops listening and closes the signalfd.
    public func cancel() {
        guard
            let registration = registration.withLock({ state in
                defer { state = nil }; return state
            })
        else { return }
        loop.deregister(registration)
        fd.close()
    }

    deinit { cancel() }
}
