import FlowKit

/// Every instance of a run's steps that succeeded, not only the latest per step: what `flow
/// undo` reverses.
extension Journal {
    /// One instance of a step that succeeded in a run, and what became of it since.
    struct Success {
        /// The seq of its `→ succeeded` transition, which keys its outputs (v6).
        var seq: Int
        /// Its place among the run's successes, from 1: the order `StepLedger.completedSeq`
        /// counts in.
        var completed: Int
        /// Its `→ succeeded` transition's reason (`reused from run ID`, `succeeded in run ID
        /// (success 1 of 2)`).
        var reason: String?
        var exitCode: Int?
        /// `succeeded`, or where a rollback took it: `undoing`, `undone`, `undo_failed`.
        var state = "succeeded"
        var outputs: [String: String] = [:]
    }

    /// The instances of run `runID`'s steps that succeeded, by path, each path's in the
    /// order they succeeded, read from the run's transitions.
    ///
    /// A retried group runs its steps again as new instances (each from `pending`), and its
    /// rollback reverses every one that succeeded, latest completion first, one at a time:
    /// so a path's `→ undoing` is that of its latest instance still `succeeded`, and its
    /// `→ undone` or `→ undo_failed` that of the one being undone. (`steps` keeps the latest
    /// instance only, where the undo of an earlier one is left out.) Outputs are each
    /// instance's own where the run kept them so (`RunRecord.instanceOutputs`); otherwise
    /// none are read.
    func successes(_ runID: String, withOutputs: Bool) throws(JournalError) -> [String: [Success]] {
        try read { db in
            var found: [String: [Success]] = [:]
            var completed = 0
            let rows = try db.rows("""
                SELECT seq, path, to_state, reason, exit_code FROM transitions
                WHERE run_id = ? AND to_state IN ('succeeded', 'undoing', 'undone', 'undo_failed') ORDER BY seq
                """, [runID])
            for row in rows {
                let path: String = row["path"] ?? "", state: String = row["to_state"] ?? ""
                switch state {
                case "succeeded":
                    completed += 1
                    found[path, default: []].append(Success(seq: row["seq"] ?? 0, completed: completed, reason: row["reason"],
                                                            exitCode: Self.plausibleCode(row["exit_code"])))
                case "undoing":
                    guard let i = found[path]?.lastIndex(where: { $0.state == "succeeded" }) else { continue }
                    found[path]![i].state = state
                default:
                    guard let i = found[path]?.lastIndex(where: { $0.state == "undoing" }) else { continue }
                    found[path]![i].state = state
                }
            }
            guard withOutputs, hasInstanceOutputs, !found.isEmpty else { return found }
            var outputs: [Int: [String: String]] = [:]
            for row in try db.rows("SELECT seq, key, value FROM outputs WHERE run_id = ? AND seq > 0", [runID]) {
                outputs[row["seq"] ?? 0, default: [:]][row["key"] ?? ""] = row["value"]
            }
            for path in found.keys {
                for i in found[path]!.indices { found[path]![i].outputs = outputs[found[path]![i].seq] ?? [:] }
            }
            return found
        }
    }

    /// Which of their step's successes in the run they reversed the instances `flow undo`
    /// `undoID` reversed (or tried to) are, with the state it left them in, by path and
    /// success (`ReversedStep.success`, as the reason of their recorded success says; nil
    /// where it says none: the step's latest, see `StepTransition.reversedSuccess`).
    public func reversals(byUndo undoID: String) throws(JournalError) -> [(path: String, success: Int?, state: String)] {
        var reached: [(path: String, success: Int?, state: String)] = []
        for (path, instances) in try successes(undoID, withOutputs: false) {
            for instance in instances where ["undone", "undo_failed", "undoing"].contains(instance.state) {
                reached.append((path, StepTransition.reversedSuccess(in: instance.reason ?? ""), instance.state))
            }
        }
        return reached
    }
}
