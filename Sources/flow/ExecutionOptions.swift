import FlowCommandLine
import FlowJournal
import FlowKit

/// Options of every command that runs steps: `run`, `resume`, `undo`.
struct ExecutionOptions {
    var output: OutputMode = .auto
    var quiet = false
    var noColor = false
    /// `--grace`, `--max-parallel`, and `--no-rollback` (or `resume`'s `--rollback`): nil
    /// when not given. A resume or undo takes those of the run (see `inherit`).
    var grace: DurationArgument?
    var maxParallel: Int?
    var rollback: Bool?
    var junit: String?
    var journal: JournalOptions
    var noJournal = false

    static let options: [OptionSpec] = [
        .value("output", help: "How to show the run: auto (tty on a terminal, else prefixed), tty, prefixed, grouped, raw or json.",
               choices: OutputMode.choices, defaultValue: "auto"),
        .flag("quiet", help: "Print only failures and the summary (output prefixed or grouped; auto picks prefixed)."),
        .flag("no-color", help: "Disable color (also when NO_COLOR is set); FORCE_COLOR=1 colours without a terminal."),
        .value("grace", valueName: "duration", help: "Time between the polite signal and SIGKILL when a step is stopped: on cancellation, a timeout or fail-fast.", defaultValue: "5s"),
        .value("max-parallel", valueName: "n", help: "Cap on running shell steps across the run (1 or more)."),
        .flag("no-rollback", help: "Do not run undo steps when the run fails or is cancelled."),
        .value("junit", valueName: "file", help: "Write a JUnit XML report of the steps.", completion: .file(extensions: [])),
    ] + JournalOptions.options + [
        .flag("no-journal", help: "Record nothing in the journal."),
    ]

    /// `options` as `resume` and `undo` take them: those a run records say that they default
    /// to the run's; `resume` has `--rollback` beside `--no-rollback`, to turn back on a
    /// rollback the run was started without (`undo`, itself a rollback, has neither).
    static func carryingOn(for command: String) -> [OptionSpec] {
        options.flatMap { option -> [OptionSpec] in
            var option = option
            switch option.long {
            case "grace": option.defaultValue = "the run's, else 5s"
            case "max-parallel": option.defaultValue = "the run's, else none"
            case "no-rollback" where command == "undo": return []
            case "no-rollback":
                option.help = "Do not run undo steps when the resume fails or is cancelled (as without it, when the run was started with it)."
                return [option, .flag("rollback", help: "Roll back if the resume fails or is cancelled, though the run was started with --no-rollback.")]
            default: break
            }
            return [option]
        }
    }

    init(_ arguments: ParsedArguments) throws(UsageError) {
        output = try arguments.value("output", as: OutputMode.self) ?? .auto
        quiet = arguments.flag("quiet")
        if quiet, let why = Self.showsEverything(output) {
            throw arguments.error("--quiet does not go with --output \(output.rawValue): \(why); for only failures and the "
                                  + "summary, use --output prefixed --quiet or --output grouped --quiet")
        }
        noColor = arguments.flag("no-color")
        grace = try arguments.value("grace", as: DurationArgument.self)
        maxParallel = try arguments.value("max-parallel", as: Int.self)
        if let maxParallel, maxParallel < 1 { throw arguments.error("--max-parallel must be 1 or more") }
        switch (arguments.flag("rollback"), arguments.flag("no-rollback")) {
        case (true, true): throw arguments.error("--rollback and --no-rollback contradict each other: give one")
        case (true, false): rollback = true
        case (false, true): rollback = false
        case (false, false): rollback = nil
        }
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

    /// The grace period when none is given: `--grace`'s default.
    static let defaultGrace = Duration.seconds(5)

    /// The options a run records for its resumes and undos to carry on (docs/journal.md,
    /// "Options a resume carries on").
    var recorded: RecordedOptions {
        RecordedOptions(rollback: rollback, maxParallel: maxParallel, grace: grace?.text)
    }

    /// Takes the recorded options of the run a resume or undo carries on, where none was
    /// given on its own command line; returns the note that says which it took (empty when
    /// none), for the command to print once it has said what it does: a resume that does
    /// not roll back, with nothing on its command line that says so, would surprise.
    mutating func inherit(_ run: RecordedOptions, from id: String) -> String {
        let taken = run.left(by: recorded).commandLine
        let note = taken.isEmpty ? "" : "note: carrying on \(taken) from run \(id)\n"
        let options = recorded.inheriting(run)
        rollback = options.rollback
        maxParallel = options.maxParallel
        // Recorded only once it parsed (a damaged one makes the arguments damaged).
        grace = options.grace.flatMap(DurationArgument.init(argument:))
        return note
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
    /// And `resume`'s `--rollback`, which `run` declines: offered `--no-rollback` as the
    /// nearest name, a user asking for rollback was pointed to its opposite.
    static func declined(by command: String) -> @Sendable (String) -> String? {
        { option in
            switch option {
            case "rollback" where command == "run":
                "a run rolls back when it fails unless given --no-rollback (or its workflow says `rollback: false`); "
                    + "--rollback is for `flow resume` of a run started with --no-rollback"
            case _ where command == "run":
                nil
            case "var", "with", "only", "tags", "skip-tags":
                "\(command) runs with the vars, --with values, ACTION and selection recorded with the run; "
                    + "to run with others, start a new run: flow run FILE …"
            case "dry-run" where command == "resume":
                "resume has no dry run: `flow show RUN` lists the steps that succeeded, which a resume reuses"
            case "dry-run":
                "undo has no dry run: `flow show RUN` lists the steps that succeeded, whose undo steps it runs"
            case "no-rollback" where command == "undo":
                "an undo is a rollback: without it, it would reverse nothing"
            case "rollback" where command == "undo":
                "an undo is a rollback: it always reverses the run's steps"
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
