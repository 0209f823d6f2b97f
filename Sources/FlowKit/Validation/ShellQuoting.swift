/// A small tracker of POSIX shell quoting, enough to tell whether a position is inside
/// single quotes, or in the body of a here-document whose delimiter is quoted (`<<'EOF'`,
/// `<<"EOF"`, `<<\EOF`): where flow's `${FLOW_EXPR_n}` substitution would not expand.
///
/// A command substitution (`$( … )` or `` `…` ``) starts a quoting context of its own,
/// also inside double quotes: in `"$( echo '…' )"` the inner `'…'` is single-quoted.
/// Parentheses inside one are counted; the unbalanced `)` of a `case` pattern is read as
/// its end. In the body of an unquoted here-document quotes are text, but a command
/// substitution there is parsed as a command (its end is the body's end at the latest).
///
/// A `<<` inside `$(( … ))` (a shift) is read as a here-document too: the rest of the
/// command then counts as its unquoted body, so nothing there is flagged, rightly or not.
struct ShellQuoting {
    enum State {
        case normal
        case single
        case double
        /// `$'…'`: backslash escapes, closed by an unescaped `'`.
        case ansi
        case comment
    }

    /// A here-document: its delimiter word (quotes removed), whether any of it was quoted
    /// (then the body is not expanded), and whether `<<-` strips the lines' leading tabs.
    struct HereDocument {
        var delimiter = ""
        var quoted = false
        var stripsTabs = false
    }

    /// An open command substitution: the quoting state around it (restored when it
    /// closes) and what closes it.
    struct Substitution {
        var outer: State
        /// A backtick substitution ends at the next unescaped backtick, whatever the quoting
        /// inside (the shell finds the end before it parses the inside).
        var backtick: Bool
        /// Plain `(` opened inside `$( … )` and not yet closed (subshells, `$(( … ))`).
        var parentheses = 0
    }

    /// Reading the delimiter after `<<`: the document so far, whether a character of the
    /// word came yet, and the quote or backslash in effect.
    private var delimiter: (document: HereDocument, started: Bool, quote: Unicode.Scalar?, escaped: Bool)?
    /// Documents whose bodies start after the current line, in order.
    private var pendingDocuments: [HereDocument] = []
    /// The document whose body is being read, and its current line.
    private(set) var body: HereDocument?
    private var line = ""

    var state = State.normal
    /// Command substitutions open around the current position, innermost last.
    private var substitutions: [Substitution] = []
    var escaped = false
    /// The previous character was escaped by a backslash (so `\$(` opens nothing).
    private var previousEscaped = false
    /// The previous character was the second `$` of `$$` (the pid), so `$$(` opens nothing.
    private var previousDollarSpent = false
    /// The previous character ended a word (so `#` starts a comment).
    var atWordStart = true
    var previous: Unicode.Scalar = " "

    /// A command substitution open in the body of an unquoted here-document (at most one):
    /// the body's text is not quoted, but the command inside `$( … )` or `` `…` `` is.
    private var bodyCommand: [ShellQuoting] = []
    /// In an unquoted here-document's body: a backslash is pending, and whether the
    /// previous character was escaped by one (so `\$(` opens nothing).
    private var bodyEscaped = false
    private var bodyPreviousEscaped = false
    /// This tracker reads a substitution in a here-document's body (see `bodyCommand`).
    private var inHereDocumentBody = false
    /// The shells read what follows differently: dash drops the backslash of `\"` inside
    /// backticks in a here-document's body, bash keeps it. Nothing is flagged until this
    /// substitution ends (never a false error, whichever shell `sh` is).
    private var undecided = false

    var inSingleQuotes: Bool {
        if body != nil { return bodyCommand.first?.inSingleQuotes ?? false }
        return !undecided && (state == .single || state == .ansi)
    }

    /// A backslash right before this position escapes a `$` here: the `${FLOW_EXPR_n}` an
    /// expression becomes would stay text. Inside backticks the shell first drops the
    /// backslash of `\$` (a pending `backtickBackslash`), so what counts is the command
    /// left: `\\\$` there leaves `\$`. Not in a quoted here-document (said as such), nor
    /// where shells disagree.
    var escapesExpression: Bool {
        if undecided || delimiter != nil { return false }
        if let body {
            if let command = bodyCommand.first { return command.escapesExpression }
            return !body.quoted && bodyEscaped
        }
        return escaped && (state == .normal || state == .double)
    }

