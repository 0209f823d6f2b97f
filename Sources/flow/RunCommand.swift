#if canImport(Glibc)
import Glibc
#endif
import FlowCommandLine
import FlowJournal
import FlowKit

/// `flow run FILE [ACTION]`: run a workflow (or print its plan with `--dry-run`).
struct RunCommand: Command {
    static let spec = CommandSpec(
        name: "run",
        abstract: "Run a workflow, or only one of its actions.",
        discussion: """
            With --dry-run, prints the execution tree (as `flow plan` does) and runs nothing.

            Ctrl-C (or SIGTERM, or SIGHUP) passes the signal once to every running step, SIGKILLs what \
            is left after --grace, then runs finally blocks and rollback; a second Ctrl-C \
            kills everything at once, and so does Ctrl-\\ (SIGQUIT). Ctrl-Z stops the steps with \
            flow; fg continues them.

            A step that fails where continue_on_error allows it ends `(allowed to fail)`, and \
            the summary counts it apart (`2 failed (1 allowed)`). A recorded run that fails or \
            is stopped by a signal ends with the command that resumes it (`flow resume ID`).

            Exit status: 0 when every step succeeded (or was skipped, or failed with \
            continue_on_error); 1 when a step failed; 2 when the workflow is invalid, the \
            command line is wrong, fewer than 64 files are left to open (ulimit -n), fewer than \
            16 processes are left to this user (ulimit -u), $TMPDIR is unusable or the current \
            directory was removed (nothing ran); 130 after SIGINT; 143 after SIGTERM; 129 \
            after SIGHUP (the terminal went away; ignored under nohup); 131 after SIGQUIT.

            Examples:
              flow run build.yaml
              flow run build.yaml --only test --var target=prod
              flow run build.yaml --tags lint,unit --output grouped
              flow run deploy.yaml release --with env=staging     # the action `release`
              flow resume last                                     # after a failure
            """,
        arguments: [
            ArgumentSpec("file", help: "The workflow file (- reads standard input).", completion: .file(extensions: ["yaml", "yml"])),
            ArgumentSpec("action", help: "Run only this action of the workflow (its params come from --with).", isOptional: true, completion: CompletionValues.actions),
        ],
        options: SelectionOptions.options + [.flag("dry-run", help: "Print the execution tree and run nothing.")]
            + ExecutionOptions.options,
        declined: JournalOptions.declined(by: "run")
    )

    var file: String
    var action: String?
    var selection: SelectionOptions
    var dryRun: Bool
    var execution: ExecutionOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        file = arguments.argument("file") ?? ""
        action = arguments.argument("action")
        selection = try SelectionOptions(arguments)
        dryRun = arguments.flag("dry-run")
        execution = try ExecutionOptions(arguments)
    }

    var onlyReads: Bool { dryRun }

    func run() async throws {
        if dryRun {
            try PlanCommand.printPlan(file: file, action: action, selection: selection, json: execution.output == .json, noColor: execution.noColor)
            return
        }
        RunSession.goOnWhenPipesClose()
        try RunSession.requireOpenFiles()
        try RunSession.requireCurrentDirectory()
        // The journal opens while the workflow is read and planned (see `JournalOpening`).
        let journal = execution.noJournal ? nil : JournalOpening.startIfPresent(stateDir: Journal.stateDir(option: execution.journal.stateDir))
        let planOptions = selection.planOptions(action: action)
        // In a GitHub Actions job under `--output grouped`, a refused workflow's errors
        // (and the warnings of one that runs, its selection's too) are annotations on the file too.
        let annotate = execution.output == .grouped && Console.inGitHubActions
        let workflow: Workflow, plan: Plan
        do {
            workflow = try WorkflowInput.loadValid(file, options: planOptions, noColor: execution.noColor, annotate: annotate)
            plan = try WorkflowInput.plan(workflow, options: planOptions)
        } catch {
            let name = file == "-" ? LoadedWorkflow.stdinName : ControlEscaping.displayName(ofPathBytes: RawArguments.bytes(of: file) ?? Array(file.utf8))
            WorkflowInput.reportRefusal(junit: execution.junit, workflow: name)
            throw error
        }
        WorkflowInput.warnUnselectedReferences(plan, noColor: execution.noColor, annotate: annotate)
        WorkflowInput.warnEmptySelection(plan, selection: selection)
        if workflow.file.isStandardInput { Self.reopenStandardInputAsTerminal() }
        // Names that are not UTF-8 are recorded as bytes too: `resume` reopens the file by them.
        let directory = PathBytes.currentDirectory() ?? Array(".".utf8)
        var args = RunArguments(planOptions)
        args.options = execution.recorded
        let metadata = RunMetadata(id: ProcessEnvironment.newRunID(), kind: .run, parentID: nil, workflowPath: file,
                                   content: workflow.file.bytes, args: args,
                                   cwd: ControlEscaping.displayName(ofPathBytes: directory),
                                   workflowPathBytes: RawArguments.bytes(of: file), cwdBytes: PathBytes.unlessUTF8(directory))
        var session = RunSession(plan: plan, options: execution, metadata: metadata)
        session.journal = journal
        session.stateDirAsGiven = execution.journal.stateDir
        await session.run()
    }

    /// The workflow was read from standard input (`flow run -`), to its end: an
    /// `interactive` step, which gets flow's standard streams, would read nothing but EOF
    /// there. Standard input becomes the controlling terminal, where there is one (as
    /// `xargs -o` does for its commands); without one it stays as it is.
    static func reopenStandardInputAsTerminal() {
        guard isatty(0) == 0 else { return }
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else { return }
        _ = dup2(tty, 0)
        close(tty)
    }
}
