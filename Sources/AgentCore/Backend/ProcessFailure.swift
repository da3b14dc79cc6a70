/// Why a child process could not be started or did not get ready.
public struct ProcessFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// One sentence.
    public let description: String

    init(_ description: String) { self.description = description }
}
