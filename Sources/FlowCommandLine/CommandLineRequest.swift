/// What a command line asks for.
public enum CommandLineRequest: Sendable {
    /// Run a command with these arguments.
    case command(ParsedArguments)
    /// Print the help of the last command of this path (the root first).
    case help([CommandSpec])
    /// Print the version.
    case version(String)
    /// Print the completion script for this shell.
    case completionScript(String)
    /// A completion script asks for the values of `CompletionKind.dynamic(query)`: the word
    /// under the cursor so far (`current`) and what was typed before it, read as far as it
    /// goes (`typed`: the command and whatever options and arguments it recognizes).
    case completionValues(query: String, current: String, typed: ParsedArguments)
}
