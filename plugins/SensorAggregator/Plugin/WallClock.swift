import Glibc

/// Unix time in seconds (CLOCK_REALTIME): ingest timestamps and the snapshot
/// are in Unix seconds, so the engine runs on the wall clock.
func unixNow() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}
