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
}
