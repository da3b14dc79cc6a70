/// Bytes from hex digits, spaces ignored (`"40 02 ca 09"`).
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8.filter { $0 != UInt8(ascii: " ") })
    precondition(digits.count % 2 == 0, "odd hex: \(hex)")
    return stride(from: 0, to: digits.count, by: 2).map {
        UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)!
    }
}
