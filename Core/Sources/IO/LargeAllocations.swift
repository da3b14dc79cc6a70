internal import CLinux

/// How glibc's malloc places large allocations, set once by a long-running process.
public enum LargeAllocations {
    /// Gives every allocation of at least `threshold` bytes (glibc's default, 128 KiB) a mapping of its own,
    /// returned to the system when it is freed, and keeps that threshold fixed.
    ///
    /// By default glibc raises the threshold to the size of each such mapping freed (up to 32 MiB), so once a
    /// large table has grown past a size or a large reply (a listing of 10,000 devices) has been freed, later
    /// ones of up to that size come from the heap instead. There, freed between live allocations, they leave holes
    /// the heap keeps: the agent's memory then follows the history of its tables and replies rather than what it
    /// holds (measured in docs/benchmarks.md). Returns whether glibc took the setting.
    @discardableResult
    public static func mapAlone(atLeast threshold: Int = 128 * 1024) -> Bool {
        clinux_set_mmap_threshold(Int32(clamping: threshold)) == 1
    }
}
