import FlowKit

/// A run's steps as its history stands, for `resume` and `undo`.
extension Journal {
    /// The steps of `run` with what the run it resumed left of the steps it never reached.
    ///
    /// A `resume` holds the succeeded steps of the run it carries on as its own, but only
    /// those it got to: one killed or cancelled before reaching a step has it `pending` (or
    /// `skipped`, cancelled) although the earlier run had it `succeeded`, and once a run is
    /// resumed it is resumed and undone only through its resume. Read alone, the resume's
    /// record made `flow resume` run that step again and `flow undo` leave it as it was. So
    /// such a step takes its state, outputs and completion from the earlier run, itself read
    /// this way, where a `flow undo` of that run reversed it (or tried to) is as that undo
    /// left it. (The resume reused every succeeded step it reached: a reached step is never
    /// `pending`, nor `skipped` but when not selected, which the earlier run's was not either.)
    ///
    /// A step carried on, and a leaf the resume reused, keep the completion of the run that
    /// ran them: `generation` 1 (the run resumed), 2 (the one before)…, which completed
    /// before every step of a later one. Undos of `run` itself are not applied: `resume`
    /// and `undo` weigh those themselves.
    ///
    /// A step carried on is matched by path only: `origin` names the run it came from,
    /// whose step at that path is the one the result is of (see `unmatchedReuse`).
    public func carriedSteps(_ run: RunRecord) throws(JournalError) -> [StepRecord] {
        try carriedSteps(id: run.id, kind: run.kind, parentID: run.parentID, visited: [])
    }

    /// `carriedSteps` with each step of `run` itself that succeeded more than once (a
    /// retried group's, once per attempt) as one record per instance that succeeded, in the
    /// order they did, each with its own state (`undone` when the run's rollback reversed
    /// it), outputs and completion: what `flow undo` reverses, as the run's own rollback
    /// reverses every instance. A run recorded before the journal kept each instance's
    /// outputs (`RunRecord.instanceOutputs`) has one record per step, as `carriedSteps`; so
    /// does one whose outputs an older flow wrote in part (`hasOutputsOfAnOlderFlow`).
    ///
    /// Steps carried on from an earlier run stay one record each: the resume would have
    /// reused that run's latest result only. An instance the resume reused keeps the
    /// completion of the run that ran it, as `carriedSteps` gives a reused step.
    public func undoableSteps(_ run: RunRecord) throws(JournalError) -> [StepRecord] {
        var perInstance = run.instanceOutputs
        if perInstance { perInstance = try !hasOutputsOfAnOlderFlow(run.id) }
        return try carriedSteps(id: run.id, kind: run.kind, parentID: run.parentID, visited: [], expandingInstances: perInstance)
    }

    /// Whether run `id`, recorded per instance, has outputs a flow from before v6 wrote: it
    /// folded in the lock file of the run, which had died, with `seq` 0 and one set per
    /// step (each folded instance's overwrote the one before). The earlier instances'
    /// outputs are then gone: reversed one by one, their undos got none (`deleting ` with
    /// an empty id). Such a run is undone one result per step, as one recorded before v6.
    func hasOutputsOfAnOlderFlow(_ id: String) throws(JournalError) -> Bool {
        try read { db in
            let found: Int? = try db.value("SELECT 1 FROM outputs WHERE run_id = ? AND seq = 0 LIMIT 1", [id])
            return found != nil
        }
    }

