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
    /// What the program itself lists when the script asks it, `PROGRAM --complete-values
    /// NAME CURRENT WORD…` (the words typed before the cursor): values that depend on what
    /// was typed before, such as the step names of the workflow file on the line. See
    /// `CommandLineRequest.completionValues`.
    case dynamic(String)
}
