#if canImport(Glibc)
import Glibc
#endif
import FlowJournal
import FlowKit

/// Wires a run together: reporters, the journal, signals, the executor; exits with the run's status.
struct RunSession {
    let plan: Plan
    let options: ExecutionOptions
    let metadata: RunMetadata
    /// `resume`: results of steps that already succeeded.
    var reuse: [String: StepResult] = [:]
    /// `resume`: the run that ran a reused result, where not the run resumed.
    var reusedSources: [String: String] = [:]
    /// `resume`: the order the reused results first completed in (see `RunOptions`).
    var reusedOrder: [String: Int] = [:]
    /// Seconds flow gives the end of a run after the second signal (the summary, the
    /// journal's record) before it exits without them.
    static let secondSignalDeadline: UInt32 = 2

    /// `undo`: the steps to roll back (completion order), instead of running the plan.
    var undo: [ReversedStep]?
    /// `undo`: how the run being undone ended (`run.status` in its undo steps).
    var undoneRunStatus: RunStatus = .failed
    /// The journal, if its opening was started early (`run`).
    var journal: JournalOpening?
    /// `--state-dir` as the user gave it, for the resume hint's command: `resume` makes
    /// `options`' absolute before it enters the run's directory.
    var stateDirAsGiven: String?

    init(plan: Plan, options: ExecutionOptions, metadata: RunMetadata) {
        self.plan = plan
        self.options = options
        self.metadata = metadata
    }

    static func currentDirectory() -> String {
        PathBytes.currentDirectory().map(ControlEscaping.displayName(ofPathBytes:)) ?? "."
    }

    /// Fewer open files than this, and flow cannot run even one step (its own event loop,
    /// signal pipe, journal, the step's pipes: about 25), or it runs it once and then waits
    /// forever for a descriptor no step will free.
    static let minimumOpenFiles = 64

    /// Raises the open-file limit to the hard limit; exit 2 (nothing has run yet) if even
    /// that leaves fewer than `minimumOpenFiles` free (descriptors the parent left open
    /// count against it). Called by `run`, `resume` and `undo` before anything else (the
    /// process hub makes its descriptors at its first use).
    static func requireOpenFiles() throws {
        let limit = OpenFileLimit.raiseToHardLimit()
        let inherited = OpenFileLimit.inheritedDescriptors(below: limit)
        guard limit - inherited < minimumOpenFiles else { return }
        if inherited == 0 {
            Console.stderr("error: flow may open only \(limit) files at once (ulimit -n); running steps needs at least "
                           + "\(minimumOpenFiles): raise the limit (e.g. `ulimit -n 1024`)\n")
        } else {
            Console.stderr("error: flow may open only \(limit) files at once (ulimit -n) and the process that started it "
                           + "left \(inherited) more than stdin, stdout and stderr open; running steps needs at least "
                           + "\(minimumOpenFiles) free: raise the limit (e.g. `ulimit -n 1024`) or close those files "
                           + "before starting flow\n")
        }
        throw ExitCode(2)
    }

    /// Exit 2 (nothing has run yet) when the current directory cannot be had: removed
    /// (`cd d && rmdir ../d && flow run …`) or unreadable. Called by `run` before anything
    /// else. Why: the steps ran in a directory that is gone (each shell said `getcwd()
    /// failed`, files they wrote were lost with it) and the run was recorded as run in `.`,
    /// so `flow resume` ran its steps wherever it was invoked. go-task and Ansible refuse too.
    static func requireCurrentDirectory(because use: String = "the steps would run in it") throws {
        guard PathBytes.currentDirectory() == nil else { return }
        let reason = errno == ENOENT ? "it was removed" : String(cString: strerror(errno))
        Console.stderr("error: cannot tell the current directory (\(reason)); cd to a directory that exists: "
                       + "\(use); nothing was run\n")
        throw ExitCode(2)
    }

    /// A closed stdout or stderr must not end a run, resume or undo (children still get
    /// the default SIGPIPE): its steps go on and are recorded. Called by each of them
    /// before its first write, not only here: a warning about the workflow, or resume's
    /// "resuming run" line, written to a pipe whose reader was gone ended the command
    /// (141) before any step ran, where later the same closed pipe would not have.
    static func goOnWhenPipesClose() {
        SignalDisposition.ignore(SIGPIPE)
        Console.closedPipeEndsFlow.store(false, ordering: .relaxed)
    }

