/// GitHub Actions workflow commands (`::error file=…,title=…::message`): how values are
/// escaped so that a `%`, a line break or a `:` in them cannot end or forge a command.
public enum GitHubCommandEscaping {
    /// A command's message: GitHub's escapes for `%`, CR and LF; other control characters
    /// (a NUL would cut the command) are escaped as in the text format.
    public static func data(_ s: String) -> String {
        ControlEscaping.escaped(s.replacing("%", with: "%25"), except: ["\r", "\n"])
            .replacing("\r", with: "%0D").replacing("\n", with: "%0A")
    }

    /// A property value (`file=`, `title=`): also `:` and `,`, which end one.
    public static func property(_ s: String) -> String {
        data(s).replacing(":", with: "%3A").replacing(",", with: "%2C")
    }
}
