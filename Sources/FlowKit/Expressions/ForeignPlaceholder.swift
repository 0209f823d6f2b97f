/// Another tool's placeholder written in a string flow templates: go-task's `{{.VERSION}}`
/// (a Go template), just's `{{version}}`, Jinja's (Ansible's) `{{ version }}`, make's
/// `$(VERSION)`.
///
/// flow expands only `${{ … }}`, so such text reaches the command or message as written.
/// But `{{…}}` is also the syntax of tools a command runs (`docker inspect --format
/// '{{.State.Running}}'`, `kubectl -o go-template=…`, `helm`), and `$(…)` the shell's
/// command substitution, so the parser only finds the candidates (where their offsets can
/// be located) and the validator reports those whose name is one flow would substitute: a
/// declared var, or a param of the enclosing action.
public struct ForeignPlaceholder: Sendable, Equatable {
    /// Whose placeholder it is, by its form.
    public enum Syntax: Sendable, Equatable {
        /// `{{.NAME}}`: a Go template's field (go-task).
        case goTemplate
        /// `{{ name }}`: just's and Jinja's (Ansible's).
        case braces
        /// `$(NAME)`: make's.
        case make

        /// Whose syntax it is, for a message: `go-task's (Go template) syntax`.
        public var owner: String {
            switch self {
            case .goTemplate: "go-task's (Go template) syntax"
            case .braces: "just's and Jinja's (Ansible) syntax"
            case .make: "make's syntax"
            }
        }
    }

    /// The name inside the braces or parentheses, without go-task's leading dot.
    public var name: String
    /// The placeholder as written, braces included: `{{.VERSION}}`.
    public var written: String
    /// Its form.
    public var syntax: Syntax
    /// Whether it is in a shell command, where `$(NAME)` is command substitution: it runs
    /// a program called NAME rather than staying text.
    public var inShellCommand: Bool
    /// In a shell command, the quoting that keeps its `$` literal, so the shell prints the
    /// text rather than running a program (`inside single quotes`); nil where it expands.
    public var shellQuoting: String?
    /// The span of the whole placeholder, braces included.
    public var span: SourceSpan

    /// Whether it is a Go template's field (`{{.NAME}}`, go-task).
    public var dotted: Bool { syntax == .goTemplate }

    public init(name: String, written: String, syntax: Syntax, inShellCommand: Bool = false, shellQuoting: String? = nil,
                span: SourceSpan) {
        self.name = name
        self.written = written
        self.syntax = syntax
        self.inShellCommand = inShellCommand
        self.shellQuoting = shellQuoting
        self.span = span
    }

    /// The placeholders of `text` (a scalar's value; `locate` maps an offset in its
    /// scalars to the source), outside its `${{ … }}` expressions. `inShellCommand`: the
    /// text is a shell command.
    ///
    /// Only a single name (with an optional leading dot, and Go's and Jinja's `-` trim
    /// markers) counts: a path (`{{.State.Running}}`), a filter or a call is another
    /// tool's own template, not a flow variable written the wrong way. Runs of three or
    /// more braces are skipped: `{{{{` is just's escape for a literal `{{`, and
    /// `{{{name}}}` is Mustache's. make's `$(NAME)` is one name in parentheses (`$$(…)` is
    /// make's escape, and `$((…))` arithmetic); in a shell command only an upper-case one
    /// (`$(VERSION)`, make's convention), since `$(date)` there runs `date` on purpose and
    /// no program is named in capitals.
    public static func find(in text: String, inShellCommand: Bool = false, locate: (Int) -> SourceLocation) -> [ForeignPlaceholder] {
        let markers = text.templateMarkers
        guard markers.placeholders || markers.makeReferences else { return [] }
        let scalars = Array(text.unicodeScalars)
        let n = scalars.count
        var found: [ForeignPlaceholder] = []
        // Only worked out once a bare keyword is met (rare): see `isGoKeyword`.
        var opensGoBlock: Bool?
        // Whether a `$(NAME)` runs depends on the shell's quoting up to it (`'$(VERSION)'`
        // prints the text): read only for a command that has one, up to `quoted`.
        var quoting: ShellQuoting? = inShellCommand && markers.makeReferences ? ShellQuoting() : nil
        var quoted = 0
        func readQuoting(upTo end: Int) {
            while quoted < end {
                quoting?.feed(scalars[quoted])
                quoted += 1
            }
        }
        var i = 0
        while i < n {
            if scalars[i] == "$", i + 1 < n, scalars[i + 1] == "(", i == 0 || scalars[i - 1] != "$",
               let (end, name) = makeReference(in: scalars, from: i + 2),
               !inShellCommand || !name.unicodeScalars.contains(where: { ("a"..."z").contains($0) }) {
                readQuoting(upTo: i)
                found.append(ForeignPlaceholder(name: name, written: String(scalars: scalars[i..<end]), syntax: .make,
                                                inShellCommand: inShellCommand, shellQuoting: quoting?.keepsDollarLiteral,
                                                span: SourceSpan(start: locate(i), end: locate(end))))
                i = end
                continue
            }
            if scalars[i] == "$", i + 2 < n, scalars[i + 1] == "{", scalars[i + 2] == "{" {
                // flow's own expression: a `{{` in its string literals is not text. An
                // unterminated one is an error already, and the rest is not text either.
                guard let close = Template.closingBraces(in: scalars, from: i + 3) else { break }
                if quoting != nil {
                    readQuoting(upTo: i)
                    quoting!.feedWord()
                    quoted = close + 2
                }
                i = close + 2
                continue
            }
            guard scalars[i] == "{" else {
                i += 1
                continue
            }
            var run = 0
            while i + run < n, scalars[i + run] == "{" { run += 1 }
            if run == 2, let (end, name, dotted) = placeholder(in: scalars, from: i + 2) {
                if !dotted, goKeywords.contains(name) {
                    if opensGoBlock == nil { opensGoBlock = Self.opensGoBlock(scalars) }
                    if opensGoBlock! {
                        i = end
                        continue
                    }
                }
                found.append(ForeignPlaceholder(name: name, written: String(scalars: scalars[i..<end]),
                                                syntax: dotted ? .goTemplate : .braces, inShellCommand: inShellCommand,
                                                span: SourceSpan(start: locate(i), end: locate(end))))
                i = end
                continue
            }
            i += run
        }
        return found
    }

