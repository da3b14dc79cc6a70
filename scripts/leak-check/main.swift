// Runs the Swift Testing tests linked into this binary from a synchronous
// main: the main thread waits on a semaphore instead of calling
// dispatch_main(), which valgrind 3.19 cannot follow (it crashes when the
// next thread starts).
import Dispatch
import Glibc
import Testing

nonisolated(unsafe) var status: CInt = 1
let finished = DispatchSemaphore(value: 0)
Task.detached {
    status = await Testing.__swiftPMEntryPoint(passing: nil) as CInt
    finished.signal()
}
finished.wait()
exit(status)
