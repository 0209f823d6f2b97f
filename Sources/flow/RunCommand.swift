import ArgumentParser
import FlowJournal
import FlowKit

/// `flow run FILE [ACTION]`: run a workflow (or print its plan with `--dry-run`).
struct RunCommand: AsyncParsableCommand, AsyncExecutable {
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

    @OptionGroup var execution: ExecutionOptions

    func run() async throws {
        try await execute()
    }

    func execute() async throws {
        if dryRun {
            try PlanCommand.printPlan(file: file, action: action, selection: selection, json: execution.output == .json, noColor: execution.noColor)
            return
        }
        let workflow = try WorkflowInput.loadValid(file, noColor: execution.noColor)
        let planOptions = selection.planOptions(action: action)
        let plan = try WorkflowInput.plan(workflow, options: planOptions)
        let metadata = RunMetadata(id: ProcessEnvironment.newRunID(), kind: .run, parentID: nil, workflowPath: file,
                                   content: workflow.file.bytes, args: RunArguments(planOptions), cwd: RunSession.currentDirectory())
        let status = await RunSession(plan: plan, options: execution, metadata: metadata).run()
        throw ExitCode(status)
    }
}
