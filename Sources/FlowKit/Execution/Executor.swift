#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Runs a `Plan`: the same tree `flow plan` prints, never a second reading of the file.
///
/// Structured concurrency carries the semantics: a sequential group is a loop, a concurrent
/// group a task group (with a limiter for `max_parallel`), fail-fast and time-outs cancel
/// a task, and `finally` blocks and rollback run in tasks the first interrupt does not cancel.
public final class Executor: Sendable {
    /// Where a step runs: in the main tree, in a `finally` block, or during rollback.
    /// Only the main tree stops starting steps when the run is cancelled.
    enum Mode {
        case normal
        case finally
        case undo
    }

    let plan: Plan
    let options: RunOptions
    let bus: EventBus
    let cancellation: RunCancellation
    let runState = RunState()
    let hub: ProcessHub
    let globalLimiter: AdmissionLimiter?
    let spawnLimiter: AdmissionLimiter
    let terminal = TerminalGate()
    let scratch: ScratchDirectory
    /// flow's environment (`options.environment`), encoded once for every step's spawn.
    let environment: ChildEnvironment
    /// By path, the labels of the steps whose name another step of the plan has too (the
    /// steps of an action used twice, or named as a workflow step is): `name@path`.
    let sharedNameLabels: [String: String]
    /// The nodes whose failure does not fail the run (`failureAllowedNodes`).
    let failureAllowed: Set<ObjectIdentifier>
    /// The nodes inside a group with `retry` (`retriedGroupNodes`).
    let retriedGroup: Set<ObjectIdentifier>
    /// The workflow's steps have ended: what is left is `finally` and rollback, which a
    /// first signal does not interrupt (the note at the signal says so).
    let stepsEnded = Flag()
    /// `flow undo`: the run rolled back has ended, and how is fixed (`run.status` and the
    /// status functions in its undo steps); a signal to the undo cancels the undo run only.
    let undoesEndedRun = Flag()

    public init(plan: Plan, options: RunOptions, bus: EventBus, cancellation: RunCancellation, hub: ProcessHub = .shared) throws {
        self.plan = plan
        self.options = options
        self.bus = bus
        self.cancellation = cancellation
        self.hub = hub
        globalLimiter = options.maxParallel.map { AdmissionLimiter(permits: $0) }
        spawnLimiter = AdmissionLimiter(permits: max(OpenFileLimit.suggestedConcurrentChildren(), 8))
        var base = options.environment
        base["FLOW_RUN_ID"] = options.runID
        environment = ChildEnvironment(base)
        sharedNameLabels = Self.sharedNameLabels(plan.root)
        failureAllowed = Self.failureAllowedNodes(plan.root)
        retriedGroup = Self.retriedGroupNodes(plan.root)
        scratch = try ScratchDirectory(runID: options.runID, expectedFiles: Self.shellCount(plan.root)) { [hub] in hub.whenIdle($0) }
        if plan.root.runsProcesses { ProcessGuard.shared.startSoon() }
    }

    /// Names repeat only across actions' scopes (each `use` of an action is one), where
    /// output by name alone could not tell which step wrote a line or failed: those steps
    /// are labelled `name@path`, as unnamed ones are `KIND@PATH`.
    static func sharedNameLabels(_ root: PlanNode) -> [String: String] {
        var byName: [String: [String]] = [:]
        func visit(_ node: PlanNode) {
            if let name = node.name { byName[name, default: []].append(node.path) }
            for child in node.children { visit(child) }
            for child in node.finally { visit(child) }
            for child in node.undo { visit(child) }
        }
        visit(root)
        var labels: [String: String] = [:]
        for (name, paths) in byName where paths.count > 1 {
            for path in paths { labels[path] = "\(name)@\(path)" }
        }
        return labels
    }

    /// The nodes a failure of which does not fail the run: those with `continue_on_error`
    /// and every step inside them, `finally` steps included (a failure inside fails the
    /// group, whose own failure is allowed). An `undo` block starts afresh: it runs in a
    /// rollback, where only `continue_on_error` inside it lets its steps fail.
    static func failureAllowedNodes(_ root: PlanNode) -> Set<ObjectIdentifier> {
        var allowed = Set<ObjectIdentifier>()
        func visit(_ node: PlanNode, inherited: Bool) {
            let covered = inherited || node.continueOnError
            if covered { allowed.insert(ObjectIdentifier(node)) }
            for child in node.children + node.finally { visit(child, inherited: covered) }
            for child in node.undo { visit(child, inherited: false) }
        }
        visit(root, inherited: false)
        return allowed
    }

    /// The nodes inside a group with `retry` (its `finally` included; its `undo` not: an
    /// undo step runs once per success it reverses, each an instance of its own). Empty
    /// for most plans.
    static func retriedGroupNodes(_ root: PlanNode) -> Set<ObjectIdentifier> {
        var inside = Set<ObjectIdentifier>()
        func visit(_ node: PlanNode, inherited: Bool) {
            if inherited { inside.insert(ObjectIdentifier(node)) }
            let covered = inherited || (node.isGroup && node.retry != nil)
            for child in node.children + node.finally { visit(child, inherited: covered) }
            for child in node.undo { visit(child, inherited: false) }
        }
        visit(root, inherited: false)
        return inside
    }

    /// A new instance of `node`, labelled and marked as the plan says. `failureRetried`: its
    /// failure makes a group around it retry (see `prepare`), so it is not the allowed one.
    func makeInstance(of node: PlanNode, frame: ScopeFrame, isUndo: Bool = false, failureRetried: Bool = false) -> StepInstance {
        // Most plans allow no failure: no hashing per step then.
        let allowed = !failureRetried && !failureAllowed.isEmpty && failureAllowed.contains(ObjectIdentifier(node))
        let retried = !retriedGroup.isEmpty && retriedGroup.contains(ObjectIdentifier(node))
        return StepInstance(node: node, frame: frame, bus: bus, label: sharedNameLabels[node.path], isUndo: isUndo,
                            failureAllowed: allowed, inRetriedGroup: retried)
    }

