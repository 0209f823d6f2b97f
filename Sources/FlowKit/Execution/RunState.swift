import Synchronization

/// What the steps of a run share: results by name, the undo stack for rollback, and each
/// step's latest state for the summary.
///
/// A retried group runs its steps again as new instances. A step's latest instance is the
/// one that counts (in the summary and in `steps.<name>…`); every instance that succeeded
/// stays on the undo stack with its own outputs, as the command pattern's history does:
/// what two attempts created, rollback reverses twice.
final class RunState: Sendable {
    /// One entry of the undo stack: an instance that succeeded, and what it produced.
    struct Completion: Sendable {
        var instance: StepInstance
        var result: StepResult
        /// When it was recorded (see `State.records`): its undo sees results as they were then.
        var recorded: Int
        /// For a result a resume reused: its place in the order the reused results first
        /// completed in (`RunOptions.reusedOrder`).
        var firstRan: Int?
    }

    private struct State {
        var results: [String: StepResult] = [:]
        /// How many results `record` has recorded so far: a clock for `superseded`.
        var records = 0
        /// Results a later one of the same step replaced (a retried group runs its steps
        /// again; a resume records a seeded step again), in the order replaced, each with
        /// the clock of its replacement: an undo log that `reinstate` plays backwards to
        /// show an earlier attempt's undo the results of that attempt.
        var superseded: [(replacedAt: Int, key: String, result: StepResult)] = []
        /// How much of `superseded` rollback has played back so far (it only goes back).
        var rewound: Int?
        var completed: [Completion] = []
        /// The latest state of every workflow leaf that got one, and the instance that set
        /// it (a superseded instance's undo does not recount), by plan node (undo steps
        /// aside: the summary counts the workflow's steps, and an undo shows as `undone`).
        /// Keyed by the node's identity, not its path: hashing a path string per step
        /// cost more than the rest of the record. A group has an entry only while its
        /// latest attempt ended timed out (or failed before a step ran: `countOwnFailure`).
        var leafStates: [ObjectIdentifier: (state: StepState, instance: ObjectIdentifier, allowed: Bool)] = [:]
        /// The instances `countOwnFailure` counted, by plan node, held so that their
        /// identity in `leafStates` cannot pass to a later attempt's instance made at the
        /// same address once they are gone.
        var ownFailures: [ObjectIdentifier: StepInstance] = [:]
        /// Each group's latest instance to end, by plan node: only its undo failing is
        /// counted (`recount`), not that of an earlier attempt a retried group around it
        /// superseded.
        var latestGroupInstances: [ObjectIdentifier: ObjectIdentifier] = [:]
        /// How each group's latest instance ended, and whether that end is an allowed
        /// failure, by plan node: a group the summary does not count (a leaf inside it
        /// failed) still has a row in every display, which `allowFailures` marks.
        var groupEnds: [ObjectIdentifier: (state: StepState, allowed: Bool)] = [:]
        /// The leaves (plan nodes) a group's undo counted `undone`, each by the group's plan
        /// node, until their own undo runs (`recount`).
        var reversedByGroup: [ObjectIdentifier: ObjectIdentifier] = [:]
        var status = RunStatus.running
    }

    private let state = Mutex(State())

    private static func key(_ scope: Int, _ name: String) -> String { "\(scope)/\(name)" }

    /// Makes a result from an earlier run visible to expressions (resume, undo).
    func seed(_ node: PlanNode, _ result: StepResult) {
        guard let name = node.name else { return }
        state.withLock { $0.results[Self.key(node.scope, name)] = result }
    }

    /// Makes `result`, of a step of an earlier run that `flow undo` does not reverse, the one
    /// expressions see, as `record` does: later undos winding the clock back (`reinstate`)
    /// see the result it replaces where that succeeded before them.
    func recall(_ node: PlanNode, _ result: StepResult) {
        guard let name = node.name else { return }
        state.withLock { s in
            s.records += 1
            let key = Self.key(node.scope, name)
            if let earlier = s.results.updateValue(result, forKey: key) {
                s.superseded.append((s.records, key, earlier))
            }
        }
    }

