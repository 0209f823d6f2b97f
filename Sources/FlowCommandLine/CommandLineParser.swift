#if canImport(Glibc)
import Glibc
#endif
import FlowKit

/// Reads a command line against a command tree, with swift-argument-parser's conventions:
/// subcommands first; `--name value`, `--name=value`, `-x`, grouped short flags (`-fq`);
/// `--` ends the options; a value option's value may not look like an option; `-h`/`--help`
/// anywhere (before `--`) asks for help and `--version` for the version; the root also
/// takes `help [SUBCOMMAND]` and `--generate-completion-script [SHELL]` (and, unlisted,
/// `--complete-values`, which the completion scripts call).
public enum CommandLineParser {
    /// What `arguments` (without the program name) ask of the tree under `root`.
    public static func parse(_ arguments: [String], root: CommandSpec) throws(UsageError) -> CommandLineRequest {
        var path = [root]
        var index = 0
        // Descend through subcommand names.
        while !path[path.count - 1].subcommands.isEmpty {
            let command = path[path.count - 1]
            guard index < arguments.count else { return .help(path) }
            let word = arguments[index]
            if word == "--help" || word == "-h" { return .help(path) }
            if word == "--version", let version = root.version { return .version(version) }
            if path.count == 1, word == "--generate-completion-script" || word.hasPrefix("--generate-completion-script=") {
                return try completionRequest(arguments, at: index, root: root)
            }
            if path.count == 1, word == completionValuesOption {
                return try completionValuesRequest(Array(arguments[(index + 1)...]), root: root)
            }
            if path.count == 1, word == "help" {
                return try helpRequest(Array(arguments[(index + 1)...]), root: root)
            }
            if word.hasPrefix("-") {
                var message = "Unknown option '\(word)'"
                let names = ["help"] + (root.version == nil ? [] : ["version"])
                    + (path.count == 1 ? ["generate-completion-script"] : [])
                if word.hasPrefix("--"), let near = Suggestion.closest(to: String(word.dropFirst(2)), in: names) {
                    message += ". Did you mean '--\(near)'?"
                }
                throw UsageError(message, path: path)
            }
            guard let sub = command.subcommand(word) else {
                var message = "Unknown subcommand '\(word)'"
                // The root's `help` is a subcommand to the user too (`flow hlep run`).
                let names = command.subcommands.map(\.name) + (path.count == 1 ? ["help"] : [])
                if let near = Suggestion.closest(to: word, in: names) {
                    message += ". Did you mean '\(near)'?"
                }
                throw UsageError(message, path: path)
            }
            path.append(sub)
            index += 1
        }
        let rest = Array(arguments[index...])
        // Help and version win over anything else on the line, as in swift-argument-parser.
        for word in rest {
            if word == "--" { break }
            if word == "--help" || word == "-h" || groupedFlagsAskForHelp(word, command: path[path.count - 1]) {
                return .help(path)
            }
            if word == "--version", let version = root.version { return .version(version) }
        }
        return .command(try parseOptions(rest, path: path))
    }

    /// `-fh`: grouped short flags with `h` among them (not in a value: `-ohash`).
    static func groupedFlagsAskForHelp(_ word: String, command: CommandSpec) -> Bool {
        guard word.hasPrefix("-"), !word.hasPrefix("--") else { return false }
        for letter in word.dropFirst() {
            if letter == "h" { return true }
            guard let option = command.options.first(where: { $0.short == letter }), option.isFlag else { return false }
        }
        return false
    }

