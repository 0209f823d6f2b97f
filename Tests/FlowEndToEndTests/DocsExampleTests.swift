import Foundation
import Testing

/// The examples in README.md and docs/ are what the built binary does: a user copies them
/// first. Four checks (and those of the CLI reference's options, below):
///
/// - every ```` ```console ```` block whose commands are `flow validate`, `plan`, `graph`
///   or `schema` (with `printf … > FILE` or `python3 -c … > FILE` to set up) prints what the block shows, stdout and
///   stderr together, as docs/diagnostics.md promises ("the output shown is the real
///   output"). The workflow is the ```` ```yaml ```` block before it, written to the file
///   the command names (or that its `# FILE.yaml` first line names). A `flow run` example
///   is checked too, its times (`0.2s`) aside, and an `echo $?` after a command against
///   that command's exit status. Blocks with other commands (`ls`, a pipe) and commands
///   shown without output (a usage illustration) are left out;
/// - every ```` ```yaml ```` block that is a whole workflow (it has `steps:` at the top)
///   and is not the input of such an example (one that is run) validates without a problem;
/// - docs/cli.md's synopsis and README.md's command table name every subcommand, the
///   synopsis with the arguments its `--help` usage takes;
/// - every `flow SUBCOMMAND …` command line in them, and in the help's examples, gives only
///   options that subcommand takes, with values they offer.
@Suite struct DocsExampleTests {
    /// One fenced block: its language, its text (the fence's indentation removed) and the
    /// line of its opening fence.
    struct Block {
        var language: String
        var text: String
        var line: Int
    }

    /// One `$ command` of a console block and the lines shown after it.
    struct Command {
        var text: String
        var expected: [String]
    }

    static let documents = ["README.md", "docs/diagnostics.md", "docs/cli.md", "docs/workflow-format.md",
                            "docs/journal.md", "docs/editor-setup.md"]

