import Testing
@testable import FlowCommandLine

/// A small tool shaped like flow's command line.
let sampleRoot = CommandSpec(
    name: "tool", abstract: "A sample tool.",
    subcommands: [
        CommandSpec(
            name: "run", abstract: "Run a file.",
            arguments: [ArgumentSpec("file", help: "The file."), ArgumentSpec("action", help: "An action.", isOptional: true)],
            options: [
                .value("var", valueName: "key=value", help: "A variable.", repeats: true),
                .value("output", help: "How to show it.", choices: ["auto", "json"], defaultValue: "auto"),
                .value("limit", help: "At most this many."),
                .flag("dry-run", help: "Run nothing."),
                .flag("follow", short: "f", help: "Keep going."),
                .flag("quiet", short: "q", help: "Say less."),
                .value("name", short: "n", help: "A name."),
            ]),
        CommandSpec(
            name: "check", abstract: "Check files.",
            arguments: [ArgumentSpec("files", help: "Files to check.", repeats: true)],
            options: [.flag("strict", help: "Be strict.")]),
    ],
    version: "1.2.3")

@Suite struct CommandLineParserTests {
    func parsed(_ words: [String]) throws -> ParsedArguments {
        guard case .command(let arguments) = try CommandLineParser.parse(words, root: sampleRoot) else {
            Issue.record("not a command: \(words)")
            throw UsageError("not a command", path: [sampleRoot])
        }
        return arguments
    }

    func usageError(_ words: [String]) -> UsageError? {
        do {
            _ = try CommandLineParser.parse(words, root: sampleRoot)
            return nil
        } catch {
            return error
        }
    }

    @Test func optionsInEveryForm() throws {
        let a = try parsed(["run", "--var", "a=1", "w.yaml", "--var=b=2", "--output=json", "--dry-run", "-fq", "-nx", "act"])
        #expect(a.command.name == "run")
        #expect(a.argument("file") == "w.yaml")
        #expect(a.argument("action") == "act")
        #expect(a.values("var") == ["a=1", "b=2"])
        #expect(a.value("output") == "json")
        #expect(a.flag("dry-run") && a.flag("follow") && a.flag("quiet"))
        #expect(a.value("name") == "x")
        #expect(!a.flag("strict"))
    }

    @Test func lastValueOfANonRepeatingOptionWins() throws {
        let a = try parsed(["run", "f", "--limit", "1", "--limit", "2"])
        #expect(a.value("limit") == "2")
        #expect(try a.value("limit", as: Int.self) == 2)
    }

    @Test func doubleDashEndsOptions() throws {
        let a = try parsed(["run", "--", "--dry-run", "-x"])
        #expect(a.argument("file") == "--dry-run")
        #expect(a.argument("action") == "-x")
        #expect(!a.flag("dry-run"))
    }

    @Test func negativeNumbersAndALoneDashAreValues() throws {
        let a = try parsed(["run", "-", "--limit", "-3"])
        #expect(a.argument("file") == "-")
        #expect(a.value("limit") == "-3")
    }

    @Test func repeatingArgumentTakesTheRest() throws {
        let a = try parsed(["check", "a.yaml", "--strict", "b.yaml", "c.yaml"])
        #expect(a.arguments("files") == ["a.yaml", "b.yaml", "c.yaml"])
        #expect(a.flag("strict"))
    }

    @Test func helpVersionAndCompletionRequests() throws {
        func names(_ request: CommandLineRequest) -> [String]? {
            if case .help(let path) = request { return path.map(\.name) }
            return nil
        }
        #expect(names(try CommandLineParser.parse([], root: sampleRoot)) == ["tool"])
        #expect(names(try CommandLineParser.parse(["--help"], root: sampleRoot)) == ["tool"])
        #expect(names(try CommandLineParser.parse(["help", "run"], root: sampleRoot)) == ["tool", "run"])
        // `help help`: the root's help, which is where `help` is described.
        #expect(names(try CommandLineParser.parse(["help", "help"], root: sampleRoot)) == ["tool"])
        #expect(names(try CommandLineParser.parse(["run", "--bogus", "-h"], root: sampleRoot)) == ["tool", "run"])
        #expect(names(try CommandLineParser.parse(["run", "--", "-h"], root: sampleRoot)) == nil)
        // Grouped short flags with `h` among them; not an `h` inside a value (`-nhal`).
        #expect(names(try CommandLineParser.parse(["run", "f", "-fh"], root: sampleRoot)) == ["tool", "run"])
        #expect(names(try CommandLineParser.parse(["run", "f", "-qfh"], root: sampleRoot)) == ["tool", "run"])
        #expect(try parsed(["run", "f", "-nhal"]).values("name") == ["hal"])
        if case .version(let v) = try CommandLineParser.parse(["check", "--version"], root: sampleRoot) {
            #expect(v == "1.2.3")
        } else {
            Issue.record("--version is not a version request")
        }
        if case .completionScript(let shell) = try CommandLineParser.parse(["--generate-completion-script", "zsh"], root: sampleRoot) {
            #expect(shell == "zsh")
        } else {
            Issue.record("not a completion request")
        }
        #expect(usageError(["--generate-completion-script", "tcsh"]) != nil)
    }