    private func carriedSteps(id: String, kind: String, parentID: String?, visited: Set<String>,
                              expandingInstances: Bool = false) throws(JournalError) -> [StepRecord]
    {
        let own = try steps(id)
        var steps = own
        // `visited` only guards against a damaged journal whose parents loop.
        guard kind == "resume", let parentID, !visited.contains(parentID),
              let parent = try parentRow(parentID) else {
            return expandingInstances ? try instances(of: id, own: own, carried: steps, earlier: [:]) : steps
        }
        var earlier = try carriedSteps(id: parentID, kind: parent.kind, parentID: parent.parentID, visited: visited.union([id]))
        try applyUndos(of: parentID, to: &earlier)
        let byPath = Dictionary(earlier.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        // Only the leaves this resume reused: one it ran again (a `--force` resume of an
        // edited command) also succeeded in both runs, but completed now, after those.
        let reused = try reusedSources(id)
        for i in steps.indices {
            guard let before = byPath[steps[i].path] else { continue }
            if Self.unreached.contains(steps[i].state) {
                guard !Self.unreached.contains(before.state) else { continue }
                steps[i].state = before.state
                steps[i].attempts = before.attempts
                steps[i].exitCode = before.exitCode
                steps[i].startedAt = before.startedAt
                steps[i].endedAt = before.endedAt
                steps[i].completedSeq = before.completedSeq
                steps[i].outputs = before.outputs
                steps[i].generation = before.generation + 1
                steps[i].origin = before.origin ?? parentID
            } else if reused[steps[i].path] != nil, before.state == "succeeded", Self.leaves.contains(steps[i].kind),
                      before.completedSeq != nil,
                      ["succeeded", "undo_failed", "undoing"].contains(steps[i].state) {
                // A leaf the earlier run had succeeded was reused, not run: it completed
                // when the earlier run ran it, before this run's own steps (and the order
                // `flow undo` reverses is that of the runs' steps, not of the reuse).
                steps[i].completedSeq = before.completedSeq
                steps[i].generation = before.generation + 1
            }
        }
        return expandingInstances ? try instances(of: id, own: own, carried: steps, earlier: byPath) : steps
    }

    /// `carried` (the steps of run `id` as `carriedSteps` reads them; `own`, as the run
    /// recorded them) with each step that has successes in the run itself as one record per
    /// success (see `undoableSteps`). `earlier`: the steps of the run it resumed, by path.
    private func instances(of id: String, own: [StepRecord], carried: [StepRecord],
                           earlier: [String: StepRecord]) throws(JournalError) -> [StepRecord] {
        let successes = try successes(id, withOutputs: true)
        let reusedPrefix = StepTransition.reusedReason(from: "")
        var expanded: [StepRecord] = []
        expanded.reserveCapacity(carried.count)
        for (i, step) in carried.enumerated() {
            // Successes of its own: the run reached the step (a later attempt of its group may
            // have skipped it, which `carriedSteps` reads as never reached).
            guard let found = successes[step.path], !found.isEmpty else {
                expanded.append(step)
                continue
            }
            for (n, success) in found.enumerated() {
                var record = own[i]
                record.state = success.state
                record.exitCode = success.exitCode
                record.outputs = success.outputs
                record.completedSeq = success.completed
                record.generation = 0
                record.origin = nil
                record.success = n + 1
                record.successes = found.count
                if success.reason?.hasPrefix(reusedPrefix) == true, let before = earlier[step.path],
                   before.state == "succeeded", let completed = before.completedSeq, Self.leaves.contains(step.kind) {
                    record.completedSeq = completed
                    record.generation = before.generation + 1
                }
                expanded.append(record)
            }
        }
        return expanded
    }

    /// The kinds of step a resume reuses (groups run again around them).
    private static let leaves: Set<String> = ["print", "delay", "shell"]

    /// States of a step a resume did not get to.
    private static let unreached: Set<String> = ["pending", "skipped"]

    /// The kind and parent of run `id`, or nil if it was pruned.
    private func parentRow(_ id: String) throws(JournalError) -> (kind: String, parentID: String?)? {
        let row: SQLiteRow? = try read { db in try db.rows("SELECT kind, parent_id FROM runs WHERE id = ?", [id]).first }
        return row.map { ($0["kind"] ?? "", $0["parent_id"]) }
    }

    /// Marks the steps of run `id` that its `flow undo`s reached with the state they left
    /// (`undone` wins over `undo_failed` and `undoing`, as in `flow undo`'s own count).
    private func applyUndos(of id: String, to steps: inout [StepRecord]) throws(JournalError) {
        let undos: [String] = try read { db in
            try db.values("SELECT id FROM runs WHERE parent_id = ? AND kind = 'undo' ORDER BY started_at, rowid", [id])
        }
        var reached: [String: String] = [:]
        for undo in undos {
            for step in try self.steps(undo) where ["undone", "undo_failed", "undoing"].contains(step.state) {
                if reached[step.path] != "undone" { reached[step.path] = step.state }
            }
        }
        for i in steps.indices { if let state = reached[steps[i].path] { steps[i].state = state } }
    }
}
