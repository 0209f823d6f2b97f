import FlowCommandLine
import FlowJournal
import FlowKit

/// `flow undo RUN`: roll back a finished run.
struct UndoCommand: Command {
    static let spec = CommandSpec(
        name: "undo",
        abstract: "Roll back a finished run: the undo steps of its succeeded steps, latest first.",
        discussion: """
            Uses the workflow content and outputs recorded with the run, so undo steps see \
            `steps.<name>.outputs` as they were, in the directory the run was started in. \
            Steps the run already rolled back are left \
            alone. The rollback is recorded as a run of its own; a run that was undone \
            before is refused unless --force.
            """,
        arguments: [JournalOptions.runArgument],
        // `--no-rollback` would mean nothing here: an undo is a rollback.
        options: [.flag("force", help: "Undo again a run that was undone before.")]
            + ExecutionOptions.options.filter { $0.long != "no-rollback" }
    )

    var runID: String
    var force: Bool
    var execution: ExecutionOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        runID = arguments.argument("run-id") ?? ""
        force = arguments.flag("force")
        execution = try ExecutionOptions(arguments)
    }

    func run() async throws {
        try RunSession.requireOpenFiles()
        let (journal, record) = try JournalInput.run(execution.journal, runID)
        let id = record.id
        if record.state == "running" {
            Console.stderr("error: run \(id) is still running (pid \(record.pid) on \(record.host)); undo it once it ends\n")
            throw ExitCode(2)
        }
        if record.kind == "undo" {
            Console.stderr("error: run \(id) is itself an undo\n")
            throw ExitCode(2)
        }
        try RecordedDirectory.check(record)
        try JournalInput.claim(journal, record)
        let history = try JournalInput.attempt { () throws(JournalError) in try journal.runs(limit: nil) }
        if !force, let earlier = history.first(where: { $0.kind == "undo" && $0.parentID == id && $0.state == "succeeded" }) {
            Console.stderr("error: run \(id) was already undone by run \(earlier.id)\n")
            Console.stderr("help: use --force to run its undo steps again\n")
            throw ExitCode(2)
        }
        let (_, plan) = try JournalInput.plan(content: record.content, path: record.workflowPath, args: record.args,
                                              noColor: execution.noColor)
        let steps = try JournalInput.attempt { () throws(JournalError) in try journal.steps(id) }
        let seeds = JournalInput.succeededResults(steps, leavesOnly: false)
        let order = steps.filter { $0.state == "succeeded" && $0.completedSeq != nil }
            .sorted { $0.completedSeq! < $1.completedSeq! }
            .map { (path: $0.path, result: seeds[$0.path]!) }
        let undoable = order.filter { step in plan.steps.contains { $0.path == step.path && !$0.undo.isEmpty } }
        guard !undoable.isEmpty else {
            Console.stdout("run \(id) has no succeeded steps with `undo`; nothing to roll back\n")
            return
        }
        let metadata = RunMetadata(id: ProcessEnvironment.newRunID(), kind: .undo, parentID: id, workflowPath: record.workflowPath,
                                   content: record.content, args: record.args, cwd: record.cwd,
                                   workflowPathBytes: record.workflowPathBytes, cwdBytes: record.cwdBytes)
        var execution = self.execution
        try RecordedDirectory.enter(record, options: &execution)
        var session = RunSession(plan: plan, options: execution, metadata: metadata)
        session.reuse = seeds
        session.undo = undoable
        await session.run()
    }
}
