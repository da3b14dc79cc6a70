/// One problem in a config file: where (a field path such as
/// `roles.central.plugin`, empty for the file as a whole) and what is wrong.
public struct ConfigIssue: Sendable, Hashable, CustomStringConvertible {
    /// The dotted field path; array elements as `control.allowedUids[2]`.
    public let path: String
    /// What is wrong, in one sentence.
    public let message: String

    /// An issue at `path`.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, or just the message for the file as a whole.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// A config that cannot be used: every problem found, in file order.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The config file's path as given.
    public let file: String
    /// Every problem, never empty.
    public let issues: [ConfigIssue]

    /// An error for `file` with `issues`.
    public init(file: String, issues: [ConfigIssue]) {
        self.file = file
        self.issues = issues
    }

    /// One line per issue: `roles.json: roles.central.plugin: expected a string`.
    public var description: String { issues.map { "\(file): \($0)" }.joined(separator: "\n") }
}