    /// A `$` right before this position would start an expansion (unescaped, not the second
    /// `$` of `$$`, where quoting lets it expand): the `${FLOW_EXPR_n}` an expression becomes
    /// would then read as `$$` (the pid) and the text `{FLOW_EXPR_n}`, not as the value.
    var dollarBeforeExpression: Bool {
        if undecided || delimiter != nil { return false }
        if let body {
            if let command = bodyCommand.first { return command.dollarBeforeExpression }
            return !body.quoted && !bodyEscaped && previous == "$" && !bodyPreviousEscaped && !previousDollarSpent
        }
        guard state == .normal || state == .double, !escaped, !backtickBackslash else { return false }
        return previous == "$" && !previousEscaped && !previousDollarSpent
    }

    /// Inside the body of a here-document with a quoted delimiter.
    var inQuotedHereDocument: Bool { body?.quoted == true }

    /// What keeps a `$` at this position literal (`inside single quotes`), for a message;
    /// nil where it would expand.
    var keepsDollarLiteral: String? {
        if inSingleQuotes { return "inside single quotes" }
        if escapesExpression { return "after a backslash" }
        if inQuotedHereDocument { return "in a here-document with a quoted delimiter" }
        return nil
    }

    mutating func feed(_ text: String) {
        for c in text.unicodeScalars { feed(c) }
    }

    /// An expression stands for a word part.
    mutating func feedWord() {
        // A pending backslash (`\${{ … }}`) escapes the `$` of `${FLOW_EXPR_n}` (or, in
        // backticks, is dropped before it): it must not pair with the character after the
        // expression, which would then be taken as escaped (a closing backtick or a quote).
        escaped = false
        backtickBackslash = false
        bodyEscaped = false
        if delimiter != nil {
            delimiter!.started = true
            delimiter!.document.delimiter += "\u{0}"
            return
        }
        if body != nil {
            line += "\u{0}"  // a line with an expression is no delimiter line
            if !bodyCommand.isEmpty { bodyCommand[0].feedWord() }
            return
        }
        atWordStart = false
        previous = "x"
    }

    /// Inside `` `…` ``, a backslash whose pair is not read yet (see `feed`).
    private var backtickBackslash = false

    /// Reads one character. Inside a backtick substitution the shell first takes the
    /// command out, dropping the backslash of `\$`, `` \` ``, `\\` (and of `\"` when the
    /// backticks are inside double quotes), then parses what is left as a command: so in
    /// `"`echo \"'…'\"`"` the inner `'…'` is inside double quotes, and expands.
    mutating func feed(_ c: Unicode.Scalar) {
        guard delimiter == nil, body == nil, substitutions.contains(where: \.backtick) else { return scan(c) }
        if backtickBackslash {
            backtickBackslash = false
            let inDoubleQuotes = substitutions.last(where: \.backtick)?.outer == .double
            if c == "\"", inHereDocumentBody, substitutions.first?.backtick == true { undecided = true }
            if c == "$" || c == "\\" || (c == "\"" && inDoubleQuotes) {
                scan(c)  // the backslash is gone (of `\\`, one is left, for the command)
            } else if c == "`" {
                // A nested substitution: not followed (rare today); its text reads as words.
                previous = c
                previousEscaped = false
                atWordStart = false
            } else {
                scan("\\")
                scan(c)
            }
        } else if c == "\\" {
            backtickBackslash = true
        } else {
            scan(c)
        }
    }