    static func blocks(of name: String) throws -> [Block] {
        let url = FlowBinary.packageRoot.appendingPathComponent(name)
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            let indent = line.prefix { $0 == " " }
            guard line.dropFirst(indent.count).hasPrefix("```") else {
                index += 1
                continue
            }
            let language = String(line.dropFirst(indent.count + 3).prefix { $0.isLetter })
            let opening = index + 1
            var body: [String] = []
            index += 1
            while index < lines.count, lines[index] != indent + "```" {
                body.append(String(lines[index].dropFirst(min(indent.count, lines[index].prefix { $0 == " " }.count))))
                index += 1
            }
            blocks.append(Block(language: language, text: body.joined(separator: "\n") + "\n", line: opening))
            index += 1
        }
        return blocks
    }

    static func commands(of block: Block) -> [Command] {
        var commands: [Command] = []
        for line in block.text.dropLast().components(separatedBy: "\n") {
            if line.hasPrefix("$ ") {
                commands.append(Command(text: String(line.dropFirst(2)), expected: []))
            } else if !commands.isEmpty {
                commands[commands.count - 1].expected.append(line)
            }
        }
        return commands
    }

    /// Whether a command is one the examples are checked with: setup, or a `flow` command
    /// whose output does not depend on time or the machine.
    static func isCheckable(_ command: Command) -> Bool {
        if isSetup(command) || isStatus(command) { return true }
        let words = command.text.split(separator: " ")
        // `2>&1` shows a run's stderr beside its stdout, as the example's reader sees them.
        let redirections = command.text.replacingOccurrences(of: " 2>&1", with: "")
        guard words.first == "flow", words.count > 1, !command.text.contains("|"), !redirections.contains(">") else {
            return false
        }
        return ["validate", "plan", "graph", "schema", "run"].contains(words[1])
    }

    /// `echo $?` after a command: the example shows its exit status.
    static func isStatus(_ command: Command) -> Bool {
        command.text == "echo $?"
    }

    /// `text` with every time a run prints (`0.2s`, `in 0.4s`) made `0.0s`: a run's times
    /// vary, its lines, labels and counts do not.
    static func withoutTimes(_ text: String) -> String {
        text.replacingOccurrences(of: #"\b[0-9]+\.[0-9]s\b"#, with: "0.0s", options: .regularExpression)
            // A run's id is new every run (the resume hint names it).
            .replacingOccurrences(of: #"\b[0-9a-f]{8}-[0-9a-f]{8}\b"#, with: "RUN-ID", options: .regularExpression)
    }

    /// A command that writes the workflow an example reads (`printf '…' > workflow.yaml`).
    static func isSetup(_ command: Command) -> Bool {
        (command.text.hasPrefix("printf ") || command.text.hasPrefix("python3 -c ")) && command.text.contains(" > ")
    }

    /// The workflow file a command reads: the first argument that ends in `.yaml`/`.yml`.
    static func workflowFile(of command: Command) -> String? {
        command.text.split(separator: " ").dropFirst(2).first { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
            .map(String.init)
    }

    /// The name a yaml block gives itself on its first line (`# workflows/ci.yaml`).
    static func ownName(of block: Block) -> String? {
        guard let first = block.text.split(separator: "\n").first, first.hasPrefix("# ") else { return nil }
        let name = first.dropFirst(2)
        return !name.contains(" ") && (name.hasSuffix(".yaml") || name.hasSuffix(".yml")) ? String(name) : nil
    }

    /// The commands of a console block that `consoleExamplesAreTheRealOutput` runs, or nil
    /// when it leaves the block out (a command it cannot check, or no `flow` command).
    static func checkedCommands(of block: Block) -> [Command]? {
        guard block.language == "console" else { return nil }
        let commands = Self.commands(of: block).filter { !$0.text.hasPrefix("flow ") || !$0.expected.isEmpty }
        guard !commands.isEmpty, commands.allSatisfy(Self.isCheckable),
              commands.contains(where: { $0.text.hasPrefix("flow ") }) else { return nil }
        return commands
    }

    @Test(arguments: documents)
    func consoleExamplesAreTheRealOutput(document: String) throws {
        var input: Block?
        var checked = 0
        for block in try Self.blocks(of: document) {
            if block.language == "yaml" { input = block }
            guard let commands = Self.checkedCommands(of: block) else { continue }
            let box = try RunSandbox()
            // The repository's example workflows, for the examples that name them.
            for file in try FileManager.default.contentsOfDirectory(
                atPath: FlowBinary.packageRoot.appendingPathComponent("workflows").path) {
                let text = try String(contentsOf: FlowBinary.packageRoot.appendingPathComponent("workflows/\(file)"),
                                      encoding: .utf8)
                try box.write("workflows/\(file)", text)
            }
            if let input, let name = Self.ownName(of: input) { try box.write(name, input.text) }
            var status: Int32?
            for command in commands {
                if Self.isStatus(command) {
                    checked += 1
                    #expect(command.expected.first.map { Int32($0) } == status,
                            "\(document):\(block.line): the command before `$ echo $?` exited \(status.map(String.init) ?? "?")")
                    continue
                }
                if let input, Self.ownName(of: input) == nil, !Self.isSetup(command),
                   let file = Self.workflowFile(of: command), !file.contains("*"), !box.exists(file) {
                    try box.write(file, input.text)
                }
                // bash, for printf's `\xE9`; `flow` is the built binary, found on PATH as a
                // user's is (the resume hint names it `flow` only then).
                try box.write("example.sh", "mkdir -p .bin && ln -sf \"$FLOW\" .bin/flow && PATH=\"$PWD/.bin:$PATH\"\n"
                                  + "{ \(command.text)\n} 2>&1\n")
                let result = try FlowBinary.run([], in: box.root,
                                                shellScript: "FLOW=\"$0\" exec /bin/bash ./example.sh")
                if Self.isSetup(command) { continue }
                status = result.status
                checked += 1
                var expected = command.expected
                while expected.last == "" { expected.removeLast() }
                var output = result.stdout
                if output.hasSuffix("\n") { output.removeLast() }
                let isRun = command.text.hasPrefix("flow run ")
                #expect((isRun ? Self.withoutTimes(output) : output)
                            == (isRun ? Self.withoutTimes(expected.joined(separator: "\n")) : expected.joined(separator: "\n")),
                        "\(document):\(block.line): `$ \(command.text)` printed:\n\(output)")
            }
        }
        // The documents with examples have them found (a change of fences must not turn
        // this test into nothing).
        if document == "docs/diagnostics.md" { #expect(checked >= 40, "only \(checked) examples checked") }
        if document == "README.md" || document == "docs/cli.md" { #expect(checked >= 1, "no example checked") }
    }

    @Test(arguments: documents)
    func wholeWorkflowsAreValid(document: String) throws {
        let blocks = try Self.blocks(of: document)
        let box = try RunSandbox()
        for (index, block) in blocks.enumerated() where block.language == "yaml" {
            guard block.text.hasPrefix("steps:") || block.text.contains("\nsteps:") else { continue }
            // The input of a console example is checked by what the example shows, when the
            // example is one that is run; else it is validated here like any other.
            if index + 1 < blocks.count, Self.checkedCommands(of: blocks[index + 1]) != nil { continue }
            try box.write("example.yaml", block.text)
            let result = try box.run(["validate", "example.yaml"])
            #expect(result.status == 0 && result.stderr.isEmpty,
                    "\(document):\(block.line): the example is not a valid workflow:\n\(result.stderr)")
        }
    }

    /// The subcommands `flow --help` lists (`theSubcommandsAreThoseTheHelpLists`).
    static let subcommands = ["run", "plan", "validate", "graph", "schema", "runs", "show", "logs", "resume", "undo"]

    /// The checks per subcommand cover every subcommand: one added to flow and not to
    /// `subcommands` would have its options and its command lines in the docs unchecked.
    @Test func theSubcommandsAreThoseTheHelpLists() throws {
        let help = try RunSandbox().run(["--help"]).stdout
        let section = try #require(help.range(of: "SUBCOMMANDS:"), "\(help)")
        // `  run                     Run a workflow…`: a name at the indent of two.
        let listed = help[section.upperBound...].components(separatedBy: "\n").compactMap { line -> String? in
            guard let name = line.range(of: "^  [a-z][a-z-]*(  |$)", options: .regularExpression) else { return nil }
            return line[name].trimmingCharacters(in: .whitespaces)
        }
        #expect(listed.sorted() == Self.subcommands.sorted(), "\(help)")
    }

    /// The shape of a subcommand's arguments: each required, optional (`[ACTION]`) or
    /// repeated (`FILE…`), in order.
    enum ArgumentShape: Equatable {
        case required, optional, repeated
    }

    /// The arguments of `flow SUBCOMMAND --help`'s USAGE line: `<file> [<action>]`,
    /// `<files> ...`; options (`[<options>]`, `[--json]`) are not arguments.
    static func argumentShapes(inUsage usage: Substring) -> [ArgumentShape] {
        var shapes: [ArgumentShape] = []
        let arguments = String(usage).replacingOccurrences(of: #"\[(--[^\]]*|<options>)\]"#, with: "", options: .regularExpression)
        for word in arguments.split(separator: " ").dropFirst(2) {
            if word == "..." {
                shapes[shapes.count - 1] = .repeated
            } else if word.hasPrefix("[<"), word != "[<options>]" {
                shapes.append(.optional)
            } else if word.hasPrefix("<") {
                shapes.append(.required)
            }
        }
        return shapes
    }

    /// The arguments of a line of docs/cli.md's synopsis (`flow logs     RUN [STEP]   what …`):
    /// the words in capitals after the name, before the summary.
    static func argumentShapes(inSynopsis line: Substring) -> [ArgumentShape] {
        line.split(separator: " ").dropFirst(2)
            .prefix { $0.range(of: #"^\[?[A-Z][A-Z|]*…?\]?$"#, options: .regularExpression) != nil }
            .map { $0.hasPrefix("[") ? .optional : $0.hasSuffix("…") ? .repeated : .required }
    }

    /// docs/cli.md's synopsis names every subcommand `flow --help` lists, with the
    /// arguments its `--help` usage takes, and README.md's command table names each: a
    /// subcommand added, or an argument added or made optional, must show in the first
    /// lines a reader sees too.
    @Test func theSynopsesNameEverySubcommandWithItsArguments() throws {
        let synopsis = try #require(Self.blocks(of: "docs/cli.md").first { $0.language.isEmpty }).text
        let readme = try String(contentsOf: FlowBinary.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let table = try #require(readme.components(separatedBy: "\n## Commands\n").dropFirst().first)
            .components(separatedBy: "\n## ")[0]
        let box = try RunSandbox()
        for subcommand in Self.subcommands {
            let help = try box.run([subcommand, "--help"]).stdout
            let usage = try #require(help.split(separator: "\n").first { $0.hasPrefix("USAGE: ") }).dropFirst("USAGE: ".count)
            let line = synopsis.split(separator: "\n").first { $0.hasPrefix("flow \(subcommand) ") }
            #expect(line != nil, "docs/cli.md's synopsis has no line for `flow \(subcommand)`")
            if let line {
                #expect(Self.argumentShapes(inSynopsis: line) == Self.argumentShapes(inUsage: usage),
                        "docs/cli.md: `\(line)` against `flow \(subcommand) --help`: `\(usage)`")
            }
            #expect(table.contains("`flow \(subcommand)") || table.contains("`\(subcommand) "),
                    "README.md's command table does not name `flow \(subcommand)`")
        }
    }

    /// Every option each subcommand's `--help` lists, and every value of its choices, is in
    /// docs/cli.md: an option added to the code without a word in the reference fails here.
    @Test(arguments: subcommands)
    func everyOptionInHelpIsInTheCLIReference(subcommand: String) throws {
        let reference = try String(contentsOf: FlowBinary.packageRoot.appendingPathComponent("docs/cli.md"),
                                   encoding: .utf8)
        let box = try RunSandbox()
        let help = try box.run([subcommand, "--help"])
        #expect(help.status == 0)
        var options: [String] = []
        var choices: [String] = []
        for line in help.stdout.components(separatedBy: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            // An option's line starts with it: `-f, --follow  Keep …`, `--output <output>  How …`.
            if text.hasPrefix("-") {
                for word in text.split(separator: " ") where word.hasPrefix("-") {
                    let name = word.trimmingCharacters(in: CharacterSet(charactersIn: ","))
                    if name.count > 1 { options.append(name) }
                }
            }
        }
        // `(values: auto, tty, …; default: auto)`, possibly wrapped over lines.
        let flat = help.stdout.replacingOccurrences(of: "\n", with: " ")
            .replacingOccurrences(of: #" +"#, with: " ", options: .regularExpression)
        var rest = Substring(flat)
        while let start = rest.range(of: "(values: ") {
            let list = rest[start.upperBound...].prefix { $0 != ";" && $0 != ")" }
            choices += list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            rest = rest[start.upperBound...]
        }
        #expect(!options.isEmpty, "no options found in `flow \(subcommand) --help`")
        for option in options where option != "-h" {
            // The whole option, not part of a longer one (`--rollback` in `--no-rollback`).
            let escaped = NSRegularExpression.escapedPattern(for: option)
            #expect(reference.range(of: "(?<![A-Za-z0-9-])\(escaped)(?![A-Za-z0-9-])", options: .regularExpression) != nil,
                    "`flow \(subcommand) --help` lists \(option), which docs/cli.md does not mention")
        }
        for choice in choices {
            #expect(reference.contains(choice), "`flow \(subcommand) --help` offers `\(choice)`, which docs/cli.md does not mention")
        }
    }

    /// The options `flow SUBCOMMAND --help` lists (`-f`, `--follow`), each with the values
    /// it offers when it has a fixed set (`--output`: `auto`, `tty`, …), else none.
    static func options(inHelp help: String) -> [String: [String]] {
        var options: [String: [String]] = ["-h": [], "--help": []]
        guard let section = help.range(of: "OPTIONS:") else { return options }
        // One entry per option: its line starts `  -f, --follow  Keep …`, and its help may go
        // on over the lines that follow.
        for entry in help[section.upperBound...].components(separatedBy: "\n  -").dropFirst() {
            var names: [String] = []
            for word in ("-" + entry).split(separator: " ") {
                if word.hasPrefix("-") {
                    names.append(word.trimmingCharacters(in: CharacterSet(charactersIn: ",")))
                } else if !word.hasPrefix("<") {
                    break
                }
            }
            let flat = entry.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            var values: [String] = []
            if let start = flat.range(of: "(values: ") {
                values = flat[start.upperBound...].prefix { $0 != ";" && $0 != ")" }
                    .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            for name in names { options[name] = values }
        }
        return options
    }

    /// The `flow SUBCOMMAND …` command lines of `text`: code spans that start with one, and
    /// lines of code blocks (`$ flow …`, `- run: flow …`, a help's `  flow …` example),
    /// also where the command comes after environment assignments or another command
    /// (`NO_COLOR=1 flow …`, `… | flow run -`, `cd d && flow run …`).
    static func commandLines(in text: String) -> [String] {
        let pattern = Self.subcommands.joined(separator: "|")
        // What may stand before `flow` on a command line: assignments, a pipe, `&&`, `;`.
        let before = "(([A-Z_]+=[^ `]* )+|[^`]*(\\| |&& |; ))?"
        var lines: [String] = []
        for line in text.components(separatedBy: "\n") {
            var rest = Substring(line)
            while let range = rest.range(of: "`\(before)flow (\(pattern))( [^`]*)?`", options: .regularExpression) {
                lines.append(Self.fromFlow(rest[range].dropFirst().dropLast(), pattern: pattern))
                rest = rest[range.upperBound...]
            }
            if let range = line.range(of: "^ *(\\$ |- run: )?\(before)flow (\(pattern))( .*)?$", options: .regularExpression) {
                lines.append(Self.fromFlow(line[range], pattern: pattern))
            }
        }
        return lines
    }

    /// `command` from its first `flow SUBCOMMAND` on.
    private static func fromFlow(_ command: Substring, pattern: String) -> String {
        guard let range = command.range(of: "(^|[ `])flow (\(pattern))( |$)", options: .regularExpression) else {
            return String(command)
        }
        return String(command[range].first == "f" ? command[range.lowerBound...] : command[command.index(after: range.lowerBound)...])
    }

    /// Every `flow SUBCOMMAND …` command line in README.md, docs/ and the subcommands' own
    /// `--help` examples gives only options that SUBCOMMAND's `--help` lists, and to an
    /// option with a fixed set of values (`--output`, `--format`) one of them: an example
    /// that gives `flow show` the `--follow` of `flow logs`, or `flow plan` the `--format
    /// dot` of `flow graph`, fails here. Placeholders (`MODE`, `text|json`, `…`) are not
    /// values; what follows a pipe, a redirection or a comment is another command.
    @Test func everyCommandLineInTheDocsTakesItsSubcommandsOptions() throws {
        let box = try RunSandbox()
        var options: [String: [String: [String]]] = [:]
        var sources: [(name: String, text: String)] = []
        for subcommand in Self.subcommands {
            let help = try box.run([subcommand, "--help"]).stdout
            options[subcommand] = Self.options(inHelp: help)
            sources.append(("`flow \(subcommand) --help`", help))
        }
        sources.append(("`flow --help`", try box.run(["--help"]).stdout))
        for document in Self.documents + ["docs/events.md", "docs/architecture.md"] {
            let url = FlowBinary.packageRoot.appendingPathComponent(document)
            sources.append((document, try String(contentsOf: url, encoding: .utf8)))
        }
        var checked = 0
        for source in sources {
            for line in Self.commandLines(in: source.text) {
                let words = line.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }
                let subcommand = words[1]
                guard let known = options[subcommand] else { continue }
                checked += 1
                var index = 2
                while index < words.count {
                    let word = words[index]
                    index += 1
                    if ["|", "<", "&&", ";", "--"].contains(word) || word.hasPrefix("#") || word.hasPrefix(">")
                        || word.hasPrefix("2>") { break }
                    guard word.hasPrefix("-"), word != "-", word.dropFirst().first?.isNumber == false else { continue }
                    let name = String(word.prefix { $0 != "=" })
                    // `-fh`: short flags grouped.
                    let names = name.hasPrefix("--") || name.count == 2 ? [name] : name.dropFirst().map { "-\($0)" }
                    for name in names {
                        guard let values = known[name] else {
                            Issue.record("\(source.name): `\(line)` gives `flow \(subcommand)` \(name), which its --help does not list")
                            continue
                        }
                        guard !values.isEmpty else { continue }
                        var value = word.contains("=") ? String(word.drop { $0 != "=" }.dropFirst()) : nil
                        if value == nil, index < words.count { value = words[index] }
                        if let value, !value.contains(where: { $0.isUppercase || "|…<".contains($0) }) {
                            #expect(values.contains(value),
                                    "\(source.name): `\(line)`: `flow \(subcommand) \(name)` takes \(values), not `\(value)`")
                        }
                    }
                }
            }
        }
        #expect(checked >= 100, "only \(checked) command lines found")
    }

    /// Every option docs/cli.md names is one that some command's `--help` lists (or one of
    /// the two top-level ones help leaves out): a removed or renamed option leaves no trace.
    @Test func everyOptionInTheCLIReferenceExists() throws {
        let reference = try String(contentsOf: FlowBinary.packageRoot.appendingPathComponent("docs/cli.md"),
                                   encoding: .utf8)
        let box = try RunSandbox()
        // `--name` is the placeholder of the conventions (`--name value`).
        var known: Set<String> = ["--generate-completion-script", "--complete-values", "--help", "--version", "--name"]
        for subcommand in Self.subcommands {
            let help = try box.run([subcommand, "--help"]).stdout
            var rest = Substring(help)
            while let range = rest.range(of: #"--[a-z][a-z-]*"#, options: .regularExpression) {
                known.insert(String(rest[range]))
                rest = rest[range.upperBound...]
            }
        }
        var rest = Substring(reference)
        var unknown: Set<String> = []
        // An option as the reference writes it: in backticks, at the start of a code span.
        while let range = rest.range(of: #"`--[a-z][a-z-]*"#, options: .regularExpression) {
            let name = String(rest[range].dropFirst())
            if !known.contains(name) { unknown.insert(name) }
            rest = rest[range.upperBound...]
        }
        #expect(unknown.isEmpty, "docs/cli.md names options no command has: \(unknown.sorted())")
    }
}
