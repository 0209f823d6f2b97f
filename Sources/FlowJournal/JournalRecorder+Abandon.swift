import FlowKit


extension JournalRecorder {
    /// Records the end of a run that flow is about to leave at once (a second Ctrl-C):
    /// what the run recorded so far, then the run `cancelled` with `exitStatus`, and its
    /// steps still running or retrying `cancelled` (their processes were just SIGKILLed;
    /// the transitions table keeps what happened before). Steps never reached stay
    /// `pending`. Without this, the run would show `interrupted` until its lock went stale.
    ///
    /// Does nothing once the run's end is recorded, or when the journal is not recording.
    public func abandon(exitStatus: Int32) {
        mutex.withLock { _ in
            guard !disabled, awaitOpening() else { return }
            ticker?.cancel()
            let id = metadata.id
            let now = Timestamp.now().unix
            guarded { db, _ in
                try db.execute("UPDATE steps SET state = 'cancelled', ended_at = ? WHERE run_id = ? AND state IN ('running', 'retrying')",
                               [now, id])
                // A step being undone keeps its own times (a rollback does not move them).
                try db.execute("UPDATE steps SET state = 'undo_failed' WHERE run_id = ? AND state = 'undoing'", [id])
                try db.execute("UPDATE runs SET state = 'cancelled', exit_status = ?, ended_at = ? WHERE id = ? AND state = 'running'",
                               [Int(exitStatus), now, id])
                if journal.hasRunCounts { try db.execute(JournalSchema.storeRunCounts, [id]) }
            }
            try? journal.access { _ in statements = nil }
            releaseLock()
        }
    }
}
