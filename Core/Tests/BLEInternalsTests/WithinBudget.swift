import Testing

@testable import BLE

// For tests whose values are all within a device's byte budget: each expects that nothing was refused.

extension DeviceProperties {
    init(_ properties: PropertyMap) {
        var refused = 0
        self.init(properties, refused: &refused)
        #expect(refused == 0)
    }

    mutating func apply(_ changed: PropertyMap, _ invalidated: [String]) -> [String] {
        var refused = 0
        defer { #expect(refused == 0) }
        return apply(changed, invalidated, refused: &refused)
    }
}

extension DeviceEntry {
    mutating func apply(_ changed: PropertyMap, _ invalidated: [String]) -> [String] {
        var refused = 0
        defer { #expect(refused == 0) }
        return apply(changed, invalidated, refused: &refused)
    }
}