    /// The options and positional arguments of the leaf command `path`.
    static func parseOptions(_ words: [String], path: [CommandSpec]) throws(UsageError) -> ParsedArguments {
        let command = path[path.count - 1]
        var parsed = ParsedArguments(path: path)
        var positionals: [String] = []
        var index = 0
        var optionsEnded = false

        func store(_ option: OptionSpec, _ value: String) throws(UsageError) {
            if !option.choices.isEmpty, !option.choices.contains(value) {
                var message = "The value '\(value)' is invalid for '\(option.synopsis)'. Please provide one of: "
                    + option.choices.joined(separator: ", ")
                if let near = Suggestion.closest(to: value, in: option.choices) { message += ". Did you mean '\(near)'?" }
                throw UsageError(message, path: path)
            }
            // Every value is kept, repeatable or not: `value` takes the last (as most tools do),
            // and a command can still see that a single-value option was given twice.
            parsed.optionValues[option.long, default: []].append(value)
        }

        func missingValue(_ option: OptionSpec) -> UsageError {
            UsageError("Missing value for '\(option.synopsis)'", path: path, subject: (option.synopsis, option.help))
        }

        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                positionals.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let name: String
                var inline: String?
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inline = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                }
                guard let option = command.option(name) else {
                    var message = "Unknown option '--\(name)'"
                    if let instead = command.declined(name) {
                        throw UsageError(message, path: path, subject: ("--\(name)", instead))
                    }
                    // `--help` is every command's (`--version` the root's, taken anywhere).
                    let names = command.options.map(\.long) + ["help"] + (path[0].version == nil ? [] : ["version"])
                    if let near = Suggestion.closest(to: name, in: names) {
                        message += ". Did you mean '--\(near)'?"
                    }
                    throw UsageError(message, path: path)
                }
                if option.isFlag {
                    if let inline {
                        throw UsageError("The option '--\(name)' does not take any value, but '\(inline)' was specified.", path: path)
                    }
                    parsed.flags.insert(option.long)
                } else if let inline {
                    try store(option, inline)
                } else {
                    guard index < words.count, !looksLikeOption(words[index]) else { throw missingValue(option) }
                    try store(option, words[index])
                    index += 1
                }
                continue
            }
            // Short options: `-f`, grouped flags `-fq`, or `-o value` / `-ovalue`.
            var letters = Substring(word.dropFirst())
            while let letter = letters.first {
                letters = letters.dropFirst()
                guard let option = command.options.first(where: { $0.short == letter }) else {
                    throw UsageError("Unknown option '-\(letter)'", path: path)
                }
                if option.isFlag {
                    parsed.flags.insert(option.long)
                    continue
                }
                if !letters.isEmpty {
                    try store(option, String(letters))
                } else {
                    guard index < words.count, !looksLikeOption(words[index]) else { throw missingValue(option) }
                    try store(option, words[index])
                    index += 1
                }
                break
            }
        }

        // Positional arguments, in order; a repeating one takes the rest.
        var next = 0
        for argument in command.arguments {
            if argument.repeats {
                let taken = Array(positionals[min(next, positionals.count)...])
                next = positionals.count
                if taken.isEmpty && !argument.isOptional {
                    throw UsageError("Missing expected argument '\(argument.synopsis)'", path: path,
                                     subject: ("<\(argument.name)>", argument.help))
                }
                parsed.positionalValues[argument.name] = taken
            } else if next < positionals.count {
                parsed.positionalValues[argument.name] = [positionals[next]]
                next += 1
            } else if !argument.isOptional {
                throw UsageError("Missing expected argument '\(argument.synopsis)'", path: path,
                                 subject: ("<\(argument.name)>", argument.help))
            }
        }
        if next < positionals.count {
            var error = UsageError("Unexpected argument '\(positionals[next])'", path: path)
            // `task release TAG=v1` (go-task), `make deploy ENV=prod`: a `key=value` word is
            // how those tools pass variables; say which options take it here.
            let word = positionals[next]
            if let equals = word.firstIndex(of: "="), equals != word.startIndex {
                let pairs = command.options.filter { $0.valueName == "key=value" }
                let lines = pairs.map { (label: "--\($0.long) \(word)", help: $0.help) }
                if let first = lines.first {
                    error.subject = first
                    if lines.count > 1 {
                        error.note = lines.dropFirst().map { "\($0.label)  \($0.help)" }.joined(separator: "\n       ")
                    }
                }
            } else if optionsEnded, let pair = command.options.first(where: { $0.valueName == "key=value" }) {
                // `task test -- -run X` (go-task's CLI_ARGS), `just test -v`: words for the
                // commands. Nothing is passed through; values go in as variables.
                error.subject = ("--\(pair.long) <key=value>", pair.help)
                error.note = "'\(HelpFormatter.names(path))' passes no words on to the commands it runs: give values as variables"
            } else if let last = command.arguments.last, !last.repeats, next > 0 {
                // `task clean build`, `just lint test`, `make clean all`: those tools run
                // several targets in one command; say that this argument is one.
                // just's `just deploy prod` passes a recipe's parameter that way: name the
                // options that take values too.
                let pairs = command.options.filter { $0.valueName == "key=value" }.map { "--\($0.long) NAME=\(word)" }
                error.subject = ("<\(last.name)>", last.help)
                error.note = "'\(HelpFormatter.names(path))' takes one <\(last.name)>: give '\(word)' a command of its own"
                    + (pairs.isEmpty ? "" : "; a value goes in with " + pairs.joined(separator: " or "))
            }
            throw error
        }
        return parsed
    }

    /// `-x`, `--name`: not a value (a lone `-` is, meaning stdin, as are negative numbers).
    static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word != "-" else { return false }
        let second = word.utf8.dropFirst().first
        return !(second.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false)
    }

    /// `flow help [SUBCOMMAND…]`.
    static func helpRequest(_ names: [String], root: CommandSpec) throws(UsageError) -> CommandLineRequest {
        var path = [root]
        // `help help`: `help` is the root's word, described in the root's help.
        if names == ["help"] { return .help(path) }
        for name in names {
            guard let sub = path[path.count - 1].subcommand(name) else {
                var message = "Unknown subcommand '\(name)'"
                if let near = Suggestion.closest(to: name, in: path[path.count - 1].subcommands.map(\.name)) {
                    message += ". Did you mean '\(near)'?"
                }
                throw UsageError(message, path: path)
            }
            path.append(sub)
        }
        return .help(path)
    }

    /// `--generate-completion-script SHELL` (`=SHELL`, or none: the login shell's).
    static func completionRequest(_ arguments: [String], at index: Int, root: CommandSpec) throws(UsageError) -> CommandLineRequest {
        let word = arguments[index]
        var shell: String?
        if let equals = word.firstIndex(of: "=") {
            shell = String(word[word.index(after: equals)...])
        } else if index + 1 < arguments.count {
            shell = arguments[index + 1]
        }
        if shell == nil, let login = getenv("SHELL") {
            shell = String(cString: login).split(separator: "/").last.map(String.init)
        }
        guard let shell, CompletionScript.shells.contains(shell) else {
            throw UsageError("--generate-completion-script takes one of: " + CompletionScript.shells.joined(separator: ", "),
                             path: [root])
        }
        return .completionScript(shell)
    }
}
