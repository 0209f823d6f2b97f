/// GitHub Actions workflow commands (`::error file=…,title=…::message`): how values are
/// escaped so that a `%`, a line break or a `:` in them cannot end or forge a command.
public enum GitHubCommandEscaping {
    /// A command's message: GitHub's escapes for `%`, CR and LF; other control characters
    /// (a NUL would cut the command) are escaped as in the text format.
    public static func data(_ s: String) -> String {
        escaped(s, property: false)
    }

    /// A property value (`file=`, `title=`): also `:` and `,`, which end one.
    public static func property(_ s: String) -> String {
        escaped(s, property: true)
    }

    /// Scalar by scalar: a `String`'s characters are grapheme clusters, and CR LF is one
    /// of them, equal to neither `"\r"` nor `"\n"`, so replacing characters let a CRLF
    /// through raw, ending the command and starting a line the runner reads as a new one.
    private static func escaped(_ s: String, property: Bool) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(s.unicodeScalars.count)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "%": out += "%25"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            case ":" where property: out += "%3A"
            case "," where property: out += "%2C"
            default: out += ControlEscaping.escaped(scalar)
            }
        }
        return out
    }
}