    /// Runs the plan to the end (including `finally` and rollback) and reports the outcome.
    public func run() async -> RunOutcome {
        let start = Timestamp.monotonic()
        defer { scratch.remove() }
        bus.emit(.runStarted(RunInfo(id: options.runID, workflowName: plan.workflowName, file: plan.file.path,
                                     startedAt: .now(), totalSteps: Self.leafCount(plan.root))))
        var params: [String: String] = [:]
        if case .use(_, let with) = plan.root.kind {
            for (name, value) in with { params[name] = value.raw }
        }
        let frame = ScopeFrame(id: plan.root.children.first?.scope ?? 0, params: params)
        // The map once, not per reused step: a resume of a run of 10,000 steps built it 10,000
        // times (2.5 minutes before the first step ran).
        let byPath = nodesByPath
        for (path, result) in options.reuse { if let node = byPath[path] { runState.seed(node, result) } }
        let rootScope = FailureScope(parent: nil)
        let env = environment
        // Unstructured tasks do not inherit the executor preference: name the hub's.
        let stepsTask = Task(executorPreference: hub.executor) {
            await self.runList(self.plan.root.children, concurrent: false, frame: frame, scope: rootScope, env: env,
                               mode: .normal, status: .running)
        }
        // The note first: the steps' stopping follows from the signal and is told after it
        // (their `⊘` lines came before "SIGINT: stopping…" when its handler ran second).
        announceCancellation { stepsTask.cancel() }
        let stepsState = await stepsTask.value
        cancellation.takePendingSignals()
        // Only steps that ended before any signal: when the signal ended them, its note (run
        // by a handler that may come after the steps' end, as a child the signal killed can
        // end first) must say that they were stopped.
        if !cancellation.isCancelled { stepsEnded.set() }
        var status: RunStatus
        if cancellation.isCancelled {
            status = .cancelled
        } else {
            status = stepsState == .succeeded ? .succeeded : .failed
        }
        runState.status = status
        // `failure()` in `finally` and in the rollback's undo steps means a step failed:
        // not that the run was cancelled (as in GitHub Actions, where cleanup reacting to
        // both says `failure() || cancelled()`). A run cancelled after a failure has both.
        let stepFailed = rootScope.ownFailure
        var failedBeforeRollback = stepFailed
        if !plan.root.finally.isEmpty {
            let finallyScope = FailureScope(parent: nil, inheritsFailure: stepFailed)
            let finallyState = await runList(plan.root.finally, concurrent: false, frame: frame, scope: finallyScope, env: env,
                                             mode: .finally, status: status, inheritedFailure: stepFailed,
                                             runsAlways: true)
            if finallyState != .succeeded, status == .succeeded { status = .failed }
            // A `finally` step that failed (not one the signal stopped) is a failure the
            // undo steps see too, as they do when it turned a run `failed`.
            if finallyScope.ownFailure { failedBeforeRollback = true }
        }
        // An interrupt during `finally` cancels the run as much as one during its steps: the
        // run ends `cancelled` (exit 130/143) and rolls back.
        cancellation.takePendingSignals()
        if cancellation.isCancelled { status = .cancelled }
        runState.status = status
        if status != .succeeded, options.rollback, plan.rollback {
            await rollback(env: env, status: status, stepFailed: failedBeforeRollback)
        }
        // …and so does one during rollback, which goes on to the end all the same.
        cancellation.takePendingSignals()
        if cancellation.isCancelled { status = .cancelled }
        runState.status = status
        return await finish(status, counts: runState.counts, start: start)
    }

    /// Ends the run (or the undo run) as `status`: its outcome, with the exit status that
    /// goes with it (128 + the signal when cancelled), to the reporters and the journal.
    private func finish(_ status: RunStatus, counts: [StepState: Int], start: Double) async -> RunOutcome {
        let exitCode: Int32
        switch status {
        case .succeeded, .running: exitCode = 0
        case .failed: exitCode = 1
        case .cancelled: exitCode = 128 + (cancellation.signal ?? SIGTERM)
        }
        let outcome = RunOutcome(status: status, exitCode: exitCode, counts: counts,
                                 elapsed: Timestamp.monotonic() - start, time: .now(), allowedFailures: runState.allowedFailures)
        // After a second signal (or SIGQUIT) its handler ends flow: the run's end is its to
        // record, with the note that everything was killed (racing it, the run ended as if
        // after one signal, and the note was lost).
        if cancellation.killsEverything { await cancellation.awaitRepeatHandler() }
        if cancellation.isCancelled { await cancellation.handlersFinished() }
        bus.emit(.runFinished(outcome))
        bus.finish()
        return outcome
    }

    /// Says, when the first signal comes, what happens now and how to hurry it: as
    /// docker compose and go-task do, so a user pressing Ctrl-C knows flow heard it.
    /// `stop` (stopping the steps) runs once the note is ahead of whatever they say, and
    /// before it is written: written first, a note that waited for output nobody read
    /// (`flow run … | less`, the reader stopped) kept the first signal from every step.
    func announceCancellation(rollbackOnly: Bool = false, stop: @escaping @Sendable () -> Void = {}) {
        let grace = options.grace
        // The note is put ahead on the bus in the signal's reader (`onCancelAtOnce`), so that
        // a second signal read with it, which closes the bus, finds it there to write first;
        // the steps are stopped and the note written from the handlers, which may wait.
        cancellation.onCancelAtOnce { [bus, stepsEnded] signal in
            let name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : signal == SIGHUP ? "SIGHUP" : "signal \(signal)"
            // After the steps, nothing running is interrupted (`finally` and undo steps
            // are not): saying they get the signal and SIGKILL after the grace period
            // was wrong there.
            let what = rollbackOnly
                ? "the rollback goes on to its end"
                : stepsEnded.isSet
                ? "cancelling: the steps have ended, so no step is interrupted; what is left of `finally` and rollback runs"
                : "stopping: no new step starts, running steps get \(name) (SIGKILL after \(grace.compact)), then `finally` and rollback run"
            bus.announce(.note(nil, "\(name): \(what); signal again to kill everything now"))
        }
        cancellation.onCancel { [bus] _ in
            stop()
            bus.deliverAnnounced()
        }
    }

    /// Every plan node by path (for reused results). Walks the whole plan: take it once.
    var nodesByPath: [String: PlanNode] {
        var map: [String: PlanNode] = [:]
        func visit(_ n: PlanNode) {
            map[n.path] = n
            for child in n.children + n.finally + n.undo { visit(child) }
        }
        visit(plan.root)
        return map
    }

