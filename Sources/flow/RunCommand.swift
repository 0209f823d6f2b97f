import ArgumentParser
import FlowKit

/// `flow run FILE [ACTION]`: run a workflow (or print its plan with `--dry-run`).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a workflow, or only one of its actions.",
        discussion: """
            With --dry-run, prints the execution tree (as `flow plan` does) and runs nothing.

            Exit status: 0 when every step succeeded (or was skipped, or failed with
            continue_on_error); 1 when a step failed; 2 when the workflow is invalid or the
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

    @Flag(name: .customLong("no-color"), help: "Disable color (also when NO_COLOR is set).")
    var noColor = false

    func run() async throws {
        if dryRun {
            try PlanCommand.printPlan(file: file, action: action, selection: selection, json: false, noColor: noColor)
            return
        }
        let workflow = try WorkflowInput.loadValid(file, noColor: noColor)
        _ = try WorkflowInput.plan(workflow, options: selection.planOptions(action: action))
        Console.stderr("error: running workflows is not built yet; use `flow run --dry-run` or `flow plan` to see what would run\n")
        throw ExitCode(2)
    }
}
