import FlowCommandLine
import FlowKit

/// Options of every command that runs steps: `run`, `resume`, `undo`.
struct ExecutionOptions {
    var output: OutputMode = .auto
    var quiet = false
    var noColor = false
    var grace = DurationArgument(argument: "5s")!
    var maxParallel: Int?
    var noRollback = false
    var junit: String?
    var journal: JournalOptions
    var noJournal = false

    static let options: [OptionSpec] = [
        .value("output", help: "How to show the run: auto (tty on a terminal, else prefixed), tty, prefixed, grouped, raw or json.",
               choices: OutputMode.choices, defaultValue: "auto"),
        .flag("quiet", help: "Print only failures and the summary (output prefixed or grouped; auto picks prefixed)."),
        .flag("no-color", help: "Disable color (also when NO_COLOR is set); FORCE_COLOR=1 colours without a terminal."),
        .value("grace", valueName: "duration", help: "Time between the polite signal and SIGKILL when a step is stopped: on cancellation, a timeout or fail-fast.", defaultValue: "5s"),
        .value("max-parallel", valueName: "n", help: "Cap on running shell steps across the run."),
        .flag("no-rollback", help: "Do not run undo steps when the run fails or is cancelled."),
        .value("junit", valueName: "file", help: "Write a JUnit XML report of the steps.", completion: .file(extensions: [])),
    ] + JournalOptions.options + [
        .flag("no-journal", help: "Record nothing in the journal."),
    ]

    init(_ arguments: ParsedArguments) throws(UsageError) {
        output = try arguments.value("output", as: OutputMode.self) ?? .auto
        quiet = arguments.flag("quiet")
        if quiet, let why = Self.showsEverything(output) {
            throw arguments.error("--quiet does not go with --output \(output.rawValue): \(why); for only failures and the "
                                  + "summary, use --output prefixed --quiet or --output grouped --quiet")
        }
        noColor = arguments.flag("no-color")
        if let grace = try arguments.value("grace", as: DurationArgument.self) { self.grace = grace }
        maxParallel = try arguments.value("max-parallel", as: Int.self)
        if let maxParallel, maxParallel < 1 { throw arguments.error("--max-parallel must be 1 or more") }
        noRollback = arguments.flag("no-rollback")
        junit = arguments.value("junit")
        // Refused before the run, not found at its end (`cannot write : No such file`), when
        // the report could never be written where it is asked for.
        if junit == "" { throw arguments.error("--junit needs a file name: the report is written there when the run ends") }
        if junit == "-" {
            throw arguments.error("--junit - would mix the report into the run's output on stdout: name a file (e.g. --junit junit.xml; ./- for a file named -)")
        }
        if let junit, WorkflowDirectory.isDirectory(Array(junit.utf8)) {
            throw arguments.error("--junit \(junit) is a directory: name the report's file, e.g. \(junit.hasSuffix("/") ? junit : junit + "/")junit.xml")
        }
        journal = JournalOptions(arguments)
        noJournal = arguments.flag("no-journal")
    }

    /// Why `mode` cannot leave anything out, or nil if `--quiet` fits it. Refused rather
    /// than ignored: a `--quiet` that prints everything would not do what it says.
    static func showsEverything(_ mode: OutputMode) -> String? {
        switch mode {
        case .tty: "tty is a live view of every step"
        case .raw: "raw passes every byte of every step through untouched"
        case .json: "json is the full stream of events"
        case .auto, .prefixed, .grouped: nil
        }
    }
}

/// Where the journal lives.
struct JournalOptions {
    var stateDir: String?

    static let options: [OptionSpec] = [
        .value("state-dir", valueName: "dir", help: "The journal's directory (default: $FLOW_STATE_DIR, else .flow).",
               completion: .directory),
    ]

    /// `flow run`'s options that `resume` and `undo` decline, with why: they run with the
    /// arguments recorded with the run, so that what they resume or reverse is what ran.
    static func declined(by command: String) -> @Sendable (String) -> String? {
        { option in
            switch option {
            case "var", "with", "only", "tags", "skip-tags":
                "\(command) runs with the vars, --with values, ACTION and selection recorded with the run; "
                    + "to run with others, start a new run: flow run FILE …"
            case "dry-run" where command == "resume":
                "resume has no dry run: `flow show RUN` lists the steps that succeeded, which a resume reuses"
            case "dry-run":
                "undo has no dry run: `flow show RUN` lists the steps that succeeded, whose undo steps it runs"
            case "no-rollback" where command == "undo":
                "an undo is a rollback: without it, it would reverse nothing"
            default:
                nil
            }
        }
    }

    /// The `RUN_ID` argument of `show`, `logs`, `resume` and `undo`.
    static let runArgument = ArgumentSpec("run-id", help: "The run: an id, a unique prefix, or `last`.",
                                          completion: CompletionValues.runs)

    init(_ arguments: ParsedArguments) {
        stateDir = arguments.value("state-dir")
    }
}