    /// Shell steps at or below `node`, `finally` and `undo` included.
    static func shellCount(_ node: PlanNode) -> Int {
        var count = 0
        if case .shell = node.kind { count += 1 }
        for child in node.children + node.finally + node.undo { count += shellCount(child) }
        return count
    }

    /// The leaf steps at or below `node` (`finally` steps included, `undo` steps not): the
    /// steps the run's summary counts, as `run_started` gives their number.
    public static func leafCount(_ node: PlanNode) -> Int {
        var count = 0
        func visit(_ n: PlanNode) {
            for child in n.children + n.finally {
                if !child.isGroup { count += 1 }
                visit(child)
            }
        }
        visit(node)
        return count
    }

    // MARK: Lists

    /// Runs steps one after another (or all at once); returns the list's resulting state:
    /// succeeded, failed, or cancelled.
    func runList(_ nodes: [PlanNode], concurrent: Bool, maxParallel: Int? = nil, failFast: Bool = true,
                 frame: ScopeFrame, scope: FailureScope, env: ChildEnvironment, mode: Mode, status: RunStatus,
                 inheritedFailure: Bool = false, isUndo: Bool = false, runsAlways: Bool = false,
                 reuses: Bool = true, failureRetried: Bool = false) async -> StepState
    {
        let failed = Mutex(false)
        let record: @Sendable (PlanNode, StepState) -> Void = { [cancellation] node, state in
            if [.failed, .timedOut, .cancelled].contains(state), !node.continueOnError {
                // A step the run's cancellation stopped has not failed: `failure()` stays
                // false for it (`success()` is false all the same: the run is cancelled).
                if state != .cancelled || !cancellation.isCancelled { scope.markFailed() }
                failed.withLock { $0 = true }
            }
        }
        if !concurrent {
            for node in nodes {
                let state = await execute(node, frame: frame, scope: scope, env: env, mode: mode, status: status,
                                          inheritedFailure: inheritedFailure, isUndo: isUndo, runsAlways: runsAlways,
                                          reuses: reuses, failureRetried: failureRetried)
                record(node, state)
            }
        } else {
            let limiter = maxParallel.map { AdmissionLimiter(permits: $0) }
            // Set by the first failure when fail-fast is on, before its slot is released,
            // so a sibling waiting for that slot is skipped rather than started.
            let tripped = Flag()
            await withTaskGroup(of: (Int, StepState).self) { group in
                for (index, node) in nodes.enumerated() {
                    group.addTask {
                        if let limiter {
                            do { try await limiter.acquire() } catch {
                                return (index, self.skip(node, frame: frame, isUndo: isUndo, reason: "cancelled before it started"))
                            }
                        }
                        defer { limiter?.release() }
                        if tripped.isSet {
                            return (index, self.skip(node, frame: frame, isUndo: isUndo, reason: "a sibling failed (fail_fast)"))
                        }
                        let state = await self.execute(node, frame: frame, scope: FailureScope(parent: scope, isBranch: true), env: env,
                                                       mode: mode, status: status, inheritedFailure: inheritedFailure, isUndo: isUndo,
                                                       reuses: reuses, failureRetried: failureRetried)
                        if failFast, [.failed, .timedOut].contains(state), !node.continueOnError { tripped.set() }
                        return (index, state)
                    }
                }
                for await (index, state) in group {
                    let node = nodes[index]
                    let wasFailed = failed.withLock { $0 }
                    record(node, state)
                    if failFast, !wasFailed, [.failed, .timedOut].contains(state), !node.continueOnError {
                        bus.settle()
                        group.cancelAll()
                    }
                }
            }
        }
        // After a second signal or SIGQUIT no task is cancelled (nothing stops politely:
        // everything is killed), yet a list its killed steps end is cancelled, not failed:
        // a concurrent group ended `✗` beside its `⊘` steps when it ended before the exit
        // (found by the tty audit: 2 runs in 20 under Ctrl-\).
        if Task.isCancelled || cancellation.killsEverything { return .cancelled }
        return failed.withLock { $0 } ? .failed : .succeeded
    }

    /// Marks a step, and every step inside it, skipped without running it: each gets its
    /// own `pending → skipped` event, so the journal and reporters never leave one pending.
    func skip(_ node: PlanNode, frame: ScopeFrame, isUndo: Bool, reason: String) -> StepState {
        let instance = makeInstance(of: node, frame: frame, isUndo: isUndo)
        instance.transition(to: .skipped, reason: reason)
        runState.record(instance, StepResult(state: .skipped))
        if node.isGroup {
            let inner = "its group `\(instance.ref.label)` was skipped"
            for child in node.children + node.finally { _ = skip(child, frame: frame, isUndo: isUndo, reason: inner) }
        }
        return .skipped
    }

    // MARK: One step

    /// Runs one step (a leaf or a group) to its end, retries included, and returns the
    /// state it ended in.
    ///
    /// Every running step's task holds this function's async frame for as long as the step
    /// runs, so it holds only what lives across the awaits; the work before and after an
    /// attempt is in `prepare` and `conclude`, kept out of line. Inline, that work made the
    /// frame 3.2 KB, and every step's task took 5 KB of frames (10,000 concurrent delays:
    /// 52 MB); as is, the frames of a delay step's whole stack fit in one 1 KB slab.
    @inline(never)
    func execute(_ node: PlanNode, frame: ScopeFrame, scope: FailureScope, env: ChildEnvironment, mode: Mode,
                 status: RunStatus, inheritedFailure: Bool, isUndo: Bool, runsAlways: Bool = false,
                 reuses: Bool = true, failureRetried: Bool = false) async -> StepState
    {
        // Once a signal came, nothing is told of a step before the note that flow heard it:
        // the signal's handlers run on another thread, and a step that started or was skipped
        // meanwhile (a `finally` step, once the steps the signal stopped had ended) was
        // printed first, sometimes the whole `finally` before the note.
        if cancellation.isCancelled { await cancellation.handlersFinished() }
        let step: StepRun
        switch prepare(node, frame: frame, scope: scope, env: env, mode: mode, status: status,
                       inheritedFailure: inheritedFailure, isUndo: isUndo, runsAlways: runsAlways, reuses: reuses,
                       failureRetried: failureRetried) {
        case .finished(let state): return state
        case .run(let run): step = run
        }
        var attempt = 1
        while true {
            let result: AttemptResult
            if case .shell = Work(node) {
                guard let admitted = await admittedAttempt(step) else {
                    return notAdmitted(step.instance, attempt: attempt)
                }
                result = admitted
            } else {
                step.instance.transition(to: .running)
                result = await attemptWithTimeout(step)
            }
            switch conclude(step.instance, result, attempt: attempt, mode: mode) {
            case .finished(let state):
                return state
            case .retry(let delay):
                if delay > .zero, await !waitOut(delay) { return await calledOff(step.instance, result) }
                step.instance.transition(to: .retrying)
                attempt += 1
            }
        }
    }

