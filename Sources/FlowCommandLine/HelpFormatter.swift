/// Renders help, usage lines and usage errors in swift-argument-parser's layout:
/// `OVERVIEW:`, the discussion, `USAGE:`, then `ARGUMENTS:`, `OPTIONS:` and `SUBCOMMANDS:`
/// with labels in a 24-column gutter and lines of at most 79 columns.
public enum HelpFormatter {
    static let width = 79
    static let gutter = 26

    /// The help of the last command of `path` (the root first).
    public static func help(_ path: [CommandSpec]) -> String {
        let command = path[path.count - 1]
        let root = path[0]
        var out = wrap("OVERVIEW: " + command.abstract, indent: 0, firstIndent: 0) + "\n\n"
        if !command.discussion.isEmpty {
            out += discussion(command.discussion) + "\n\n"
        }
        out += "USAGE: " + usage(path) + "\n\n"
        if !command.arguments.isEmpty {
            out += "ARGUMENTS:\n"
            for argument in command.arguments {
                out += row("<\(argument.name)>", argument.help)
            }
            out += "\n"
        }
        out += "OPTIONS:\n"
        for option in command.options {
            out += row(option.label, optionHelp(option))
        }
        if root.version != nil { out += row("--version", "Show the version.") }
        out += row("-h, --help", "Show help information.")
        if !command.subcommands.isEmpty {
            out += "\nSUBCOMMANDS:\n"
            for sub in command.subcommands { out += row(sub.name, sub.abstract) }
            out += "\n  See '\(names(path)) help <subcommand>' for detailed help.\n"
        }
        return out
    }

    /// `flow run [<options>] <file> [<action>]`: every option when there are a dozen or
    /// fewer, else `[<options>]`, as swift-argument-parser does.
    public static func usage(_ path: [CommandSpec]) -> String {
        let command = path[path.count - 1]
        var parts = [names(path)]
        if !command.subcommands.isEmpty { return parts[0] + " <subcommand>" }
        let arguments = command.arguments.map(\.synopsis)
        if command.options.count > 12 {
            parts.append("[<options>]")
            parts += arguments
        } else {
            parts += arguments
            parts += command.options.map { "[" + $0.synopsis + ($0.repeats ? " ..." : "") + "]" }
        }
        return parts.joined(separator: " ")
    }

    /// A usage error with the command's usage line, as printed on stderr.
    public static func error(_ error: UsageError) -> String {
        var out = "Error: \(error.message)\n"
        if let subject = error.subject {
            out += "Help:  \(subject.label)  \(subject.help)\n"
        }
        if let note = error.note {
            out += "       \(note)\n"
        }
        out += "Usage: \(usage(error.path))\n"
        out += "  See '\(names(error.path)) --help' for more information.\n"
        return out
    }

    /// `flow run`.
    static func names(_ path: [CommandSpec]) -> String {
        path.map(\.name).joined(separator: " ")
    }

    /// An option's help with how often it may be given, its values and its default:
    /// `(repeatable; values: text, json; default: text)`.
    static func optionHelp(_ option: OptionSpec) -> String {
        var notes: [String] = []
        // The usage line shows `...` only when it lists the options one by one.
        if option.repeats { notes.append("repeatable") }
        if !option.choices.isEmpty { notes.append("values: " + option.choices.joined(separator: ", ")) }
        if let value = option.defaultValue { notes.append("default: " + value) }
        return notes.isEmpty ? option.help : option.help + " (" + notes.joined(separator: "; ") + ")"
    }

    /// `  --label                 Help text that wraps under itself.`
    static func row(_ label: String, _ help: String) -> String {
        let lead = "  " + label
        let body = wrap(help, indent: gutter, firstIndent: gutter)
        if lead.count <= gutter - 2 {
            return lead + String(repeating: " ", count: gutter - lead.count) + body.dropFirst(gutter) + "\n"
        }
        return lead + "\n" + body + "\n"
    }

    /// The discussion: lines that start with a space (examples) as they are, others wrapped.
    static func discussion(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.first == " " || line.isEmpty ? String(line) : wrap(String(line), indent: 0, firstIndent: 0)
        }.joined(separator: "\n")
    }

    /// `text` wrapped at `width` columns at spaces; the first line indented by
    /// `firstIndent`, the others by `indent`. A word longer than a line stays whole.
    static func wrap(_ text: String, indent: Int, firstIndent: Int) -> String {
        var lines: [String] = []
        var line = String(repeating: " ", count: firstIndent)
        var lineIsEmpty = true
        for word in text.split(separator: " ") {
            if !lineIsEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                lineIsEmpty = true
            }
            line += (lineIsEmpty ? "" : " ") + word
            lineIsEmpty = false
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