    @Test func usageErrorsSayWhatIsWrong() {
        let cases: [([String], String)] = [
            (["rnu"], "Unknown subcommand 'rnu'. Did you mean 'run'?"),
            (["help", "chek"], "Unknown subcommand 'chek'. Did you mean 'check'?"),
            (["--bogus"], "Unknown option '--bogus'"),
            (["run", "f", "--dry-rn"], "Unknown option '--dry-rn'. Did you mean '--dry-run'?"),
            (["run", "f", "-x"], "Unknown option '-x'"),
            (["run", "f", "--hepl"], "Unknown option '--hepl'. Did you mean '--help'?"),
            (["--versoin"], "Unknown option '--versoin'. Did you mean '--version'?"),
            (["run", "f", "--versio"], "Unknown option '--versio'. Did you mean '--version'?"),
            (["run", "f", "--limit"], "Missing value for '--limit <limit>'"),
            (["run", "f", "--limit", "--dry-run"], "Missing value for '--limit <limit>'"),
            (["run", "f", "--dry-run=yes"], "The option '--dry-run' does not take any value, but 'yes' was specified."),
            (["run", "f", "--output", "jsn"], "The value 'jsn' is invalid for '--output <output>'. Please provide one of: auto, json. Did you mean 'json'?"),
            (["run"], "Missing expected argument '<file>'"),
            (["run", "a", "b", "c"], "Unexpected argument 'c'"),
            (["check"], "Missing expected argument '<files> ...'"),
        ]
        for (words, message) in cases {
            #expect(usageError(words)?.message == message, "\(words)")
        }
    }

    /// A word past the last argument (`task clean build` habits): the error names the
    /// argument it took for the one before, and says it takes one.
    @Test func anExtraWordNamesTheArgumentThatTakesOne() {
        let error = usageError(["run", "a", "b", "c"])
        #expect(error?.subject?.label == "<action>")
        #expect(error?.note == "'tool run' takes one <action>: give 'c' a command of its own; a value goes in with --var NAME=c")
        // After `--` (go-task's `task test -- -v`) the words were meant for the commands.
        let passed = usageError(["run", "a", "b", "--", "-v"])
        #expect(passed?.message == "Unexpected argument '-v'")
        #expect(passed?.subject?.label == "--var <key=value>")
        #expect(passed?.note == "'tool run' passes no words on to the commands it runs: give values as variables")
    }

    @Test func typedValuesThatDoNotConvertAreUsageErrors() throws {
        let a = try parsed(["run", "f", "--limit", "many"])
        #expect(throws: UsageError.self) { try a.value("limit", as: Int.self) }
        do {
            _ = try a.value("limit", as: Int.self)
        } catch {
            #expect(error.message == "The value 'many' is invalid for '--limit <limit>': expected a whole number, such as 4")
            #expect(error.subject?.label == "--limit <limit>")
        }
    }

    /// What a completion script asks: the line so far is read as far as it goes, nothing in
    /// it is an error.
    @Test func completionValuesReadAnUnfinishedLine() throws {
        func request(_ words: [String]) throws -> (String, String, ParsedArguments)? {
            guard case .completionValues(let query, let current, let typed) = try CommandLineParser.parse(
                ["--complete-values"] + words, root: sampleRoot) else { return nil }
            return (query, current, typed)
        }
        let (query, current, typed) = try #require(try request(["steps", "bu", "run", "w.yaml", "--only"]))
        #expect(query == "steps" && current == "bu")
        #expect(typed.command.name == "run")
        #expect(typed.argument("file") == "w.yaml")
        // Unknown options, a missing value, a choice not allowed, a value option's value.
        let loose = try #require(try request(["tags", "", "run", "--bogus", "--output", "xml", "-fn", "me", "w.yaml", "act",
                                              "extra", "--limit"]))
        #expect(loose.2.argument("file") == "w.yaml")
        #expect(loose.2.argument("action") == "act")
        #expect(loose.2.value("output") == "xml")
        #expect(loose.2.value("name") == "me")
        #expect(loose.2.flag("follow"))
        #expect(loose.2.value("limit") == nil)
        let equals = try #require(try request(["runs", "", "run", "--var=a=1", "--var", "b=2", "-nyou", "--", "-x.yaml"]))
        #expect(equals.2.values("var") == ["a=1", "b=2"])
        #expect(equals.2.value("name") == "you")
        #expect(equals.2.argument("file") == "-x.yaml")
        // Nothing after the program but the word: the root.
        #expect(try request(["runs", ""])?.2.command.name == "tool")
        #expect(try request(["steps", "", "check", "a", "b"])?.2.arguments("files") == ["a", "b"])
        // The script always gives the kind and the word.
        #expect(usageError(["--complete-values", "steps"]) != nil)
    }
}
