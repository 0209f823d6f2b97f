/// Renders diagnostics as text (with source excerpt and caret), JSON, or GitHub workflow commands.
///
/// This is the one place diagnostics become text, so every command prints them alike.
public struct DiagnosticRenderer: Sendable {
    public var useColor: Bool
    /// Source lines longer than this are shown as a window around the span.
    public var maxLineWidth = 160

    public init(useColor: Bool = false) {
        self.useColor = useColor
    }

    // MARK: Text

    public func text(_ diagnostics: [Diagnostic]) -> String {
        var lines = LineCache()
        var out = ""
        for diagnostic in diagnostics { out += text(diagnostic, lines: &lines) }
        return out
    }

    /// Text from the workflow (key names, values, the file name) goes into messages as it
    /// is; control characters in it are escaped here, so none reaches the terminal raw.
    public func text(_ d: Diagnostic) -> String {
        var lines = LineCache()
        return text(d, lines: &lines)
    }

    /// The scalars of the source lines shown. Diagnostics come in file order, and a
    /// generated file may hold thousands on one long line: decoding the line again for
    /// each made them cost their number times its length (10,000 on one line: 6 s).
    /// Their notes point elsewhere (a duplicate key's first occurrence, often on another
    /// line), so long lines are kept until `longLineBudget` scalars are held: with one
    /// line kept, 20,000 duplicates on one line of keys first written on another took 20 s.
    struct LineCache {
        /// Lines at least this long are kept beside the last one shown.
        static let longLine = 1_024
        /// The most scalars of long lines kept (64 MiB); past it they are dropped and
        /// decoded again.
        static let longLineBudget = 1 << 24

        private var file: ObjectIdentifier?
        private var line = 0
        private var scalars: [Unicode.Scalar] = []
        private var longLines: [Int: [Unicode.Scalar]] = [:]
        private var longLineScalars = 0

        mutating func scalars(of source: SourceFile, line: Int) -> [Unicode.Scalar] {
            if file != ObjectIdentifier(source) {
                file = ObjectIdentifier(source)
                self.line = 0
                longLines = [:]
                longLineScalars = 0
            } else if self.line == line {
                return scalars
            }
            self.line = line
            if let kept = longLines[line] {
                scalars = kept
                return scalars
            }
            scalars = Array(source.lineText(line).unicodeScalars)
            if scalars.count >= Self.longLine {
                if longLineScalars + scalars.count > Self.longLineBudget {
                    longLines = [:]
                    longLineScalars = 0
                }
                longLines[line] = scalars
                longLineScalars += scalars.count
            }
            return scalars
        }
    }

    private func text(_ d: Diagnostic, lines: inout LineCache) -> String {
        var out = ""
        let label = d.severity == .error ? paint("error", "1;31") : paint("warning", "1;33")
        let path = ControlEscaping.escaped(d.file.path)
        out += paint("\(path):\(d.span.start.line):\(d.span.start.column):", "1")
        out += " \(label): \(paint(ControlEscaping.escaped(d.message), "1")) [\(d.code.rawValue)]\n"
        let shown = excerpt(file: d.file, span: d.span, label: d.help.map { ControlEscaping.escaped($0) },
                            caretColor: d.severity == .error ? "1;31" : "1;33", lines: &lines)
        out += shown
        // No source to put the help under (a file that could not be read): a line of its own.
        if shown.isEmpty, let help = d.help { out += "\(paint("help", "1;36")): \(ControlEscaping.escaped(help))\n" }
        for note in d.notes {
            out += paint("\(path):\(note.span.start.line):\(note.span.start.column):", "1")
            out += " \(paint("note", "1;36")): \(ControlEscaping.escaped(note.message))\n"
            out += excerpt(file: d.file, span: note.span, label: nil, caretColor: "1;36", lines: &lines)
        }
        return out
    }