    /// What `prepare` decided: the step ended before it ran (skipped, or reused by
    /// `flow resume`), or it runs.
    enum Preparation {
        case finished(StepState)
        case run(StepRun)
    }

    /// Decides whether a step runs (selection, cancellation, its `if`, a result `flow
    /// resume` reuses) and, if it does, what it runs with. `reuses`: false inside a later
    /// attempt of a retried group, which runs its steps again from the start.
    /// `failureRetried`: inside an attempt of a group with `retry` that another attempt
    /// follows if this one fails (see `runGroup`).
    @inline(never)
    func prepare(_ node: PlanNode, frame: ScopeFrame, scope: FailureScope, env: ChildEnvironment, mode: Mode,
                 status: RunStatus, inheritedFailure: Bool, isUndo: Bool, runsAlways: Bool, reuses: Bool,
                 failureRetried: Bool) -> Preparation
    {
        if !node.selected { return .finished(skip(node, frame: frame, isUndo: isUndo, reason: StepTransition.notSelectedReason)) }
        // `run.status` inside `finally` is the status so far: `cancelled` from the moment the
        // run is, `failed` once an earlier step of the same `finally` list failed, or a step
        // before this one in a group of that list (at any depth): that step said
        // `succeeded`, the status when the `finally` step around it started.
        var status = status
        if status == .succeeded || status == .failed, cancellation.isCancelled, !undoesEndedRun.isSet { status = .cancelled }
        if status == .succeeded, runsAlways ? scope.hasFailure : (mode == .finally && scope.seesAnyFailure) {
            status = .failed
        }
        // After a second signal nothing starts, in `finally` and rollback too: flow is
        // killing everything and exiting, and a step started meanwhile would run for
        // nothing (or, quick, do half of a cleanup the user chose not to wait for). Nor is
        // it said to be skipped: the signal's handler records the run's end, the steps never
        // reached left `pending` (docs/journal.md), and a `skipped` written here first (the
        // handler was still killing) told the journal otherwise.
        if cancellation.killsEverything { return .finished(.cancelled) }
        if Task.isCancelled || (mode == .normal && cancellation.isCancelled) {
            // Without a signal, what stopped the step's group is the group's own `timeout`
            // or a concurrent sibling's failure (fail_fast), which cancel its task alike:
            // "the run was cancelled" told a reader of the events something that did not happen.
            let reason = cancellation.isCancelled ? "the run was cancelled" : "its group was stopped (a timeout or fail_fast)"
            return .finished(skip(node, frame: frame, isUndo: isUndo, reason: reason))
        }
        if mode == .normal, reuses, !node.isGroup, let previous = options.reuse[node.path], previous.state == .succeeded {
            // `flow resume`: a step that succeeded before is not run again; its outputs stand.
            // Whatever its `if` says now: it ran, and its effect (and its `undo`) is there.
            let instance = makeInstance(of: node, frame: frame, isUndo: isUndo)
            let reason = (options.reusedSources[node.path] ?? options.reusedFrom).map(StepTransition.reusedReason)
            instance.transition(to: .running, reason: reason)
            instance.transition(to: .succeeded, exitCode: previous.exitCode, reason: reason,
                               outputs: previous.outputs.isEmpty ? nil : previous.outputs)
            runState.record(instance, previous, firstRan: options.reusedOrder[node.path])
            return .finished(.succeeded)
        }
        let stepEnv = renderEnv(node, base: env, frame: frame, scope: scope, status: status)
        let context = RuntimeContext(plan: plan, runID: options.runID, runState: runState, cancellation: cancellation,
                                     frame: frame, failures: inheritedFailure ? FailureScope(parent: scope, failed: true) : scope,
                                     env: stepEnv, runStatus: status, signalCancelsRun: !undoesEndedRun.isSet)
        // `if` defaults to success() among the steps of this list; status functions see the
        // enclosing group's failure too (inside `finally`). The steps of a `finally` list
        // itself always run: one failing does not skip the next.
        let shouldRun: Bool
        let ownSuccess = runsAlways || (!scope.hasFailure && (mode != .normal || !cancellation.isCancelled))
        if let condition = node.condition {
            let value = ExpressionEvaluator.evaluate(condition, in: context)?.isTruthy ?? false
            shouldRun = condition.calls.isEmpty ? ownSuccess && value : value
        } else {
            shouldRun = ownSuccess
        }
        if !shouldRun {
            let reason = node.condition.map { "`if: \($0.text)` is false" } ?? "an earlier step failed"
            return .finished(skip(node, frame: frame, isUndo: isUndo, reason: reason))
        }

        // A failure the step's own `continue_on_error` allows does not reach the group
        // around it, so does not make it retry.
        let retried = failureRetried && !node.continueOnError
        let instance = makeInstance(of: node, frame: frame, isUndo: isUndo, failureRetried: retried)
        // A step of a `finally` list runs whatever its siblings did, and so do the steps of
        // a group there: they must not find an earlier sibling's failure in their scope.
        let ownScope = runsAlways ? FailureScope(parent: nil, inheritsFailure: inheritedFailure || scope.seesFailure) : scope
        return .run(StepRun(instance: instance, context: context, scope: ownScope, env: stepEnv, mode: mode, status: status,
                            reuses: reuses, failureRetried: retried))
    }

    /// What comes after an attempt: the step's end, or another attempt after a delay.
    enum Conclusion {
        case finished(StepState)
        case retry(after: Duration)
    }

