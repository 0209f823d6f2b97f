import ArgumentParser
import FlowKit

/// `flow run FILE [ACTION]`: run a workflow (or print its plan with `--dry-run`).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a workflow, or only one of its actions.",
        discussion: """
            With --dry-run, prints the execution tree (as `flow plan` does) and runs nothing.

            Exit status: 0 when every step succeeded (or was skipped, or failed with \
            continue_on_error); 1 when a step failed; 2 when the workflow is invalid or the \
            command line is wrong (nothing ran); 130 after SIGINT; 143 after SIGTERM.
            """
    )

    @Argument(help: "The workflow file.", completion: .file(extensions: ["yaml", "yml"]))
    var file: String

    @Argument(help: "Run only this action of the workflow (its params come from --with).")
    var action: String?

    @OptionGroup var selection: SelectionOptions

    @Flag(name: .customLong("dry-run"), help: "Print the execution tree and run nothing.")
    var dryRun = false

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

    func validate() throws {
        if let maxParallel, maxParallel < 1 { throw ValidationError("--max-parallel must be 1 or more") }
    }

    func run() async throws {
        try await execute()
    }

    /// The command's work; `main` calls it directly (ArgumentParser's synchronous default
    /// `run()` would otherwise win overload resolution there).
    func execute() async throws {
        if dryRun {
            try PlanCommand.printPlan(file: file, action: action, selection: selection, json: output == .json, noColor: noColor)
            return
        }
        let workflow = try WorkflowInput.loadValid(file, noColor: noColor)
        let plan = try WorkflowInput.plan(workflow, options: selection.planOptions(action: action))
        let status = await RunSession(plan: plan, command: self).run()
        throw ExitCode(status)
    }
}