    /// The gutter, source line and caret run under the span's first line.
    func excerpt(file: SourceFile, span: SourceSpan, label: String?, caretColor: String, lines: inout LineCache) -> String {
        let lineNumber = span.start.line
        guard !file.bytes.isEmpty, lineNumber >= 1, lineNumber <= max(file.lineCount, 1) else { return "" }
        var scalars = lines.scalars(of: file, line: lineNumber)
        var startColumn = max(span.start.column - 1, 0)
        var endColumn = span.end.line == span.start.line ? span.end.column - 1 : scalars.count
        endColumn = max(endColumn, startColumn + 1)
        var prefix = "", suffix = ""
        if scalars.count > maxLineWidth {
            let from = max(0, min(startColumn - 40, scalars.count - maxLineWidth))
            let to = min(scalars.count, from + maxLineWidth)
            if from > 0 { prefix = "…" }
            if to < scalars.count { suffix = "…" }
            scalars = Array(scalars[from..<to])
            startColumn -= from
            endColumn = min(endColumn - from, scalars.count + 1)
        }
        // A tab becomes `→`, one column, as editors show one (vim's `listchars`): as a blank
        // the caret of `tab-indentation` pointed at nothing to see, and a tab in a value
        // looked like a space. Other control characters are escaped (`\u{1B}`), and
        // the caret columns move by what the escapes add before them, and by the width of
        // wide characters (`DisplayWidth`).
        var line = ""
        var displayStart = [Int]()  // where each source scalar starts in `line`
        displayStart.reserveCapacity(scalars.count + 1)
        var width = 0
        var previous: Unicode.Scalar?
        for scalar in scalars {
            defer { previous = scalar }
            displayStart.append(width)
            if scalar == "\t" {
                line.unicodeScalars.append("→")
                width += 1
            } else if ControlEscaping.isControl(scalar) {
                let escape = ControlEscaping.escaped(scalar)
                line += escape
                width += escape.unicodeScalars.count
            } else {
                line.unicodeScalars.append(scalar)
                width += DisplayWidth.columns(of: scalar, after: previous)
            }
        }
        func display(_ column: Int) -> Int {
            column < scalars.count ? displayStart[max(column, 0)] : width + column - scalars.count
        }
        (startColumn, endColumn) = (display(startColumn), display(endColumn))
        if startColumn > 0, !prefix.isEmpty { startColumn += 1; endColumn += 1 }
        startColumn = min(startColumn, width + prefix.count)
        endColumn = max(min(endColumn, width + prefix.count + 1), startColumn + 1)
        let gutterWidth = String(lineNumber).count
        let pad = String(repeating: " ", count: gutterWidth)
        var out = "\(pad) \(paint("|", "1;34"))\n"
        out += "\(paint(String(lineNumber), "1;34")) \(paint("|", "1;34")) \(prefix)\(line)\(suffix)\n"
        let carets = String(repeating: "^", count: endColumn - startColumn)
        out += "\(pad) \(paint("|", "1;34")) \(String(repeating: " ", count: startColumn))\(paint(carets, caretColor))"
        if let label { out += " \(paint(label, caretColor))" }
        out += "\n"
        return out
    }

    private func paint(_ s: String, _ code: String) -> String {
        useColor ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s
    }

    // MARK: JSON

    public func jsonValue(_ d: Diagnostic) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("file", .string(d.file.path)),
            ("line", .int(d.span.start.line)),
            ("column", .int(d.span.start.column)),
            ("end_line", .int(d.span.end.line)),
            ("end_column", .int(d.span.end.column)),
            ("severity", .string(d.severity.rawValue)),
            ("code", .string(d.code.rawValue)),
            ("message", .string(d.message)),
        ]
        members.append(("help", d.help.map(JSONValue.string) ?? .null))
        members.append(("notes", .array(d.notes.map { note in
            .object([
                ("message", .string(note.message)),
                ("line", .int(note.span.start.line)),
                ("column", .int(note.span.start.column)),
            ])
        })))
        return .object(members)
    }

    public func json(_ diagnostics: [Diagnostic]) -> String {
        JSONValue.array(diagnostics.map(jsonValue)).rendered(pretty: true) + "\n"
    }

    // MARK: GitHub

    /// GitHub Actions workflow commands: `::error file=…,line=…,col=…::message`. A
    /// workflow read from standard input has no file to annotate: its commands carry no
    /// `file` and no position (GitHub would link `<stdin>` as a path of the repository),
    /// and the message starts with where it is (`<stdin>:3:5: …`). A file named `<stdin>`
    /// is a file like any other.
    public func github(_ diagnostics: [Diagnostic]) -> String {
        var out = ""
        for d in diagnostics {
            var message = d.message
            if let help = d.help { message += " (\(help))" }
            if d.file.isStandardInput {
                message = "\(d.file.path):\(d.span.start.line):\(d.span.start.column): " + message
                out += "::\(d.severity.rawValue) title=\(GitHubCommandEscaping.property("flow " + d.code.rawValue))::"
                out += GitHubCommandEscaping.data(message) + "\n"
                continue
            }
            out += "::\(d.severity.rawValue) file=\(GitHubCommandEscaping.property(d.file.path)),line=\(d.span.start.line),"
            out += "col=\(d.span.start.column),endLine=\(d.span.end.line),endColumn=\(d.span.end.column),"
            out += "title=\(GitHubCommandEscaping.property("flow " + d.code.rawValue))::\(GitHubCommandEscaping.data(message))\n"
        }
        return out
    }
}