    /// Moves a step on from an attempt's result: to its end (recorded), or to a retry when
    /// its `retry` policy allows one and the run goes on.
    @inline(never)
    func conclude(_ instance: StepInstance, _ result: AttemptResult, attempt: Int, mode: Mode) -> Conclusion {
        let node = instance.node
        switch result.state {
        case .succeeded:
            instance.transition(to: .succeeded, exitCode: result.exitCode, outputs: result.outputs.isEmpty ? nil : result.outputs)
            runState.record(instance, StepResult(state: .succeeded, exitCode: result.exitCode, outputs: result.outputs))
            return .finished(.succeeded)
        case .cancelled:
            instance.transition(to: .cancelled, exitCode: result.exitCode, signal: result.signal, reason: result.reason)
            runState.record(instance, StepResult(state: .cancelled, exitCode: result.exitCode))
            if node.retry != nil, !instance.ref.isLeaf, instance.ref.failureAllowed { cutShort(instance) }
            return .finished(.cancelled)
        default:
            let retryable = !result.isFinal && (result.state == .timedOut || node.retry?.retries(exitCode: result.exitCode) == true)
            let retried = retryable && attempt <= (node.retry?.limit ?? 0) && !Task.isCancelled
                && (mode != .normal || !cancellation.isCancelled)
            // Decided first: an attempt a retry follows is not the step's end, so its
            // failure is not the one `continue_on_error` allows ("allowed to fail" on every
            // attempt read as if the step had given up each time).
            instance.transition(to: result.state, exitCode: result.exitCode, signal: result.signal, reason: result.reason,
                                retried: retried)
            if retried, let policy = node.retry {
                let delay = policy.delay(beforeAttempt: attempt + 1)
                bus.emit(.note(instance.ref, "retrying (attempt \(attempt + 1) of \(policy.limit + 1))"
                               + (delay > .zero ? " in \(delay.compact)" : "")))
                return .retry(after: delay)
            }
            return .finished(gaveUp(instance, result))
        }
    }

    /// Waits out a delay (a retry's, a `delay` step's); false when the wait was cancelled.
    /// Out of line: inlined, `Task.sleep` makes its caller's frame ~600 bytes larger.
    @inline(never)
    func waitOut(_ delay: Duration) async -> Bool {
        do { try await DispatchPool.sleep(for: delay) } catch { return false }
        return true
    }

    /// Records a failed attempt as the step's end: no retry left, or (`calledOff`) the run
    /// stopped while it waited for one.
    @inline(never)
    func gaveUp(_ instance: StepInstance, _ result: AttemptResult) -> StepState {
        runState.record(instance, StepResult(state: result.state, exitCode: result.exitCode))
        return result.state
    }

    /// The wait for a retry was cancelled (a signal, fail-fast, a group's time-out): the
    /// failed attempt is the step's end after all, and a note says the retry the last one
    /// announced will not come (the output ended on `retrying … in 30s`). Its `→ failed`
    /// went out without the `continue_on_error` mark, as one a retry follows, and no
    /// transition can add it now (`failed → failed` is none): the note carries it, for the
    /// step and, of a group, for the failures inside that ended its attempt (unmarked too,
    /// as its retry was to follow). Counted unmarked, a passing run's JUnit report said
    /// `failures="1"` and its summary `1 failed` (a group with `timeout` and
    /// `continue_on_error` stopping a step's wait).
    @inline(never)
    func calledOff(_ instance: StepInstance, _ result: AttemptResult) async -> StepState {
        // After the note that flow heard the signal, as everything that follows from it.
        if cancellation.isCancelled { await cancellation.handlersFinished() }
        let state = gaveUp(instance, result)
        var allowing: [String] = []
        if instance.ref.failureAllowed {
            allowing.append(instance.ref.path)
            if !instance.ref.isLeaf { allowing += runState.allowFailures(under: instance.node, covered: failureAllowed) }
        }
        let why = cancellation.isCancelled ? "the run was cancelled" : "stopped while waiting to retry"
        let mark = allowing.isEmpty ? "" : " (\(StepTransition.allowedFailureMark))"
        bus.emit(.note(instance.ref, "not retried: \(why)\(mark)", allowing: allowing))
        return state
    }

    /// A group with `retry` stopped in an attempt a retry was to follow (its group's
    /// `timeout`, a fail-fast, a signal), `continue_on_error` covering it: the failures
    /// inside that attempt went out unmarked, as failures its retry was to follow, and are
    /// their steps' ends after all, allowed ones. A note carries the mark, as for a retry
    /// called off while it waited (`calledOff`); none when nothing inside failed. Without
    /// it, a run that passed counted `1 failed` and its JUnit report `failures="1"` (a
    /// retried group inside one with `timeout` and `continue_on_error`).
    func cutShort(_ instance: StepInstance) {
        let allowing = runState.allowFailures(under: instance.node, covered: failureAllowed)
        guard !allowing.isEmpty else { return }
        let why = cancellation.isCancelled ? "the run was cancelled" : "stopped before its retry"
        bus.emit(.note(instance.ref, "not retried: \(why) (\(StepTransition.allowedFailureMark))", allowing: allowing))
    }

    /// The environment for a step: the enclosing one plus the node's `env`, rendered.
    func renderEnv(_ node: PlanNode, base: ChildEnvironment, frame: ScopeFrame, scope: FailureScope, status: RunStatus) -> ChildEnvironment {
        guard !node.env.isEmpty else { return base }
        var env = ChildEnvironment(base: environment.base)
        for variable in node.env {
            let context = RuntimeContext(plan: plan, runID: options.runID, runState: runState, cancellation: cancellation,
                                         frame: frame, failures: scope, env: env, runStatus: status,
                                         signalCancelsRun: !undoesEndedRun.isSet)
            env.set(variable.name.value, context.render(variable.value))
        }
        return env
    }

    // MARK: Attempts

    /// What one attempt of a step came to.
    struct AttemptResult: Sendable {
        var state: StepState
        var exitCode: Int32?
        var signal: Int32?
        var reason: String?
        var outputs: [String: String] = [:]
        /// A failure that would come again on every attempt (found before anything ran):
        /// not retried.
        var isFinal = false
    }

    /// One attempt, cancelled (state `timed_out`) when the step's timeout passes.
    // Inlined: one frame fewer on every step's task (a delay step's whole stack then fits
    // in the 1 KB slab its task starts with).
    @inline(__always)
    func attemptWithTimeout(_ step: StepRun) async -> AttemptResult {
        guard let timeout = step.instance.node.timeout else { return await perform(step) }
        return await perform(step, within: timeout)
    }

