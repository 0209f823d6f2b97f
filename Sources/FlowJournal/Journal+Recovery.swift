#if canImport(Glibc)
import Glibc
#endif
import FlowKit

extension Journal {
    /// Folds the lock files of runs whose process died into the database, then removes them.
    ///
    /// A live run's lock file holds the transitions it recorded but has not committed yet
    /// (see `RunLock`, `JournalRecorder`). Every `flow` that opens the journal calls this
    /// first, so `runs`, `show`, `logs`, `resume` and `undo` see a killed run exactly as far
    /// as it got. A file is taken only when nobody holds its lock and its run is in the
    /// database (a run whose process created the file but has not yet begun recording itself
    /// is left alone, and so is one that died then, for `orphanedLockAge`); taken with a shared lock, so that others still see
    /// nobody holds it. Lines whose `seq` the database already has are
    /// skipped, so a run killed between a commit and emptying its file, or two `flow`s
    /// recovering at once, add nothing twice. Failures (a read-only state dir) leave the
    /// file for a later `flow`. Also removes the claim files (`RunClaim`) nobody holds.
    func recover() {
        let directory = stateDir + "/locks"
        guard let handle = opendir(directory) else { return }
        var names: [String] = [], claims: [String] = []
        while let entry = readdir(handle) {
            let name = String(decoding: DirectoryEntry.name(entry), as: UTF8.self)
            if name.hasSuffix(".lock") { names.append(name) }
            if name.hasSuffix(".claim") { claims.append(name) }
        }
        closedir(handle)
        // Claims of resumes and undos that have ended (see `RunClaim`).
        for name in claims { RunClaim.removeIfFree(directory + "/" + name) }
        for name in names {
            let path = directory + "/" + name
            let fd = RunLock.openFile(path, O_RDWR)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            // Shared, as `RunLock.isHeld` looks: an exclusive lock held here through the fold
            // (which waits for the database's write lock, up to 10 s behind another writer)
            // made every other `flow` read the dead run as `running` meanwhile, and `flow
            // resume` of it was refused as still running (found by the concurrency audit).
            // Two `flow`s folding one file at once add nothing twice (see `fold`).
            guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { continue }  // its run is live
            let runID = String(name.dropLast(".lock".count))
            guard let bytes = RunLock.readAll(fd), let folded = try? fold(TransitionRecord.parseLines(bytes), runID: runID) else {
                continue
            }
            if folded || Self.isOrphanedLockFile(fd) { unlink(path) }
        }
    }

    /// Whether the lock file open at `fd` (nobody holding it), whose run the database does not
    /// have, belongs to a run that died before it recorded itself: made over
    /// `orphanedLockAge` ago. A run locks its file right after making it (`RunLock`), so
    /// one made that long ago and free is not a run about to begin. Such a file stayed for
    /// good (found by the concurrency audit: a run SIGKILLed between making its lock file
    /// and writing its row; harmless but for the clutter, and for a later run that drew the
    /// same id, which `RunLock` refuses and runs unrecorded).
    static func isOrphanedLockFile(_ fd: Int32) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        return info.st_mtim.tv_sec < time(nil) - orphanedLockAge
    }

    /// How old (seconds) a free lock file of a run not in the database must be to be removed.
    static let orphanedLockAge = 600

    /// Inserts `records` of `runID` that the database lacks, in order and without gaps; false
    /// if the run is not in the database.
    private func fold(_ records: [TransitionRecord], runID: String) throws -> Bool {
        try write { db in
            guard let state: String = try db.value("SELECT state FROM runs WHERE id = ?", [runID]) else {
                return false
            }
            guard state == "running", !records.isEmpty else { return true }
            var next: Int = try db.value("SELECT MAX(seq) FROM transitions WHERE run_id = ?", [runID]) ?? 0
            next += 1
            // Each line must carry on from where its step is: one that does not (a step of
            // another plan, a move from a state the step is not in) is not this run's, and
            // ends what is folded in, as a line cut short does. A move from `pending` always
            // carries on: a retried group runs its steps again as new instances, each from
            // `pending` after the attempt before ended them. So does `succeeded → undoing`
            // while the step has an instance not yet reversed: the rollback reverses every
            // instance that succeeded, latest first, so an earlier one's comes after the
            // latest one's `undone` (or its `failed`, when only attempt 1 succeeded). The
            // fold stopped there: the reversal of the earlier instances and the rest of the
            // rollback were lost, and `flow undo` reversed them a second time.
            let paths = Set<String>(try db.values("SELECT path FROM steps WHERE run_id = ?", [runID]))
            var states: [String: String] = [:]
            for row in try db.rows("""
                SELECT path, to_state FROM transitions WHERE run_id = ? AND seq IN
                    (SELECT MAX(seq) FROM transitions WHERE run_id = ? GROUP BY path)
                """, [runID, runID]) {
                if let path: String = row["path"], let state: String = row["to_state"] { states[path] = state }
            }
            // Per path, its instances that succeeded and were not yet reversed.
            var unreversed: [String: Int] = [:]
            for row in try db.rows("""
                SELECT path, SUM(to_state = 'succeeded') - SUM(to_state = 'undoing') AS n FROM transitions
                WHERE run_id = ? AND to_state IN ('succeeded', 'undoing') GROUP BY path
                """, [runID]) {
                if let path: String = row["path"], let n: Int = row["n"] { unreversed[path] = n }
            }
            let statements = try JournalStatements(db)
            for record in records where record.seq >= next {
                let earlierInstance = record.from == "succeeded" && record.to == "undoing" && unreversed[record.path, default: 0] > 0
                guard record.seq == next, paths.contains(record.path),
                      record.from == "pending" || record.from == states[record.path, default: "pending"] || earlierInstance
                else { break }
                try statements.insert(record, runID: runID)
                states[record.path] = record.to
                if record.to == "succeeded" { unreversed[record.path, default: 0] += 1 }
                if record.to == "undoing" { unreversed[record.path, default: 0] -= 1 }
                next += 1
            }
            return true
        }
    }
}