    /// Runs the plan, then exits flow with the run's status.
    func run() async -> Never {
        _ = OpenFileLimit.raiseToHardLimit()
        Self.goOnWhenPipesClose()
        let color = Console.useColor(fd: 2, disabled: options.noColor)
        var mode = options.output
        if mode == .auto {
            mode = isatty(2) == 1 && !TerminalType.isDumb && !options.quiet ? .tty : .prefixed
        }
        let bus = EventBus()
        // `run` and `resume` that do not succeed say how to resume them, an undo how to undo
        // what it left; the json events carry the run's id for a program to act on.
        let hint = mode != .json && !options.noJournal
            ? ResumeHint(runID: metadata.id, stateDir: stateDirAsGiven, undoing: undo == nil ? nil : metadata.parentID) : nil
        var fullOutput: (@Sendable (String) -> String?)?
        if let hint { fullOutput = { label in hint.logsCommand(step: label) } }
        let cancellation = RunCancellation()
        let tty = mode == .tty
            ? TTYReporter(plan: plan, color: color, fullOutput: fullOutput, signalCount: { cancellation.requests }) : nil
        // flow's own lines from outside the run's events, once it may have started: the live
        // tree writes them above itself (it erases itself by counting the rows it drew).
        let say: @Sendable (String) -> Void = { text in
            if let tty { tty.interject(text) } else { Console.stderr(text) }
        }
        switch mode {
        case .tty: if let tty { bus.add(tty) }
        case .prefixed, .auto:
            let width = PrefixedReporter.labelWidth(of: plan)
            // Labels on stdout are coloured only when stdout is a terminal too (or forced).
            let stdoutColor = color && (isatty(1) == 1 || Console.colorForced)
            bus.add(PrefixedReporter(color: color, stdoutColor: stdoutColor, quiet: options.quiet, labelWidth: width,
                                     details: StepDetails.of(plan), fullOutput: fullOutput))
        case .grouped:
            bus.add(GroupedReporter(color: color, github: Console.inGitHubActions,
                                    quiet: options.quiet, details: StepDetails.of(plan), places: StepDetails.places(of: plan)))
        case .raw: bus.add(RawReporter(color: color, passThrough: options.noJournal))
        case .json: bus.add(JSONReporter())
        }
        let undoing = self.undo != nil
        let junit = options.junit.map { JUnitReport(path: $0, plan: plan, undoing: undoing) }
        if let junit { bus.add(junit) }
        var runOptions = RunOptions(runID: metadata.id, environment: ProcessEnvironment.current())
        runOptions.grace = options.grace?.value ?? ExecutionOptions.defaultGrace
        runOptions.maxParallel = options.maxParallel
        runOptions.rollback = options.rollback ?? true
        // Raw output reaches the journal only through flow: captured (and passed through
        // byte for byte by RawReporter) unless nothing records it.
        runOptions.passThroughOutput = mode == .raw && options.noJournal
        runOptions.stdoutCarriesEvents = mode == .json
        runOptions.reuse = reuse
        runOptions.reusedFrom = metadata.parentID
        runOptions.reusedSources = reusedSources
        runOptions.reusedOrder = reusedOrder
        runOptions.undoneRunStatus = undoneRunStatus
        // The executor, once made: the second signal's handler removes what it made.
        let made = SetLater<Executor>()
        // The handlers go in before the executor is made, which makes the run's scratch
        // directory (the `FLOW_OUTPUT` files, in /dev/shm or $TMPDIR): a SIGINT or SIGTERM
        // between the two killed flow and left the directory until a later run's sweep. A
        // signal there is now the run's: no step starts, it ends `cancelled` (130, 143) and
        // the directory goes with it. (Handlers, not a blocked mask: threads of flow's are
        // running already, and a process signal goes to any thread not blocking it.)
        // And before the journal is told of the run: a signal from the moment its row
        // may be written is the run's to record (`cancelled`, 143 after SIGTERM). After, a
        // SIGTERM while `flow undo` waited for the journal (or while a run's row was being
        // written) killed flow outright, leaving the run `interrupted` or its lock file behind,
        // and the undo not done (found by the concurrency audit).
        // `flow undo` settles every step before it runs an undo step: none is left pending.
        let leafSteps = undo == nil ? Executor.leafCount(plan.root) : nil
        let trap = SignalTrap(cancellation: cancellation, closing: { bus.close() }) { signal, trigger in
            // Output flow cannot write (a reader that stopped reading: `flow run … | less`)
            // holds the event bus, and with it everything below: flow waited for the reader,
            // whatever the signals said. The second signal means now: after a moment flow
            // exits without what it could not write.
            BackgroundThread.start {
                sleep(Self.secondSignalDeadline)
                // `_exit` skips the executor's own removal: the run's scratch directory
                // stayed (in /dev/shm) until some later run's sweep.
                made.value?.discard()
                RunClaim.releaseHeldClaims()
                _exit(128 + signal)
            }
            // The run still ends as runs do: the killed steps `cancelled`, the summary (or
            // `run_finished`), and the run's end in the journal (`cancelled`, not a run that
            // looks `interrupted` until its lock is found stale).
            let quit = trigger == SIGQUIT
            let status = bus.abandon(exitStatus: 128 + signal, reason: quit ? "killed by SIGQUIT" : "killed by the second signal",
                                     leafSteps: leafSteps) {
                say(quit ? "\nflow: SIGQUIT; killed every step\n" : "\nflow: second signal; killed every step\n")
            }
            if let failure = junit?.failure { Console.stderr("error: \(failure)\n") }
            // A run killed by the second signal is resumable as one the first ended.
            if let line = hint?.line(succeeded: status == 0) { Console.stderr(line) }
            made.value?.discard()
            // `_exit` runs no `atexit` handler: the claim of a `resume` or `undo` goes here.
            RunClaim.releaseHeldClaims()
            _exit(status)
        }
        let executor: Executor
        do {
            executor = try Executor(plan: plan, options: runOptions, bus: bus, cancellation: cancellation)
        } catch {
            // Before the journal is told of the run: a run that never started is not
            // recorded (it was, as `interrupted`).
            Console.stderr("error: \(error); nothing was run\n")
            Glibc.exit(2)
        }
        made.value = executor
        // Its handlers were in from the start; the reader of what they caught starts now,
        // once the executor is made (see `SignalTrap.listen`).
        trap.listen()
        // The journal is one more observer, opened while the run starts (see
        // `JournalRecorder.opening`). If it cannot be opened the run still goes on: its
        // output is on the terminal either way.
        var journalRecorder: JournalRecorder?
        if !options.noJournal {
            let recorder = JournalRecorder.opening(
                stateDir: Journal.stateDir(option: options.journal.stateDir), metadata: metadata, plan: plan, prefetched: journal,
                warn: { message in say(message + "\n") },
                failed: { error in say("error: \(error.description); this run is not recorded\n") })
            bus.add(recorder)
            journalRecorder = recorder
            hint?.watch(recorder)
            // An undo the journal does not record could be run again (its guard against a
            // second undo reads the journal): none runs unrecorded. Nor does a resume: the
            // journal would still hold the steps it ran again as they were, and those its
            // rollback reversed as succeeded, so a later `flow undo` reversed them twice
            // (another process holding the journal locked past the busy timeout did it).
            if undo != nil || metadata.kind == .resume, !recorder.waitUntilRecording() {
                Console.stderr(undo != nil
                    ? "error: the undo cannot be recorded in the journal, so nothing was undone (unrecorded, it could be run again)\n"
                    : "error: the resume cannot be recorded in the journal, so nothing was run (unrecorded, a later resume or "
                        + "undo would run its steps, or reverse them, again)\n")
                executor.discard()
                Glibc.exit(2)
            }
        }

        // The executor's tasks run on the process hub's thread: a step's exit wakes the task
        // that waits for it without a thread hop (about 0.2 ms per step; see bench/).
        let undo = self.undo
        let recorder = journalRecorder, runID = metadata.id
        // flow exits from here, on the hub's thread, once the run has ended: returning the
        // status would hop to a thread of the pool and then to the main actor's, which
        // dispatch makes for it (a thread made and scheduled at the very end of every run,
        // about a fifth of a one-step run's time after its last step).
        await withTaskExecutorPreference(ProcessHub.shared.executor) { () async -> Void in
            let outcome = if let undo { await executor.runUndo(undo) } else { await executor.run() }
            withExtendedLifetime(trap) {}
            if let failure = junit?.failure {
                Console.stderr("error: \(failure)\n")
            }
            // Said on stderr, which may be the stream that failed: then nothing better can be done.
            // The hint only when the journal has the lines: one that stopped recording (the
            // disk that refused stdout is often the state dir's too) has not.
            let recorded = recorder?.isRecording ?? false
            if let lost = LostOutput.shared.warning(logsHint: recorded ? "`flow logs \(runID)`" : nil) {
                Console.stderr(lost)
            }
            // Last, below the summary (and what went wrong with the report): the next step.
            if let line = hint?.line(succeeded: outcome.status == .succeeded, counts: outcome.counts) { Console.stderr(line) }
            Glibc.exit(outcome.exitCode)
        }
        fatalError("not reached: the run exits flow above")
    }
}