    /// One attempt raced against its timeout.
    @inline(never)
    func perform(_ step: StepRun, within timeout: Duration) async -> AttemptResult {
        let expired = Flag()
        return await withTaskGroup(of: AttemptResult?.self) { group in
            group.addTask {
                await self.perform(step)
            }
            group.addTask {
                do { try await DispatchPool.sleep(for: timeout) } catch { return nil }
                expired.set()
                return nil
            }
            var result = AttemptResult(state: .cancelled)
            while let next = await group.next() {
                if let next {
                    result = next
                    group.cancelAll()
                    break
                }
                if expired.isSet { group.cancelAll() }
            }
            if expired.isSet, result.state != .succeeded {
                result.state = .timedOut
                result.reason = "timed out after \(timeout.compact)"
            }
            return result
        }
    }

    /// Does the work of one attempt.
    @inline(never)
    func perform(_ step: StepRun) async -> AttemptResult {
        // On `Work`, not on the node's `kind`: a copy of that large enum would join this frame.
        switch Work(step.instance.node) {
        case .print: return printLine(step)
        case .delay(let duration): return await delayAttempt(duration)
        case .shell: return await runShell(step)
        case .group: return await runGroup(step)
        }
    }

    /// Which kind of work a step does, without the kind's payload.
    enum Work {
        case print, delay(Duration), shell, group

        @inline(never)
        init(_ node: PlanNode) {
            switch node.kind {
            case .print: self = .print
            case .delay(let duration): self = .delay(duration)
            case .shell: self = .shell
            case .sequential, .concurrent, .use: self = .group
            }
        }
    }

    /// A `delay` step's one attempt.
    @inline(never)
    func delayAttempt(_ duration: Duration) async -> AttemptResult {
        AttemptResult(state: await waitOut(duration) ? .succeeded : .cancelled)
    }

    /// A `print` step's one attempt.
    @inline(never)
    func printLine(_ step: StepRun) -> AttemptResult {
        guard case .print(let message, let stream) = step.instance.node.kind else { return AttemptResult(state: .failed) }
        bus.line(step.instance.ref, stream == .stdout ? .stdout : .stderr, step.context.render(message))
        return AttemptResult(state: .succeeded)
    }

    @inline(never)
    func runGroup(_ step: StepRun) async -> AttemptResult {
        let instance = step.instance, context = step.context, scope = step.scope, env = step.env
        let mode = step.mode, status = step.status
        let node = instance.node
        var frame = instance.frame
        if case .use(_, let with) = node.kind {
            var params: [String: String] = [:]
            for (name, value) in with { params[name] = context.render(value) }
            // `allowed` holds at run time too, for values only known now (an output, an env).
            for (name, value) in with.map({ ($0.name, params[$0.name] ?? "") }) {
                if let allowed = node.allowedParams[name], !allowed.contains(where: { $0.isIdentical(to: value) }) {
                    let reason = "\(Param.shown(value)) is not an allowed value of `\(name)` (allowed: " + allowed.joined(separator: ", ") + ")"
                    // No note: the group's own end carries the reason, and every reporter
                    // shows such an end (`StepTransition.isGroupsOwnFailure`).
                    for child in node.children {
                        _ = skip(child, frame: frame, isUndo: instance.ref.isUndo, reason: "its action was given a value not allowed")
                    }
                    // The summary counts steps that ran: this one failed without any.
                    runState.countOwnFailure(instance)
                    return AttemptResult(state: .failed, reason: reason, isFinal: true)
                }
            }
            frame = ScopeFrame(id: node.children.first?.scope ?? node.scope, params: params)
        }
        // A group that runs after a failure because its `if` says so (`if: failure()`,
        // `if: always()`) runs its steps as a group that starts afresh: each one's implied
        // `success()` looks at the failures among them, while `failure()` inside still sees
        // the one before (as a `finally` list does, and GitHub Actions' composite actions).
        // Otherwise the failure that let the group run would skip every step in it.
        let despiteFailure = node.condition.map { !$0.calls.isEmpty } == true && scope.hasFailure
        let inner = despiteFailure ? FailureScope(parent: nil, inheritsFailure: true) : FailureScope(parent: scope)
        // `flow resume` reuses results in a group's first attempt only: a retry of the group
        // runs its steps again from the start, as it would have in the run (a `login` whose
        // token the failed attempt found stale is what the retry is there to do again).
        let reuses = step.reuses && instance.attempt <= 1
        // A step failing in an attempt that another one follows fails the attempt, not the
        // run: `continue_on_error` (here or around) allows the failure of the last attempt
        // only, as a step's own retried attempts are not marked allowed (`conclude`).
        let retried = step.failureRetried || node.retry.map { instance.attempt <= $0.limit } == true
        var state: StepState
        switch node.kind {
        case .concurrent(let maxParallel, let failFast):
            state = await runList(node.children, concurrent: true, maxParallel: maxParallel, failFast: failFast, frame: frame,
                                  scope: inner, env: env, mode: mode, status: status, inheritedFailure: despiteFailure,
                                  isUndo: instance.ref.isUndo, reuses: reuses, failureRetried: retried)
        default:
            state = await runList(node.children, concurrent: false, frame: frame, scope: inner, env: env, mode: mode,
                                  status: status, inheritedFailure: despiteFailure, isUndo: instance.ref.isUndo,
                                  reuses: reuses, failureRetried: retried)
        }
        if !node.finally.isEmpty {
            // `finally` runs outside the cancelled scope: the first interrupt does not stop it.
            // The group failed if a step in it did, or it was stopped other than by the
            // run's cancellation (its time-out, a sibling's fail-fast).
            let groupFailed = inner.ownFailure || (state != .succeeded && !(state == .cancelled && cancellation.isCancelled))
            let finallyFrame = frame
            let finallyState = await Task(executorPreference: hub.executor) {
                await self.runList(node.finally, concurrent: false, frame: finallyFrame,
                                   scope: FailureScope(parent: nil, inheritsFailure: groupFailed || scope.seesFailure),
                                   env: env, mode: mode == .undo ? .undo : .finally,
                                   // The run's status so far, not the group's: failed once a
                                   // step failed anywhere before it (its enclosing groups see it).
                                   status: self.cancellation.isCancelled ? .cancelled
                                       : (groupFailed || scope.seesAnyFailure ? .failed : (status == .running ? .succeeded : status)),
                                   inheritedFailure: groupFailed, isUndo: instance.ref.isUndo, runsAlways: true,
                                   failureRetried: retried)
            }.value
            if finallyState != .succeeded, state == .succeeded { state = .failed }
        }
        if Task.isCancelled || cancellation.killsEverything, state != .succeeded { state = .cancelled }
        // A step inside failed before the run's signal stopped the rest: the group ends
        // `cancelled`, which the enclosing list does not count as a failure, but the step's
        // failure happened, and `failure()` after it (an enclosing `finally`, the top-level
        // one) must see it as it does for a step outside any group ("unless a step had
        // failed before"). A concurrent branch's scope is its own; its group's is the parent.
        if state == .cancelled, cancellation.isCancelled, inner.ownFailure, !node.continueOnError {
            (scope.isBranch ? scope.parent : scope)?.markFailed()
        }
        return AttemptResult(state: state, reason: state == .failed ? StepTransition.insideFailedReason : nil)
    }