    /// `firstRan`: a reused result's place among those first completed (see `Completion`).
    func record(_ instance: StepInstance, _ result: StepResult, firstRan: Int? = nil) {
        state.withLock { s in
            s.records += 1
            if let name = instance.node.name {
                let key = Self.key(instance.node.scope, name)
                if let earlier = s.results.updateValue(result, forKey: key) {
                    s.superseded.append((s.records, key, earlier))
                }
            }
            if instance.ref.isLeaf, !instance.ref.isUndo {
                s.leafStates[ObjectIdentifier(instance.node)] = (result.state, ObjectIdentifier(instance),
                                                                 instance.ref.failureAllowed)
            } else if !instance.ref.isUndo {
                // A group's timeout counts as a step that timed out: its steps show only as
                // cancelled, and a failed run's summary would name no failure. A later attempt
                // of the group that ends otherwise takes the count back, and so does one
                // that ends after an earlier attempt failed before its steps ran
                // (`countOwnFailure`, which this instance's own end leaves standing): the
                // summary counts each step by its latest state.
                let node = ObjectIdentifier(instance.node)
                s.latestGroupInstances[node] = ObjectIdentifier(instance)
                s.groupEnds[node] = (result.state, instance.ref.failureAllowed)
                if result.state == .timedOut {
                    s.leafStates[node] = (.timedOut, ObjectIdentifier(instance), instance.ref.failureAllowed)
                    s.ownFailures[node] = nil
                } else if let counted = s.leafStates[node],
                          counted.state == .timedOut || counted.instance != ObjectIdentifier(instance) {
                    s.leafStates[node] = nil
                    s.ownFailures[node] = nil
                }
            }
            if result.state == .succeeded, !instance.node.undo.isEmpty {
                s.completed.append(Completion(instance: instance, result: result, recorded: s.records, firstRan: firstRan))
            }
        }
    }

    /// Counts as allowed the failures that ended the latest attempt of the group `node`
    /// inside it (its `finally` too, its `undo` not), of the steps `covered` holds (those
    /// `continue_on_error` covers): they went out unmarked, as failures its retry was to
    /// follow, and the retry was called off (`Executor.calledOff`). Returns their paths:
    /// the groups inside that failed with them too, which the summary does not count but
    /// every display has a row for (without them, `flow show` and the live tree kept an
    /// unmarked `✗ h` above its allowed `✗ bad (allowed to fail)` in a run that passed).
    func allowFailures(under node: PlanNode, covered: Set<ObjectIdentifier>) -> [String] {
        state.withLock { s in
            var paths: [String] = []
            func isFailure(_ state: StepState) -> Bool { state == .failed || state == .timedOut }
            func visit(_ node: PlanNode) {
                for child in node.children + node.finally {
                    let id = ObjectIdentifier(child)
                    if covered.contains(id) {
                        var allowed = false
                        if let counted = s.leafStates[id], !counted.allowed, isFailure(counted.state) {
                            s.leafStates[id]!.allowed = true
                            allowed = true
                        }
                        if let ended = s.groupEnds[id], !ended.allowed, isFailure(ended.state) {
                            s.groupEnds[id]!.allowed = true
                            allowed = true
                        }
                        if allowed { paths.append(child.path) }
                    }
                    visit(child)
                }
            }
            visit(node)
            return paths
        }
    }

    /// Counts a group that failed before any step inside it ran (a `use` given a value not
    /// `allowed`), so the summary shows the failure.
    func countOwnFailure(_ instance: StepInstance) {
        state.withLock { s in
            let node = ObjectIdentifier(instance.node)
            s.leafStates[node] = (.failed, ObjectIdentifier(instance), instance.ref.failureAllowed)
            s.ownFailures[node] = instance
        }
    }

