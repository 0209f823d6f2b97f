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
            A step a retried group ran several times is reversed once per attempt that \
            succeeded, each with its own outputs, as the run's own rollback does. \
            Steps already undone (by the run's own rollback or an earlier undo) are left \
            alone; steps whose undo failed or was cut short are undone again. Once every \
            step is undone, undo is refused (exit 2); --force undoes again the steps an \
            earlier undo reversed. A run that was resumed is undone \
            through its resume. The rollback is recorded as a run of its own. The run's \
            --grace and --max-parallel carry on unless given here.

            Examples:
              flow show 6b0729                # the steps that succeeded: their undo steps run
              flow undo 6b0729
              flow undo last --force          # reverse again what an earlier undo reversed
            """,
        arguments: [JournalOptions.runArgument],
        // `--no-rollback` would mean nothing here: an undo is a rollback.
        options: [.flag("force", help: "Undo again the steps an earlier undo of the run reversed.")]
            + ExecutionOptions.carryingOn(for: "undo"),
        declined: JournalOptions.declined(by: "undo")
    )

    var runID: String
    var force: Bool
    var execution: ExecutionOptions

    init(_ arguments: ParsedArguments) throws(UsageError) {
        runID = arguments.argument("run-id") ?? ""
        force = arguments.flag("force")
        execution = try ExecutionOptions(arguments)
    }

    /// Says why run `undo`, itself an undo, is not undone, and what to type instead. `last`
    /// is the newest run for every command (as the contract has it): right after a `flow
    /// undo`, that is the undo, so a second `flow undo last` lands here. The message names
    /// the run `last` picked, the run it undid and what it did to it, and the command for
    /// that run: `flow undo R` when the undo left something (`leftSomething`), else `flow
    /// undo R --force` to reverse its steps again. Said before, `an undo
    /// is not undone` and "run the workflow again" did not say how to undo the run again.
    /// `undoneKept`: whether the run it undid is still in the journal; once `runs --prune`
    /// has deleted it, no command undoes it again, and none is given (the one given was
    /// refused, `no run R`).
    func refuseUndoOfUndo(_ undo: RunRecord, undoneKept: Bool) {
        let picked = runID == "last" ? "`last` is run \(undo.id), the newest run, which" : "run \(undo.id)"
        guard let undone = undo.parentID else {
            Console.stderr("error: \(picked) is itself an undo; an undo is not undone\n")
            return
        }
        let did = ["undone", "undo_failed", "undo_interrupted"].compactMap { state in
            undo.counts[state].flatMap { $0 > 0 ? "\($0) \(state)" : nil }
        }
        let what = did.isEmpty ? "" : ": " + did.joined(separator: ", ")
        Console.stderr("error: \(picked) is itself an undo (of run \(undone)\(what)); an undo is not undone\n")
        let command = ResumeHint(runID: undone, stateDir: execution.journal.stateDir, undoing: undone).command
        if !undoneKept {
            Console.stderr("help: run \(undone) is no longer in the journal (`flow runs --prune` deleted it), so it cannot be undone again; "
                           + "to do its steps again, run the workflow again\n")
        } else if !Self.leftSomething(undo) {
            Console.stderr("help: to reverse run \(undone)'s steps again: \(command) --force; to do them again, run the workflow again\n")
        } else {
            Console.stderr("help: to undo what run \(undone) has left: \(command)\n")
        }
    }

    /// Whether `undo` left steps of the run it undid to undo: one it failed to reverse, was
    /// killed reversing or never got to (a count other than `undone`), or nothing counted
    /// (stopped before its rollback began). Its state does not tell: a first SIGINT lets the
    /// rollback go on to its end, and an undo `cancelled` with every step `undone` was
    /// answered `flow undo R`, which `already undone` refused.
    static func leftSomething(_ undo: RunRecord) -> Bool {
        undo.state != "succeeded" && (undo.counts.isEmpty || undo.counts.contains { $0.key != "undone" && $0.value > 0 })
    }

    func run() async throws {
        RunSession.goOnWhenPipesClose()
        try RunSession.requireOpenFiles()
        let (journal, found) = try JournalInput.run(execution.journal, runID)
        // Claimed first, so that what follows is decided on the run as it is once no other
        // `resume`, `undo` or `--prune` can change it.
        let record = try JournalInput.claim(journal, found)
        let id = record.id
        if record.state == "running" {
            Console.stderr("error: run \(id) is still running (pid \(record.pid) on \(record.host)); undo it once it ends\n")
            throw ExitCode(2)
        }
        if record.kind == "undo" {
            refuseUndoOfUndo(record, undoneKept: record.parentID.map { JournalInput.holds(journal, $0) } ?? false)
            throw ExitCode(2)
        }
        try JournalInput.refuseIfArgumentsDamaged(record, command: "undo")
        try RecordedDirectory.check(record)
        let (resumes, undos) = try JournalInput.laterRuns(of: id, in: journal)
        try JournalInput.refuseIfResumed(id, by: resumes, command: "undo", in: journal)
        let (_, plan) = try JournalInput.plan(content: record.content, path: record.workflowDisplayPath,
                                              standardInput: record.readStandardInput, args: record.args,
                                              noColor: execution.noColor,
                                              annotate: execution.output == .grouped && Console.inGitHubActions,
                                              junit: execution.junit)
        // A resume reads with the steps it never got to as the run it resumed left them; a
        // step that succeeded in several attempts of its retried group, once per success.
        let steps = try JournalInput.attempt { () throws(JournalError) in try journal.undoableSteps(record) }
        var seeds = JournalInput.succeededResults(steps, leavesOnly: false)
        // A result a killed `--force` resume carried on from the run it resumed is taken by
        // path: after the edit its path can hold another step, whose `undo` (with the
        // outputs of the step that ran) would reverse what never ran. Such a step is left
        // alone, and said so.
        let reversible: Set<String> = ["succeeded", "undo_failed", "undoing"]
        var carried: [String: StepResult] = [:]
        for step in steps where step.origin != nil && reversible.contains(step.state) {
            carried[step.path] = StepResult(state: .succeeded, exitCode: nil, outputs: [:])
        }
        let checked = Set(carried.keys)
        let foreign = try JournalInput.attempt { () throws(JournalError) in
            try journal.unmatchedReuse(&carried, steps: steps, plan: plan, content: record.content, run: record)
        }
        let leftAlone = checked.subtracting(carried.keys)
        for path in leftAlone { seeds[path] = nil }
        for (label, reason, _) in foreign {
            Console.stderr("note: \(ControlEscaping.escaped(label)) is not undone: \(ControlEscaping.escaped(reason)); "
                           + "that step's result is left as it is\n")
        }
        // Every success of the run's steps, in the order they completed (steps carried on
        // from an earlier run before any of this run's); each instance of a step that
        // succeeded in several attempts of its retried group is one, as in the run's own
        // rollback. Those to reverse: the ones that succeeded, and those whose rollback in
        // the run failed or was cut short (`undo_failed`, `undoing`): their undo is tried again.
        let history = steps.filter {
            (reversible.contains($0.state) || $0.state == "undone") && $0.completedSeq != nil && !leftAlone.contains($0.path)
        }
            .sorted { $0.completed(before: $1) }
            .map {
                ReversedStep(path: $0.path, result: StepResult(state: .succeeded, exitCode: $0.exitCode.map(Int32.init), outputs: $0.outputs),
                             success: $0.success, successes: $0.successes, reverses: reversible.contains($0.state))
            }
        let order = history.filter(\.reverses)
        // Taken once: `plan.steps` walks the plan, and a search of it per step made the undo
        // of 10,000 steps wait minutes before the first one.
        let withUndo = Set(plan.steps.filter { !$0.undo.isEmpty }.map(\.path))
        let undoable = order.filter { withUndo.contains($0.path) }
        guard !undoable.isEmpty else {
            // Every step with an `undo` was rolled back by the run itself: as refused as a run
            // an earlier `flow undo` reversed (exit 2), not "nothing to roll back" (exit 0), which
            // said the run never had anything to reverse. --force does not apply: it undoes
            // again what an earlier undo reversed, not the run's own rollback.
            let undone = steps.filter { step in
                step.state == "undone" && withUndo.contains(step.path)
            }.count
            if undone > 0 {
                Console.stderr("error: run \(id) was already rolled back by its own rollback (\(undone) step\(undone == 1 ? "" : "s") undone); "
                               + "nothing is left to undo\n")
                throw ExitCode(2)
            }
            // With `--output json` stdout carries only events (a CI job parses each line as
            // one): the message goes to stderr there, and no event is written, as nothing ran.
            let message = "run \(id) has no succeeded steps with `undo`; nothing to roll back\n"
            if execution.output == .json { Console.stderr(message) } else { Console.stdout(message) }
            return
        }
        // Steps an earlier `flow undo` of this run reversed are left alone unless --force;
        // those it failed to reverse (or was killed reversing) are tried again.
        let successes = Dictionary(history.map { ($0.path, $0.successes) }, uniquingKeysWith: max)
        let reached = try JournalInput.reachedByUndos(undos, successes: successes, in: journal)
        let pending = force ? undoable : undoable.filter { reached[JournalInput.Reversal($0)]?.state != "undone" }
        if pending.isEmpty {
            // The latest of the undos that reversed them (`undos` is newest first).
            let undoers = Set(undoable.compactMap { reached[JournalInput.Reversal($0)]?.by })
            let by = undos.first { undoers.contains($0.id) }?.id ?? undoers.first ?? "?"
            // A later undo that reversed none of them (one cancelled before it reached any)
            // is the one `flow show` points at, the latest: named too, or the user read of
            // an earlier undo only. (One that failed to reverse a step left it to undo.)
            var later = ""
            if let latest = undos.first, latest.id != by {
                let ended = ["failed": "failed", "cancelled": "was cancelled", "interrupted": "was interrupted"][latest.state]
                    ?? latest.state
                later = "; its latest undo, run \(latest.id), \(ended)"
            }
            Console.stderr("error: run \(id) was already undone by run \(by)\(later)\n")
            Console.stderr("help: use --force to run its undo steps again\n")
            throw ExitCode(2)
        }
        if pending.count < undoable.count {
            let left = undoable.count - pending.count
            Console.stderr("undoing run \(id): \(left) step\(left == 1 ? "" : "s") already undone by an earlier undo "
                           + "left alone (--force undoes them again)\n")
        }
        // The run's rollback, done later: with the `--grace` and `--max-parallel` its own
        // rollback would have had (its undo steps are the run's steps), unless given here.
        // Not its `--no-rollback`, which would reverse nothing.
        var execution = self.execution
        let run = record.args.options
        let carriedOptions = execution.inherit(RecordedOptions(maxParallel: run.maxParallel, grace: run.grace), from: id)
        var args = record.args
        args.options = execution.recorded
        let metadata = RunMetadata(id: ProcessEnvironment.newRunID(), kind: .undo, parentID: id, workflowPath: record.workflowPath,
                                   content: record.content, args: args, cwd: record.cwd,
                                   workflowPathBytes: record.workflowPathBytes, cwdBytes: record.cwdBytes)
        try RecordedDirectory.enter(record, options: &execution)
        var session = RunSession(plan: plan, options: execution, metadata: metadata)
        session.reuse = seeds
        // As given, not as made absolute in the recorded directory: the hint of an undo left
        // unfinished (`flow undo ID`) lacked it, and looked for the run in the default journal.
        session.stateDirAsGiven = self.execution.journal.stateDir
        // Every success is given, in order, those not reversed too: an undo step of an
        // earlier attempt sees the results of that attempt's steps, as in the run's rollback.
        let reversing = Set(pending.map(JournalInput.Reversal.init))
        session.undo = history.map { step in
            var step = step
            step.reverses = reversing.contains(JournalInput.Reversal(step))
            return step
        }
        // Each reversed result is said to have succeeded in the run that ran it, as `flow
        // resume` names a reused step: a step the resume being undone reused (or never
        // reached) ran in an earlier run. It said the resume's id, which did not run it.
        let holders = Dictionary(steps.filter { reversible.contains($0.state) }.map { ($0.path, $0.origin ?? id) },
                                 uniquingKeysWith: { first, _ in first })
        let producers = try JournalInput.attempt { () throws(JournalError) in try journal.producers(holders) }
        session.reusedSources = producers.filter { $0.value != id }
        // What its undo steps see as `run.status`: how the run ended (one flow killed never
        // ended; it stopped as a cancelled one does).
        session.undoneRunStatus = record.state == "succeeded" ? .succeeded : record.state == "failed" ? .failed : .cancelled
        if !carriedOptions.isEmpty { Console.stderr(carriedOptions) }
        await session.run()
    }
}