    // MARK: Rollback

    /// Runs the `undo` steps of succeeded steps, latest completion first. A failing undo is
    /// reported and the rest still run. `stepFailed`: a step of the run failed, also when
    /// the run then ended `cancelled` (what `failure()` in the top-level `finally` saw).
    /// Returns whether an undo failed: the summary's counts show only a leaf's
    /// `undo_failed`, not a group's, whose undo can fail as well.
    @discardableResult
    func rollback(env: ChildEnvironment, status: RunStatus, stepFailed: Bool = false) async -> Bool {
        let order = runState.rollbackOrder
        guard !order.isEmpty else { return false }
        var anyFailed = false
        bus.emit(.note(nil, "rolling back \(order.count) step\(order.count == 1 ? "" : "s")"))
        for completion in order {
            // After a second signal (or SIGQUIT) nothing more is undone: its handler records
            // the run's end, with a step being undone `undo_failed` and the rest as they are.
            if cancellation.killsEverything { return anyFailed }
            let instance = completion.instance
            instance.transition(to: .undoing)
            runState.reinstate(completion)
            // The undo steps see the failure the rollback is for, as the top-level `finally`
            // does (`failure()` true, `success()` false, agreeing with `run.status`, and in
            // a run cancelled after a step failed beside `cancelled()`); their implied
            // `success()` looks only at the undo list's own steps, so they run.
            let scope = FailureScope(parent: nil, inheritsFailure: status == .failed || stepFailed)
            let state = await runList(instance.node.undo, concurrent: false, frame: instance.frame, scope: scope,
                                      env: env, mode: .undo, status: status, isUndo: true)
            // Its undo steps were killed or never started (skipped, which counts as
            // success): it was not undone (it was recorded `undone` with its undo skipped).
            if cancellation.killsEverything { return anyFailed }
            if state == .succeeded {
                instance.transition(to: .undone)
                runState.recount(instance, to: .undone)
            } else {
                instance.transition(to: .undoFailed, reason: "its undo failed")
                runState.recount(instance, to: .undoFailed)
                bus.emit(.note(instance.ref, "undo of \(instance.ref.label) failed; rollback goes on"))
                anyFailed = true
            }
        }
        return anyFailed
    }
}

extension Executor {
    /// For a run that ends before it started (refused after the executor was made), or one
    /// that ends by `_exit` (a second signal, SIGQUIT): removes what the executor made (its
    /// scratch directory).
    public func discard() {
        scratch.remove()
    }
}