    /// The end (just past `}}`), name and form of a placeholder whose text starts at
    /// `start`, just after its `{{`; nil when the text is not one name.
    static func placeholder(in scalars: [Unicode.Scalar], from start: Int) -> (Int, String, Bool)? {
        let n = scalars.count
        var j = start
        func skipBlanks() { while j < n, scalars[j] == " " || scalars[j] == "\t" { j += 1 } }
        if j + 1 < n, scalars[j] == "-", scalars[j + 1] == " " || scalars[j + 1] == "\t" { j += 1 }
        skipBlanks()
        let dotted = j < n && scalars[j] == "."
        if dotted { j += 1 }
        let nameStart = j
        guard j < n, isNameStart(scalars[j]) else { return nil }
        while j < n, isNameStart(scalars[j]) || ("0"..."9").contains(scalars[j]) || scalars[j] == "-" { j += 1 }
        // A `-` right before `}}` is part of the name only without a blank before it; Go
        // and Jinja need one before their trim marker, so `{{ x -}}` is the name `x`.
        let name = String(scalars: scalars[nameStart..<j])
        skipBlanks()
        if j < n, scalars[j] == "-", j > nameStart, scalars[j - 1] == " " || scalars[j - 1] == "\t" { j += 1 }
        guard j + 1 < n, scalars[j] == "}", scalars[j + 1] == "}" else { return nil }
        // `{{ name }}}`: a Mustache triple or something else; not a plain placeholder.
        if j + 2 < n, scalars[j + 2] == "}" { return nil }
        return (j + 2, name, dotted)
    }

    /// The end (just past `)`) and name of make's `$(NAME)` whose name starts at `start`,
    /// just after its `$(`; nil when the parentheses do not hold exactly one make-style
    /// name (letters, digits, `_`), as `$(git describe)` or `$((1 + 2))` do not.
    static func makeReference(in scalars: [Unicode.Scalar], from start: Int) -> (Int, String)? {
        let n = scalars.count
        var j = start
        guard j < n, isNameStart(scalars[j]) else { return nil }
        while j < n, isNameStart(scalars[j]) || ("0"..."9").contains(scalars[j]) { j += 1 }
        guard j < n, scalars[j] == ")" else { return nil }
        return (j + 1, String(scalars: scalars[start..<j]))
    }

    /// Go template keywords that are a whole action by themselves: `{{end}}` closes the
    /// `{{range .Items}}` of a `docker --format` template, whatever vars the workflow has.
    static let goKeywords: Set<String> = ["end", "else", "break", "continue"]

