/// A small tracker of POSIX shell quoting, enough to tell whether a position is inside
/// single quotes (where flow's `${FLOW_EXPR_n}` substitution would not expand).
struct ShellQuoting {
    enum State {
        case normal
        case single
        case double
        /// `$'…'`: backslash escapes, closed by an unescaped `'`.
        case ansi
        case comment
    }

    var state = State.normal
    var escaped = false
    /// The previous character ended a word (so `#` starts a comment).
    var atWordStart = true
    var previous: Unicode.Scalar = " "

    var inSingleQuotes: Bool { state == .single || state == .ansi }

    mutating func feed(_ text: String) {
        for c in text.unicodeScalars { feed(c) }
    }

    /// An expression stands for a word part.
    mutating func feedWord() {
        atWordStart = false
        previous = "x"
    }

    mutating func feed(_ c: Unicode.Scalar) {
        defer { previous = c }
        if escaped { escaped = false; atWordStart = false; return }
        switch state {
        case .normal:
            switch c {
            case "\\": escaped = true
            case "'": state = previous == "$" ? .ansi : .single
            case "\"": state = .double
            case "#" where atWordStart: state = .comment
            default: break
            }
            atWordStart = c == " " || c == "\t" || c == "\n" || c == ";" || c == "&" || c == "|" || c == "(" || c == ")"
        case .single:
            if c == "'" { state = .normal }
        case .ansi:
            if c == "\\" { escaped = true } else if c == "'" { state = .normal }
        case .double:
            if c == "\\" { escaped = true } else if c == "\"" { state = .normal }
        case .comment:
            if c == "\n" { state = .normal; atWordStart = true }
        }
    }
}