extension Executor {
    /// `flow undo`: rolls back steps that succeeded in an earlier run (given in completion
    /// order; rollback goes latest first), with
    /// the outputs recorded then. Each step is first marked as succeeded (from that run); a
    /// step given more than once (instances of a retried group's step) is a new instance
    /// each time, as in the run, and each one's undo sees its own outputs. Steps not
    /// reversed (`ReversedStep.reverses`) only make their result what later undos look back on.
    public func runUndo(_ steps: [ReversedStep]) async -> RunOutcome {
        let start = Timestamp.monotonic()
        undoesEndedRun.set()
        defer { scratch.remove() }
        let byPath = nodesByPath
        let parents = parentsByNode
        // The leaf steps the summary counts, as for a run (the journal's `total_steps` too):
        // every one ends with an event here, reversed or skipped, and the number of steps
        // being reversed (a group among them counted as one) left `run_finished`'s counts
        // adding up to more than `run_started` said.
        bus.emit(.runStarted(RunInfo(id: options.runID, workflowName: plan.workflowName, file: plan.file.path,
                                     startedAt: .now(), totalSteps: Self.leafCount(plan.root))))
        // Before the frames are made: a `use`'s params are evaluated again from its `with`,
        // which may read any earlier step (`ver: "${{ steps.tag.outputs.version }}"`).
        for (path, result) in options.reuse { if let node = byPath[path] { runState.seed(node, result) } }
        let undone = Set(steps.filter(\.reverses).compactMap { byPath[$0.path].flatMap { $0.undo.isEmpty ? nil : ObjectIdentifier($0) } })
        // The steps that succeeded inside a group being undone, each marked as succeeded in
        // the run, as the group is, before it (as they completed): its undo reverses them, and
        // they are counted `undone` with it (`RunState.recount`). They read `skipped: not
        // undone by this run`, and the summary `0 succeeded, 2 skipped, 1 undone`.
        var carried = Set<ObjectIdentifier>()
        // The groups that did not succeed (a failure `continue_on_error` allowed) holding
        // steps that did, carried: the group's undo reverses those too, as the run's own
        // rollback counts them (they read `skipped: not undone by this run`).
        var carriedThrough = Set<ObjectIdentifier>()
        @discardableResult
        func carry(_ nodes: [PlanNode]) -> Bool {
            var any = false
            for node in nodes where !undone.contains(ObjectIdentifier(node)) && !carried.contains(ObjectIdentifier(node)) {
                guard let result = options.reuse[node.path], result.state == .succeeded else {
                    if node.isGroup, carry(node.children + node.finally) {
                        carriedThrough.insert(ObjectIdentifier(node))
                        any = true
                    }
                    continue
                }
                any = true
                carried.insert(ObjectIdentifier(node))
                carry(node.children + node.finally)
                // Nothing of it runs (no frame of its `use` to evaluate again, as for a skip).
                let instance = makeInstance(of: node, frame: ScopeFrame(id: node.scope, params: [:]))
                let reason = (options.reusedSources[node.path] ?? options.reusedFrom).map { StepTransition.reversedReason(from: $0) }
                instance.transition(to: .running, reason: reason)
                instance.transition(to: .succeeded, exitCode: result.exitCode, reason: reason,
                                    outputs: result.outputs.isEmpty ? nil : result.outputs)
                runState.record(instance, result)
            }
            return any
        }
        for step in steps {
            guard let node = byPath[step.path] else { continue }
            guard step.reverses, !node.undo.isEmpty else {
                runState.recall(node, step.result)
                continue
            }
            if node.isGroup { carry(node.children + node.finally) }
            let frame = recordedFrame(for: node, parents: parents)
            let instance = makeInstance(of: node, frame: frame)
            // The run that ran it, as a resume names a reused step: the run undone may only
            // have reused the result, or carried it on unreached, from an earlier one.
            let reason = (options.reusedSources[step.path] ?? options.reusedFrom).map {
                StepTransition.reversedReason(from: $0, success: step.success, of: step.successes)
            }
            let result = step.result
            instance.transition(to: .running, reason: reason)
            instance.transition(to: .succeeded, exitCode: result.exitCode, reason: reason,
                                outputs: result.outputs.isEmpty ? nil : result.outputs)
            runState.record(instance, result)
        }
        // The other steps are not part of this run: skipped (with the reason), not left
        // `pending` in the journal as if the run had stopped before them.
        func skipOthers(_ nodes: [PlanNode]) {
            for node in nodes {
                // A group being undone is not its steps: those not undone or carried with it
                // are skipped too (they were left `pending`, and `show` and `runs` counted
                // them so), as are those of a group holding steps being undone.
                let id = ObjectIdentifier(node)
                if undone.contains(id) || carried.contains(id) || carriedThrough.contains(id) || contains(node, anyOf: undone) {
                    skipOthers(node.children + node.finally)
                } else {
                    _ = skip(node, frame: ScopeFrame(id: node.scope, params: [:]), isUndo: false, reason: StepTransition.notUndoneReason)
                }
            }
        }
        skipOthers(plan.root.children + plan.root.finally)
        // After the skips, which record their own results: the undo steps read the
        // outputs the run recorded for every step, not only the ones being undone.
        for (path, result) in options.reuse { if let node = byPath[path] { runState.seed(node, result) } }
        runState.status = options.undoneRunStatus
        announceCancellation(rollbackOnly: true)
        let undoFailed = await rollback(env: environment, status: options.undoneRunStatus)

        // What the undo reversed or tried, not the steps it left alone (`skipped: not undone
        // by this run`, the only skips of an undo: nothing to undo, or they did not succeed
        // in the run): `0 succeeded, 3 skipped, 2 undone` read as three steps the undo had
        // skipped that it should have reversed. The journal's `run_counts` (`runs`, `show`)
        // and `run_finished` take these counts too; the steps stay `skipped` in the journal.
        var counts = runState.counts
        counts[.skipped] = nil
        // A group's failed undo is not among the counts (they are the leaves'): `flow undo`
        // of a run whose group failed to undo said `✓ succeeded` and exited 0.
        let failed = undoFailed || (counts[.undoFailed] ?? 0) > 0 || (counts[.failed] ?? 0) > 0
        // A signal does not stop a rollback (it goes on to the end), but the undo run
        // ends `cancelled` with 128 + the signal, as `flow run` does.
        cancellation.takePendingSignals()
        let status: RunStatus = cancellation.isCancelled ? .cancelled : (failed ? .failed : .succeeded)
        return await finish(status, counts: counts, start: start)
    }
}

extension Executor {
    /// Whether `node` holds (below it) one of `nodes`.
    func contains(_ node: PlanNode, anyOf nodes: Set<ObjectIdentifier>) -> Bool {
        (node.children + node.finally).contains { nodes.contains(ObjectIdentifier($0)) || contains($0, anyOf: nodes) }
    }

    /// Every plan node's parent. Walks the whole plan: take it once, not per step (an undo
    /// of 10,000 steps made it 10,000 times).
    var parentsByNode: [ObjectIdentifier: PlanNode] {
        var parents: [ObjectIdentifier: PlanNode] = [:]
        func visit(_ n: PlanNode) {
            for child in n.children + n.finally + n.undo {
                parents[ObjectIdentifier(child)] = n
                visit(child)
            }
        }
        visit(plan.root)
        return parents
    }

    /// The frame a step of an earlier run ran in: inside an action, the parameters of the
    /// `use` that invoked it, evaluated again (with the recorded outputs) as at run time.
    /// `parents` is `parentsByNode`.
    func recordedFrame(for node: PlanNode, parents: [ObjectIdentifier: PlanNode]) -> ScopeFrame {
        func frame(of node: PlanNode) -> ScopeFrame {
            var ancestor = parents[ObjectIdentifier(node)]
            while let current = ancestor {
                if case .use(_, let with) = current.kind, current.children.contains(where: { $0.scope == node.scope }) {
                    let outer = frame(of: current)
                    // The environment the `use` step had (the workflow's `env` and its
                    // groups'), as `with: { v: "${{ env.V }}" }` read it at run time.
                    let env = renderEnv(current, base: environment, frame: outer, scope: FailureScope(parent: nil), status: .failed)
                    let context = RuntimeContext(plan: plan, runID: options.runID, runState: runState, cancellation: cancellation,
                                                 frame: outer, failures: FailureScope(parent: nil), env: env,
                                                 runStatus: .failed)
                    var params: [String: String] = [:]
                    for (name, value) in with { params[name] = context.render(value) }
                    return ScopeFrame(id: node.scope, params: params)
                }
                ancestor = parents[ObjectIdentifier(current)]
            }
            var params: [String: String] = [:]
            if case .use(_, let with) = plan.root.kind { for (name, value) in with { params[name] = value.raw } }
            return ScopeFrame(id: node.scope, params: params)
        }
        return frame(of: node)
    }
}
