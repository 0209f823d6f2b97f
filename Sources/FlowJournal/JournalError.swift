/// A journal problem with a message for people (which file, what went wrong, what to do).
public struct JournalError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
