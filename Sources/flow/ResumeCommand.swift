import FlowCommandLine
import FlowJournal
import FlowKit

/// `flow resume RUN`: run a failed, cancelled or interrupted run again, skipping what succeeded.
struct ResumeCommand: Command {
    static let spec = CommandSpec(
        name: "resume",
        abstract: "Run a failed, cancelled or interrupted run again, skipping the steps that succeeded.",
        discussion: """
            Leaf steps that succeeded are not run again; their recorded outputs are reused. \
            Groups run again around them, and every `finally` block runs again. The run uses \
            the workflow content and arguments recorded with it; if the file has changed since, \
            resume refuses unless --force, which uses the current file (a step that succeeded is reused \
            only when the step at its position is still the same step). \
            The steps run in the directory the run was started in, wherever resume is \
            invoked from. The new run is recorded as a run of its own; a run that was resumed \
            before is resumed through that run, and steps an undo reversed run again. \
            The run's --no-rollback, --max-parallel and --grace carry on unless given here \
            (--rollback turns rollback back on); --output, --quiet, --no-color and --junit \
            are this command's own.

            Examples:
              flow resume last                # after fixing what failed
              flow resume 6b0729 --force      # the workflow file was edited since
            """,
        arguments: [JournalOptions.runArgument],
        options: [.flag("force", help: "Resume even though the workflow file changed (with the current file).")]
            + ExecutionOptions.carryingOn(for: "resume"),
        declined: JournalOptions.declined(by: "resume")
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
        RunSession.goOnWhenPipesClose()
        try RunSession.requireOpenFiles()
        let (journal, found) = try JournalInput.run(execution.journal, runID)
        // Claimed first, so that what follows is decided on the run as it is once no other
        // `resume`, `undo` or `--prune` can change it.
        let record = try JournalInput.claim(journal, found)
        let id = record.id
        switch record.state {
        case "failed", "cancelled", "interrupted": break
        case "running":
            Console.stderr("error: run \(id) is still running (pid \(record.pid) on \(record.host))\n")
            throw ExitCode(2)
        default:
            Console.stderr("error: run \(id) \(record.state); there is nothing to resume\n")
            throw ExitCode(2)
        }
        if record.kind == "undo" {
            // As for a second `flow undo last`: the plain undo only where this one left something.
            if let undone = record.parentID, !JournalInput.holds(journal, undone) {
                Console.stderr("error: run \(id) is an undo of run \(undone), which is no longer in the journal "
                               + "(`flow runs --prune` deleted it); to do its steps again, run the workflow again\n")
                throw ExitCode(2)
            }
            let force = UndoCommand.leftSomething(record) ? "" : " --force"
            Console.stderr("error: run \(id) is an undo; run `flow undo \(record.parentID ?? id)\(force)` again instead\n")
            throw ExitCode(2)
        }
        try JournalInput.refuseIfArgumentsDamaged(record, command: "resume")
        try RecordedDirectory.check(record)
        let (resumes, undos) = try JournalInput.laterRuns(of: id, in: journal)
        try JournalInput.refuseIfResumed(id, by: resumes, command: "resume", in: journal)
        var content = record.content
        // A workflow read from standard input (`flow run -`) has no file to compare with:
        // the content recorded with the run is the workflow (and a `-` in the directory,
        // perhaps a FIFO, is not opened).
        let fromStdin = record.readStandardInput
        let read = Result { () throws(FileReader.Failure) in
            fromStdin ? record.content : try FileReader.read(pathBytes: JournalInput.workflowFile(record), name: record.workflowPath)
        }
        let current = try? read.get()
        if current != record.content {
            guard force else {
                let what: String
                switch read {
                // The content recorded with the run is not what its hash says (a row edited by
                // hand or by another tool): "changed since the run (H → H)" named one hash twice.
                case .success(let bytes) where Journal.hash(bytes) == record.contentHash:
                    what = "is as the run read it (\(record.contentHash)), but the workflow recorded with the run is damaged "
                        + "(it does not hash to that)"
                // No hashes: two of them said nothing a user could act on (dogfooding).
                case .success: what = "changed since the run"
                // Only a missing file is gone: a directory or an unreadable file says what it is.
                case .failure(let failure): what = failure.isMissing ? "is gone" : "cannot be read (\(failure.reason))"
                }
                Console.stderr("error: \(ControlEscaping.escaped(record.workflowPath)) \(what); resume would not run the same workflow\n")
                // With no file to read, --force runs the content recorded with the run (below).
                let with = current == nil ? "the workflow recorded with the run" : "the current file"
                // What --force then does with the steps that succeeded, said before it is used.
                let reuse = current == nil ? "" : ": a step that succeeded is reused where the same step (name, kind and command, message or "
                    + "duration) is still in its place, and runs again where it is not"
                Console.stderr("help: use --force to resume with \(with)\(reuse)\n")
                throw ExitCode(2)
            }
            if let current {
                content = current
            } else {
                // --force with no current file to use: say which content runs.
                Console.stderr("note: \(ControlEscaping.escaped(record.workflowPath)) cannot be read; resuming with the content recorded with the run\n")
            }
        }
        let (_, plan) = try JournalInput.plan(content: content, path: record.workflowDisplayPath, standardInput: fromStdin,
                                              args: record.args, noColor: execution.noColor,
                                              annotate: execution.output == .grouped && Console.inGitHubActions,
                                              junit: execution.junit)
        // A resume reads with the steps it never got to as the run it resumed left them.
        let steps = try JournalInput.attempt { () throws(JournalError) in try journal.carriedSteps(record) }
        var reuse = JournalInput.succeededResults(steps, leavesOnly: true)
        // A step a `flow undo` of this run reversed (or tried to) runs again, as one the
        // run rolled back itself does: its effect is gone, or in doubt.
        var reversed = Set(try JournalInput.reachedByUndos(undos, successes: [:], in: journal).keys.map(\.path))
        for path in reversed { reuse[path] = nil }
        // So does a step inside a group whose `undo` the run's rollback (or a `flow undo`)
        // ran: the group's undo reverses what its steps did, while their own records still
        // say `succeeded` (it was reused, and what it made was gone).
        reversed.formUnion(steps.filter { JournalInput.reversalStates.contains($0.state) }.map(\.path))
        JournalInput.dropSteps(inside: reversed, from: &reuse)
        // Steps match by path, a position: with another file (--force, now or in a resume
        // whose results this one carries on) a step whose position holds another step now
        // runs again rather than take its result.
        let changed = try JournalInput.attempt { () throws(JournalError) in
            try journal.unmatchedReuse(&reuse, steps: steps, plan: plan, content: content, run: record)
        }
        // The run is carried on as it was started: its `--no-rollback`, `--max-parallel` and
        // `--grace` hold unless given here, and are recorded with the resume, which a resume
        // of it carries on in turn.
        var execution = self.execution
        let carried = execution.inherit(record.args.options, from: id)
        var args = record.args
        args.options = execution.recorded
        let metadata = RunMetadata(id: ProcessEnvironment.newRunID(), kind: .resume, parentID: id, workflowPath: record.workflowPath,
                                   content: content, args: args, cwd: record.cwd,
                                   workflowPathBytes: record.workflowPathBytes, cwdBytes: record.cwdBytes)
        try RecordedDirectory.enter(record, options: &execution)
        var session = RunSession(plan: plan, options: execution, metadata: metadata)
        session.reuse = reuse
        session.stateDirAsGiven = self.execution.journal.stateDir
        // Where each reused result came from: the run resumed may only have reused it, or
        // carried it on unreached, from an earlier run, which ran it.
        let holders = Dictionary(steps.filter { reuse[$0.path] != nil }.map { ($0.path, $0.origin ?? id) },
                                 uniquingKeysWith: { first, _ in first })
        let producers = try JournalInput.attempt { () throws(JournalError) in try journal.producers(holders) }
        session.reusedSources = producers.filter { $0.value != id }
        let firstCompleted = steps.filter { reuse[$0.path] != nil }.sorted { $0.completed(before: $1) }
        session.reusedOrder = Dictionary(firstCompleted.enumerated().map { ($1.path, $0) }, uniquingKeysWith: { first, _ in first })
        let reused = JournalInput.reusedCount(reuse, plan: plan)
        Console.stderr("resuming run \(id): \(reused) step\(reused == 1 ? "" : "s") already succeeded\n")
        if !carried.isEmpty { Console.stderr(carried) }
        // A step at a path that held another one never ran: it runs, it does not run again.
        for (label, reason, anotherStep) in changed {
            Console.stderr("note: \(ControlEscaping.escaped(label)) runs\(anotherStep ? "" : " again"): \(ControlEscaping.escaped(reason))\n")
        }
        await session.run()
    }
}
