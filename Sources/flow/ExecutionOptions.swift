import ArgumentParser
import FlowKit

/// Options of every command that runs steps: `run`, `resume`, `undo`.
struct ExecutionOptions: ParsableArguments {
    @Option(help: "How to show the run: auto (tty on a terminal, else prefixed), tty, prefixed, grouped, raw or json.")
    var output: OutputMode = .auto

    @Flag(help: "Print only failures and the summary.")
    var quiet = false

    @Flag(name: .customLong("no-color"), help: "Disable color (also when NO_COLOR is set).")
    var noColor = false

    @Option(help: ArgumentHelp("Time between the polite signal and SIGKILL on cancellation.", valueName: "duration"))
    var grace: DurationArgument = DurationArgument(argument: "5s")!

    @Option(name: .customLong("max-parallel"), help: ArgumentHelp("Cap on running shell steps across the run.", valueName: "n"))
    var maxParallel: Int?

    @Flag(name: .customLong("no-rollback"), help: "Do not run undo steps when the run fails or is cancelled.")
    var noRollback = false

    @Option(name: .customLong("junit"), help: ArgumentHelp("Write a JUnit XML report of the steps.", valueName: "file"))
    var junit: String?

    @OptionGroup var journal: JournalOptions

    @Flag(name: .customLong("no-journal"), help: "Record nothing in the journal.")
    var noJournal = false

    func validate() throws {
        if let maxParallel, maxParallel < 1 { throw ValidationError("--max-parallel must be 1 or more") }
    }
}

/// Where the journal lives.
struct JournalOptions: ParsableArguments {
    @Option(name: .customLong("state-dir"),
            help: ArgumentHelp("The journal's directory (default: $FLOW_STATE_DIR, else .flow).", valueName: "dir"))
    var stateDir: String?
}