    /// Whether the text has a Go template action that opens a block (`{{if …}}`,
    /// `{{- range …}}`, `{{with …}}`, `{{block …}}`, `{{define …}}`): then its bare
    /// `{{end}}`, `{{else}}`, `{{break}}` and `{{continue}}` are Go's keywords, not a var
    /// written the Jinja way (Jinja's blocks are `{% … %}`, never `{{ if … }}`).
    static func opensGoBlock(_ scalars: [Unicode.Scalar]) -> Bool {
        let n = scalars.count
        var i = 0
        while i + 1 < n {
            guard scalars[i] == "{", scalars[i + 1] == "{" else {
                i += 1
                continue
            }
            var j = i + 2
            if j < n, scalars[j] == "-" { j += 1 }
            while j < n, scalars[j] == " " || scalars[j] == "\t" { j += 1 }
            var word = ""
            while j < n, ("a"..."z").contains(scalars[j]) {
                word.unicodeScalars.append(scalars[j])
                j += 1
            }
            // The keyword and something after it: `{{ if }}` alone opens nothing.
            if ["if", "range", "with", "block", "define"].contains(word), j < n, scalars[j] == " " || scalars[j] == "\t" {
                while j < n, scalars[j] == " " || scalars[j] == "\t" { j += 1 }
                if j < n, scalars[j] != "}", scalars[j] != "-" { return true }
            }
            i += 2
        }
        return false
    }

    static func isNameStart(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_"
    }

    /// What the placeholder is and does, for the message: flow leaves it as text, except
    /// make's in a shell command, which the shell runs as a command unless quoting keeps
    /// it text.
    public var whatItIs: String {
        guard syntax == .make, inShellCommand else { return "\(syntax.owner): flow leaves it as text" }
        if let shellQuoting { return "make's syntax: \(shellQuoting) the shell leaves it as text" }
        return "make's syntax: the shell runs it as a command named `\(name)`"
    }
}

extension String {
    /// What a templated string may hold, from one byte scan (most strings have neither):
    /// `expressions`, a `${{`; `placeholders`, whether `ForeignPlaceholder.find` may find
    /// something: a `{{` not part of a `${{`, then one name (with the trim markers, blanks
    /// and leading dot `find` allows) and `}}`. That may be yes where `find` finds nothing
    /// (`{{{x}}}`, a `{{` in an expression's string literal), never the other way round:
    /// `find` scans scalars and needs the scalar's source located, which most `{{…}}`
    /// (other programs' templates, `{{.State.Running}}`) must not cost.
    /// `makeReferences`: whether it has a `$(` then a name and `)`, make's `$(VERSION)`.
    var templateMarkers: (expressions: Bool, placeholders: Bool, makeReferences: Bool) {
        utf8.withContiguousStorageIfAvailable(Self.templateMarkers) ?? Array(utf8).withUnsafeBufferPointer(Self.templateMarkers)
    }

    private static func templateMarkers(_ text: UnsafeBufferPointer<UInt8>) -> (expressions: Bool, placeholders: Bool, makeReferences: Bool) {
        let n = text.count
        func isBlank(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }
        func isNameStart(_ b: UInt8) -> Bool {
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || b == UInt8(ascii: "_")
        }
        let open = UInt8(ascii: "{"), close = UInt8(ascii: "}"), dash = UInt8(ascii: "-")
        var expressions = false, placeholders = false, makeReferences = false
        var i = 0
        while i + 1 < n, !(expressions && placeholders && makeReferences) {
            // make's `$(NAME)` (not `$$(`, make's escape): one name, then `)`.
            if !makeReferences, text[i] == UInt8(ascii: "$"), text[i + 1] == UInt8(ascii: "("),
               i == 0 || text[i - 1] != UInt8(ascii: "$") {
                var j = i + 2
                if j < n, isNameStart(text[j]) {
                    while j < n, isNameStart(text[j]) || (text[j] >= UInt8(ascii: "0") && text[j] <= UInt8(ascii: "9")) { j += 1 }
                    makeReferences = j < n && text[j] == UInt8(ascii: ")")
                }
                i += 2
                continue
            }
            guard text[i] == open, text[i + 1] == open else {
                i += 1
                continue
            }
            if i > 0, text[i - 1] == UInt8(ascii: "$") {
                expressions = true
                i += 2
                continue
            }
            if !placeholders {
                var j = i + 2
                if j + 1 < n, text[j] == dash, isBlank(text[j + 1]) { j += 1 }
                while j < n, isBlank(text[j]) { j += 1 }
                if j < n, text[j] == UInt8(ascii: ".") { j += 1 }
                if j < n, isNameStart(text[j]) {
                    while j < n, isNameStart(text[j]) || (text[j] >= UInt8(ascii: "0") && text[j] <= UInt8(ascii: "9")) || text[j] == dash {
                        j += 1
                    }
                    while j < n, isBlank(text[j]) { j += 1 }
                    if j < n, text[j] == dash { j += 1 }
                    placeholders = j + 1 < n && text[j] == close && text[j + 1] == close
                }
            }
            i += 1
        }
        return (expressions, placeholders, makeReferences)
    }

    /// Whether the text has `{{` anywhere: a byte scan, as almost no string has.
    var containsDoubleBrace: Bool {
        var previous: UInt8 = 0
        for byte in utf8 {
            if byte == UInt8(ascii: "{"), previous == byte { return true }
            previous = byte
        }
        return false
    }
}
