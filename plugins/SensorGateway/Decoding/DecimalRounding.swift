/// Rounds `value` to `places` decimal places the way Python's `round(x, n)`
/// does (the exact binary value, ties to even), so that readings equal
/// what Home Assistant's `bthome-ble` shows to the last bit: 0.35 rounds to
/// 0.3, because the double nearest 0.35 lies below it.
func roundedToDecimalPlaces(_ value: Double, _ places: Int) -> Double {
    guard value.isFinite else { return value }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = value * scale
    let floor = scaled.rounded(.down)
    guard abs(floor) < 9e15 else { return value }
    // Is value above, below or on the midpoint (floor + 0.5) / scale? Compare
    // value * 2 * scale with 2 * floor + 1 exactly: the product's rounding
    // error comes from a fused multiply-add.
    let twice = 2 * scale
    let product = value * twice
    let error = (-product).addingProduct(value, twice)
    let midpoint = 2 * floor + 1
    let above: Bool
    if product != midpoint {
        above = product > midpoint
    } else if error != 0 {
        above = error > 0
    } else {
        above = floor.truncatingRemainder(dividingBy: 2) != 0
    }
    let result = (above ? floor + 1 : floor) / scale
    return result == 0 ? 0 : result
}