    /// Reads one character of the command as the shell parses it.
    private mutating func scan(_ c: Unicode.Scalar) {
        // In a here-document's body, escapes are tracked by `bodyPreviousEscaped`.
        let dollar = previous == "$" && !previousEscaped && !bodyPreviousEscaped && !previousDollarSpent
        previousEscaped = false
        // `$$` expands to the pid: a `$` after it starts a new expansion, a `(` does not.
        previousDollarSpent = c == "$" && dollar
        defer { previous = c }
        if delimiter != nil, readDelimiter(c) { return }
        if let document = body {
            if !document.quoted { scanBody(c, afterDollar: dollar) }
            if c == "\n" {
                let text = document.stripsTabs ? String(line.drop { $0 == "\t" }) : line
                if text == document.delimiter {
                    body = pendingDocuments.isEmpty ? nil : pendingDocuments.removeFirst()
                    // The shell reads the body by lines first: its end ends what it holds.
                    bodyCommand = []
                    bodyEscaped = false
                    bodyPreviousEscaped = false
                }
                line = ""
            } else {
                line.unicodeScalars.append(c)
            }
            return
        }
        if escaped { escaped = false; previousEscaped = true; atWordStart = false; return }
        if c == "`", let last = substitutions.last, last.backtick {
            state = substitutions.removeLast().outer
            atWordStart = false
            return
        }
        switch state {
        case .normal:
            switch c {
            case "(" where dollar:
                substitutions.append(Substitution(outer: .normal, backtick: false))
            case "(" where !substitutions.isEmpty && !substitutions[substitutions.count - 1].backtick:
                substitutions[substitutions.count - 1].parentheses += 1
            case ")" where !substitutions.isEmpty && !substitutions[substitutions.count - 1].backtick:
                if substitutions[substitutions.count - 1].parentheses > 0 {
                    substitutions[substitutions.count - 1].parentheses -= 1
                } else {
                    state = substitutions.removeLast().outer
                }
            case "`":
                substitutions.append(Substitution(outer: .normal, backtick: true))
            case "<" where previous == "<":
                // `<<`: a here-document's delimiter follows (`<<<`, a here-string, is
                // told apart at the next character).
                delimiter = (HereDocument(), false, nil, false)
            case "\n" where !pendingDocuments.isEmpty:
                body = pendingDocuments.removeFirst()
                line = ""
            case "\\": escaped = true
            case "'": state = dollar ? .ansi : .single
            case "\"": state = .double
            case "#" where atWordStart: state = .comment
            default: break
            }
            atWordStart = c == " " || c == "\t" || c == "\n" || c == ";" || c == "&" || c == "|" || c == "(" || c == ")" || c == "`"
        case .single:
            if c == "'" { state = .normal }
        case .ansi:
            if c == "\\" { escaped = true } else if c == "'" { state = .normal }
        case .double:
            switch c {
            case "\\": escaped = true
            case "\"": state = .normal
            case "(" where dollar:
                substitutions.append(Substitution(outer: .double, backtick: false))
                state = .normal
                atWordStart = true
            case "`":
                substitutions.append(Substitution(outer: .double, backtick: true))
                state = .normal
                atWordStart = true
            default: break
            }
        case .comment:
            if c == "\n" {
                state = .normal
                atWordStart = true
                if !pendingDocuments.isEmpty {
                    body = pendingDocuments.removeFirst()
                    line = ""
                }
            }
        }
    }

    /// Reads one character of an unquoted here-document's body: text, in which `$( … )` and
    /// `` `…` `` are commands (parsed by a tracker of their own while they are open), and
    /// a backslash escapes `$`, `` ` `` and `\\`.
    /// `afterDollar`: the previous character is a `$` that can start an expansion.
    private mutating func scanBody(_ c: Unicode.Scalar, afterDollar: Bool) {
        if !bodyCommand.isEmpty {
            bodyCommand[0].feed(c)
            if bodyCommand[0].substitutions.isEmpty { bodyCommand = [] }  // it closed
            return
        }
        if bodyEscaped {
            bodyEscaped = false
            bodyPreviousEscaped = true
            return
        }
        let opensDollar = c == "(" && afterDollar
        bodyPreviousEscaped = false
        if c == "\\" {
            bodyEscaped = true
        } else if opensDollar || c == "`" {
            var command = ShellQuoting()
            command.inHereDocumentBody = true
            command.substitutions.append(Substitution(outer: .normal, backtick: c == "`"))
            bodyCommand = [command]
        }
    }

    /// Reads one character of a here-document's delimiter; false when `c` ends the word
    /// and is for the caller to read too.
    private mutating func readDelimiter(_ c: Unicode.Scalar) -> Bool {
        guard var d = delimiter else { return false }
        defer { if delimiter != nil { delimiter = d } }
        if !d.started {
            switch c {
            case "<" where d.document.delimiter.isEmpty && previous == "<":
                delimiter = nil  // `<<<`: a here-string
                return true
            case "-" where previous == "<":
                d.document.stripsTabs = true
                return true
            case " ", "\t":
                return true
            default:
                d.started = true
            }
        }
        if let quote = d.quote {
            if c == quote { d.quote = nil } else { d.document.delimiter.unicodeScalars.append(c) }
            return true
        }
        if d.escaped {
            d.escaped = false
            d.document.delimiter.unicodeScalars.append(c)
            return true
        }
        switch c {
        case "'", "\"":
            d.quote = c
            d.document.quoted = true
            return true
        case "\\":
            d.escaped = true
            d.document.quoted = true
            return true
        case " ", "\t", "\n", ";", "&", "|", "<", ">", "(", ")":
            if !d.document.delimiter.isEmpty { pendingDocuments.append(d.document) }
            delimiter = nil
            return false
        default:
            d.document.delimiter.unicodeScalars.append(c)
            return true
        }
    }
}
