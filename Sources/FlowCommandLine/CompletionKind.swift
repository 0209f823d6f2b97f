/// What a shell should offer when completing a value.
public enum CompletionKind: Sendable, Equatable {
    /// Nothing in particular (the shell's default).
    case none
    /// File names, only those with these extensions when there are any.
    case file(extensions: [String])
    /// Directory names.
    case directory
    /// One of these words.
    case choices([String])
}