    /// Moves a step's count after its undo ran, when it is the step's latest instance. A
    /// group whose undo failed is counted from then on, as one its own timeout ended: the
    /// summary counts leaves, and a rollback left incomplete by a group's `undo` read
    /// `1 failed, 2 undone` (`flow undo`: `✗ failed: 0 succeeded, 2 skipped`).
    func recount(_ instance: StepInstance, to next: StepState) {
        state.withLock { s in
            let node = ObjectIdentifier(instance.node)
            let id = ObjectIdentifier(instance)
            if !instance.ref.isLeaf, next == .undoFailed, s.leafStates[node] == nil, s.latestGroupInstances[node] == id {
                s.leafStates[node] = (next, id, false)
                return
            }
            // A group's undo reverses the steps inside it: those that succeeded count as
            // `undone`, as a step reversed by its own undo does. The summary counts leaves,
            // and a run that rolled back a group of two said `2 succeeded, 1 failed` with
            // nothing undone (`flow undo`: `0 succeeded, 2 skipped`). Only the group's latest
            // instance: the leaves' counts are those of their latest instances.
            if !instance.ref.isLeaf, next == .undone, s.latestGroupInstances[node] == id {
                func reverse(_ nodes: [PlanNode]) {
                    for child in nodes {
                        let key = ObjectIdentifier(child)
                        if let counted = s.leafStates[key], counted.state == .succeeded, !child.isGroup {
                            s.leafStates[key] = (.undone, counted.instance, false)
                            s.reversedByGroup[key] = node
                        }
                        reverse(child.children + child.finally)
                    }
                }
                reverse(instance.node.children + instance.node.finally)
                return
            }
            // The undo of an earlier instance (a retried group's step is reversed once per
            // attempt that succeeded, the latest first) that fails after the latest one's
            // was undone is the step's: counted `undone`, the summary said `1 undone` beside
            // `✗ … undo failed` and a failed rollback.
            if next == .undoFailed, let counted = s.leafStates[node], counted.instance != id, counted.state == .undone {
                s.leafStates[node] = (next, counted.instance, false)
                return
            }
            // So for a group: its row in the journal is `undo_failed` and counted so, and a
            // group whose undo failed leaves its steps `succeeded`. The summary said `1
            // undone` for the steps its latest instance's undo reversed, beside `✗ … undo
            // failed`, and `flow show` the group `undo_failed`; `runs` counting the rows
            // said `1 succeeded, …, 1 undo_failed`.
            if !instance.ref.isLeaf, next == .undoFailed, s.latestGroupInstances[node] != id,
               s.reversedByGroup.values.contains(node) {
                s.leafStates[node] = (next, id, false)
                for (leaf, group) in s.reversedByGroup where group == node {
                    s.reversedByGroup[leaf] = nil
                    if let counted = s.leafStates[leaf], counted.state == .undone { s.leafStates[leaf] = (.succeeded, counted.instance, false) }
                }
                return
            }
            // A leaf's own undo decides its count from here on, a group's undo or not.
            if instance.ref.isLeaf { s.reversedByGroup[node] = nil }
            guard s.leafStates[node]?.instance == id else { return }
            s.leafStates[node] = (next, id, false)
        }
    }

    func result(_ frame: ScopeFrame, _ name: String) -> StepResult? {
        state.withLock { $0.results[Self.key(frame.id, name)] }
    }

    /// Makes the results as they were when `completion` succeeded the ones its undo steps
    /// see as `steps.<name>…`: its own, and those of the steps that finished before it.
    /// With a retried group a later instance may have replaced them; the undo of an
    /// earlier attempt's step must see that attempt's outputs (the resource its sibling
    /// created then), not the last attempt's.
    ///
    /// Rollback goes latest completion first, so each call winds the clock back further.
    /// Results first recorded after the completion are left: an undo step may refer only
    /// to steps that finished before it and to earlier steps of its own list, which it
    /// records as it runs.
    func reinstate(_ completion: Completion) {
        state.withLock { s in
            // Latest replacement first: what each replaced is what was there before it.
            // Entries rollback itself adds (an undo list run again) lie past `rewound`.
            var i = s.rewound ?? s.superseded.count
            while i > 0, s.superseded[i - 1].replacedAt > completion.recorded {
                i -= 1
                s.results[s.superseded[i].key] = s.superseded[i].result
            }
            s.rewound = i
            if let name = completion.instance.node.name {
                s.results[Self.key(completion.instance.node.scope, name)] = completion.result
            }
        }
    }

    /// Steps with `undo` that succeeded, latest first.
    ///
    /// A resume's reused steps completed in the runs before it, before anything it ran
    /// itself, so they come last, latest first as they ran then. Taken at their reuse, they
    /// were reversed in the order the resume reached them, and its rollback and `flow
    /// undo` of it reversed the same steps in different orders (found by the resume/undo
    /// model audit).
    var rollbackOrder: [Completion] {
        state.withLock { s in
            let reused = s.completed.filter { $0.firstRan != nil }.sorted { $0.firstRan! < $1.firstRan! }
            return (reused + s.completed.filter { $0.firstRan == nil }).reversed()
        }
    }

    /// How many workflow steps ended in each state (and groups that timed out, each as one
    /// step `timed_out`; see `record`).
    var counts: [StepState: Int] {
        state.withLock { s in s.leafStates.values.reduce(into: [:]) { $0[$1.state, default: 0] += 1 } }
    }

    /// Of `counts`, the `failed` and `timed_out` ones whose failure was allowed
    /// (`StepTransition.isAllowedFailure`).
    var allowedFailures: [StepState: Int] {
        state.withLock { s in
            s.leafStates.values.reduce(into: [:]) { counts, entry in
                if entry.allowed, entry.state == .failed || entry.state == .timedOut { counts[entry.state, default: 0] += 1 }
            }
        }
    }

    var status: RunStatus {
        get { state.withLock { $0.status } }
        set { state.withLock { $0.status = newValue } }
    }
}
