/// A device template's `repeat` (format: docs/blesim.md, "Load: repeat"): many devices from one.
extension Scenario {
    /// The copies of `template` that `field` (the `repeat` object) asks for: copy k (from 0)
    /// has the template's address plus k, `{n}` in its name replaced by k + 1, and, with
    /// `distance: [near, far]`, a fixed distance spread evenly from near to far.
    static func repeated(
        _ template: VirtualDevice, _ field: ScenarioField, namePath: String
    ) throws(ScenarioError)
        -> [VirtualDevice]
    {
        let keys = try field.object(allowing: ["count", "distance"])
        guard let countField = keys["count"] else {
            throw ScenarioError(path: field.child("count"), message: "missing")
        }
        let count = Int(try countField.integer(in: 1...100_000))
        var spread: (near: Double, far: Double)? = nil
        if let distance = keys["distance"] {
            let items = try distance.array()
            guard items.count == 2 else { throw distance.error("expected [near, far] in metres") }
            spread = (try items[0].number(in: 0...100_000), try items[1].number(in: 0...100_000))
        }
        let base = template.address.bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard base + UInt64(count - 1) <= 0xFFFF_FFFF_FFFF else {
            throw countField.error("the addresses would pass FF:FF:FF:FF:FF:FF")
        }
        var copies: [VirtualDevice] = []
        copies.reserveCapacity(count)
        for index in 0..<count {
            var copy = template
            let value = base + UInt64(index)
            copy.address = DeviceAddress(
                validBytes: (
                    UInt8(truncatingIfNeeded: value >> 40), UInt8(truncatingIfNeeded: value >> 32),
                    UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                    UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)
                ))
            if let name = template.advertisement.name, name.contains("{n}") {
                copy.advertisement.name = name.replacing("{n}", with: String(index + 1))
                if let problem = copy.advertisement.sizeProblem {
                    throw ScenarioError(path: namePath, message: "copy \(index + 1): \(problem)")
                }
            }
            if let spread {
                let share = count == 1 ? 0 : Double(index) / Double(count - 1)
                copy.radio.path = .fixed(Position(x: spread.near + (spread.far - spread.near) * share, y: 0))
            }
            copies.append(copy)
        }
        return copies
    }
}
