import BLETesting
import Glibc
import PaymentTerminalProfile

/// A small deterministic generator (SplitMix64) for seeded tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Appends raw bytes to `path` (a torn record: what a crash mid-append leaves).
func appendRaw(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    guard fd >= 0 else { return }
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// Cuts `path` to `length` bytes.
func truncateFile(_ path: String, to length: Int) {
    _ = truncate(path, off_t(length))
}

/// The file's size.
func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : -1
}

func request(_ amount: UInt64, _ reference: String, using generator: inout SplitMix) -> PaymentRequest {
    // Values are in range by construction.
    try! PaymentRequest(
        transactionID: .random(using: &generator), amount: amount, currency: CurrencyCode("EUR"), reference: reference)
}
