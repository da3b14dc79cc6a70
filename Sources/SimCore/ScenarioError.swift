/// Why a scenario file is not acceptable, and where: `path` names the field the way one would
/// write it in code, for example `devices[2].rssi.distance`.
public struct ScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The place of the problem, for example `devices[2].rssi.distance` (empty for the top).
    public let path: String
    /// What is wrong, for example `expected a number`.
    public let message: String

    /// An error at `path`.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `devices[2].rssi.distance: expected a number`.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
