import SimCore

/// Serves org.bluez for `scenario` on the bus at `address` until SIGINT or SIGTERM.
enum BlueZServer {
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    static func serve(scenario: Scenario, address: String?) async throws {
        throw Unavailable(description: "the D-Bus layer is not merged yet")
    }
}
