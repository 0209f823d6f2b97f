import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import FlowJournal

/// `run_counts`: the step counts a run's end stores, which `flow runs` reads instead of
/// counting every run's steps. They must be what counting the steps gives.
@Suite struct RunCountsTests {
    typealias Step = (path: String, kind: String, state: String, allowed: Bool)

    /// Every shape the counting rule (`JournalSchema.countedStep`) tells apart.
    static let richSteps: [Step] = [
        ("1", "sequential", "failed", false),  // failed, nothing inside ran: counted
        ("1.1", "shell", "skipped", false),
        ("1.2", "print", "pending", false),
        ("2", "concurrent", "failed", false),  // failed, something inside ran: not counted
        ("2.1", "shell", "failed", false),
        ("3", "sequential", "timed_out", false),  // its own timeout: counted
        ("3.1", "shell", "cancelled", false),
        ("4", "shell", "failed", true),
        ("5", "use", "undo_failed", false),  // its undo failed: counted
        ("5.1", "shell", "undone", false),
        ("5.u1", "print", "undo_failed", false),  // undo steps: never counted
        ("6", "delay", "succeeded", false),
        ("6.u1", "shell", "succeeded", false),
        ("7", "shell", "timed_out", true),
        ("8", "sequential", "undone", false),  // its undo ran: not counted, the steps it reversed `undone`
        ("8.1", "shell", "succeeded", false),
        ("8.2", "concurrent", "succeeded", false),
        ("8.2.1", "print", "succeeded", false),
        ("8.2.2", "shell", "failed", true),  // failed: nothing of it to reverse
        ("8.3", "shell", "skipped", false),
        ("8.u1", "shell", "succeeded", false),
        ("9", "shell", "succeeded", false),  // `9` is not inside `8`
    ]

    /// Inserts run `id` as a recorder does: `running`, its steps, then (with `end`) its end
    /// and its counts.
    static func insertRun(_ db: SQLiteConnection, id: String, kind: String = "run", parent: String? = nil, started: Double,
                          steps: [Step], end: String?) throws {
        try db.execute("""
            INSERT INTO runs (id, kind, parent_id, workflow_path, workflow_name, content_hash, content, args, cwd, started_at,
                              state, pid, host)
            VALUES (?, ?, ?, 'w.yml', 'w', 'h', x'', '{}', '/', ?, 'running', 1, 'host')
            """, [id, kind, parent, started])
        for (position, step) in steps.enumerated() {
            try db.execute("""
                INSERT INTO steps (run_id, path, position, depth, kind, label, state, allowed_failure) VALUES (?, ?, ?, 0, ?, 'l', ?, ?)
                """, [id, step.path, position, step.kind, step.state, step.allowed ? 1 : nil])
        }
        if let end {
            try db.execute("UPDATE runs SET state = ?, ended_at = ? WHERE id = ?", [end, started + 1, id])
            // As the recorder does where the journal has the table.
            let hasTable: [String] = try db.values("SELECT name FROM sqlite_master WHERE name = 'run_counts'")
            if !hasTable.isEmpty { try db.execute(JournalSchema.storeRunCounts, [id]) }
        }
    }

    /// Each run's counts as they were found before `run_counts`: its steps counted one by
    /// one (`isCountedAlone`, the rule of a live run) and in the one query over the whole
    /// journal that `flow runs` ran.
    static func countedFromSteps(_ journal: Journal, _ runs: [RunRecord]) throws -> [String: Journal.Counts] {
        let finished = runs.filter { !$0.isUnfinished }.map(\.id)
        let whole = try journal.countsFromSteps(of: finished, onlyThese: false)
        var counted: [String: Journal.Counts] = [:]
        for run in runs where !run.isUnfinished {
            let steps = try journal.steps(run.id)
            var counts: [String: Int] = [:], allowed: [String: Int] = [:]
            let undoneGroups = Journal.undoneGroupPrefixes(steps)
            for step in steps where Journal.isCountedAlone(step, among: steps) {
                let state = Journal.countedState(step.state, of: step, undoneGroups: undoneGroups)
                counts[state, default: 0] += 1
                if step.allowedFailure { allowed[state, default: 0] += 1 }
            }
            #expect(whole[run.id]?.counts ?? [:] == counts, "\(run.id)")
            #expect(whole[run.id]?.allowed ?? [:] == allowed, "\(run.id)")
            counted[run.id] = (counts, allowed)
        }
        return counted
    }

    /// Runs finished before the table (counted by the migration), since (by their end),
    /// live, dead, resumed, undone, cancelled at once, written by another tool, and pruned:
    /// `runs` gives each the counts its steps give, and the same as a journal without the
    /// table (read as before).
    @Test func storedCountsAreThoseOfTheSteps() throws {
        let dir = try JournalStorageTests.oldJournal(upTo: "runs_parent_index", "")
        defer { JournalStorageTests.removeStateDir(dir) }
        do {
            let old = try SQLiteConnection(path: dir + "/journal.sqlite")
            try old.transaction {
                try Self.insertRun(old, id: "before", started: 1, steps: Self.richSteps, end: "failed")
                try Self.insertRun(old, id: "before-empty", started: 2, steps: [], end: "succeeded")
                try Self.insertRun(old, id: "before-dead", started: 3, steps: [("1", "shell", "pending", false)], end: nil)
            }
        }
        let journal = try Journal.open(stateDir: dir, create: true)
        let migrated: [String] = try journal.read { db in try db.values("SELECT run_id FROM run_counts ORDER BY run_id") }
        #expect(migrated == ["before", "before-empty"], "a run still recorded running is counted at its end, or from its transitions")
        try journal.write { db in
            try Self.insertRun(db, id: "gone", started: 0.5, steps: Self.richSteps, end: "failed")
            try Self.insertRun(db, id: "done", started: 10, steps: Self.richSteps, end: "failed")
            try Self.insertRun(db, id: "resume", kind: "resume", parent: "done", started: 11,
                               steps: [("1", "shell", "succeeded", false), ("2", "shell", "failed", true)], end: "succeeded")
            try Self.insertRun(db, id: "undo", kind: "undo", parent: "done", started: 12,
                               steps: [("1", "shell", "undone", false), ("1.u1", "shell", "succeeded", false)], end: "succeeded")
            try Self.insertRun(db, id: "live", started: 13, steps: [("1", "shell", "pending", false)], end: nil)
            try Self.insertRun(db, id: "dead", started: 14, steps: [("1", "shell", "pending", false), ("2", "sequential", "undone", false),
                                                                  ("2.1", "shell", "succeeded", false)], end: nil)
            try Self.insertRun(db, id: "abandoned", started: 15, steps: [("1", "shell", "running", false), ("2", "print", "pending", false)],
                               end: nil)
            // As `JournalRecorder.abandon` ends a run: its steps, then the run.
            try db.execute("UPDATE steps SET state = 'cancelled' WHERE run_id = 'abandoned' AND state = 'running'")
            try db.execute("UPDATE runs SET state = 'cancelled', ended_at = 16 WHERE id = 'abandoned' AND state = 'running'")
            try db.execute(JournalSchema.storeRunCounts, ["abandoned"])
            // Rows another tool wrote (or an older flow), the run finished with no counts stored.
            try db.execute("""
                INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, ended_at,
                                  state, pid, host)
                VALUES ('tool', 'run', 'w.yml', 'w', 'h', x'', '{}', '/', 17, 18, 'failed', 1, 'host')
                """)
            try db.execute("INSERT INTO steps (run_id, path, position, depth, kind, label, state) VALUES ('tool', '1', 0, 0, 'shell', 'l', 'failed')")
            for (seq, to) in ["running", "succeeded"].enumerated() {
                try db.execute("""
                    INSERT INTO transitions (run_id, seq, path, from_state, to_state, attempt, time) VALUES ('live', ?, '1', ?, ?, 1, 13)
                    """, [seq + 1, seq == 0 ? "pending" : "running", to])
            }
        }
        let lock = try #require(RunLock(stateDir: dir, runID: "live"))
        defer { lock.release(stateDir: dir, runID: "live") }
        #expect(try journal.prune(keep: nil, before: 0.9) == 1)

        let runs = try journal.runs(limit: nil)
        #expect(runs.map(\.id) == ["tool", "abandoned", "dead", "live", "undo", "resume", "done", "before-dead", "before-empty", "before"])
        #expect(runs.map(\.state) == ["failed", "cancelled", "interrupted", "running", "succeeded", "succeeded", "failed",
                                      "interrupted", "succeeded", "failed"])
        let counted = try Self.countedFromSteps(journal, runs)
        for run in runs where !run.isUnfinished {
            #expect(run.counts == counted[run.id]?.counts, "\(run.id)")
            #expect(run.allowedFailures == counted[run.id]?.allowed, "\(run.id)")
        }
        let rich = ["failed": 4, "skipped": 2, "pending": 1, "timed_out": 2, "cancelled": 1, "undo_failed": 1, "undone": 3, "succeeded": 2]
        #expect(runs.first { $0.id == "done" }?.counts == rich)
        #expect(runs.first { $0.id == "done" }?.allowedFailures == ["failed": 2, "timed_out": 1])
        #expect(runs.first { $0.id == "before" }?.counts == rich)
        #expect(runs.first { $0.id == "abandoned" }?.counts == ["cancelled": 1, "pending": 1])
        #expect(runs.first { $0.id == "live" }?.counts == ["succeeded": 1])
        #expect(runs.first { $0.id == "dead" }?.counts == ["pending": 1, "undone": 1], "a step its group's undo reversed")

        // The same as a journal read without the table, as before it.
        let asBefore = Journal(stateDir: dir, path: dir + "/journal.sqlite", connection: try SQLiteConnection(path: dir + "/journal.sqlite"),
                               columns: .init(runCounts: false))
        let before = try asBefore.runs(limit: nil)
        #expect(before.map(\.id) == runs.map(\.id))
        #expect(before.map(\.state) == runs.map(\.state))
        #expect(before.map(\.counts) == runs.map(\.counts))
        #expect(before.map(\.allowedFailures) == runs.map(\.allowedFailures))
        #expect(try journal.run("done").counts == rich, "`flow show` reads them too")

        // What `flow runs` reads (`listing`): the same runs, states and counts, and the
        // same of every field it shows.
        var listed: [RunRecord] = []
        try journal.forEachRun(listing: true) { listed.append($0) }
        #expect(listed.map(\.id) == runs.map(\.id))
        #expect(listed.map(\.state) == runs.map(\.state))
        #expect(listed.map(\.counts) == runs.map(\.counts))
        #expect(listed.map(\.allowedFailures) == runs.map(\.allowedFailures))
        #expect(listed.map(\.kind) == runs.map(\.kind) && listed.map(\.parentID) == runs.map(\.parentID))
        #expect(listed.map(\.workflowPath) == runs.map(\.workflowPath) && listed.map(\.workflowName) == runs.map(\.workflowName))
        #expect(listed.map(\.startedAt) == runs.map(\.startedAt) && listed.map(\.endedAt) == runs.map(\.endedAt))
        #expect(listed.map(\.exitStatus) == runs.map(\.exitStatus) && listed.map(\.args.action) == runs.map(\.args.action))

        // Every finished run's counts were stored but the tool's; the pruned run's went.
        let stored: [String] = try journal.read { db in try db.values("SELECT run_id FROM run_counts ORDER BY run_id") }
        #expect(stored == ["abandoned", "before", "before-empty", "done", "resume", "undo"])
    }

    /// An undo's counts leave out the steps it left alone (its skips), however they are
    /// read: stored by an older flow with them (`skipped 3,undone 2`), stored at its end
    /// (`storeRunCounts`), or counted from the steps of one whose flow died.
    @Test func anUndosCountsLeaveOutTheStepsItLeftAlone() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        let steps: [Step] = [("1", "shell", "undone", false), ("2", "shell", "skipped", false), ("3", "sequential", "skipped", false),
                             ("3.1", "print", "skipped", false), ("1.u1", "shell", "succeeded", false)]
        try journal.write { db in
            try Self.insertRun(db, id: "run", started: 1, steps: steps, end: "succeeded")
            try Self.insertRun(db, id: "older", kind: "undo", parent: "run", started: 2, steps: steps, end: "succeeded")
            try db.execute("UPDATE run_counts SET counts = 'skipped 2,undone 1' WHERE run_id = 'older'")
            try Self.insertRun(db, id: "undo", kind: "undo", parent: "run", started: 3, steps: steps, end: "succeeded")
            try Self.insertRun(db, id: "dead", kind: "undo", parent: "run", started: 4, steps: steps, end: nil)
        }
        let stored: [String] = try journal.read { db in try db.values("SELECT counts FROM run_counts WHERE run_id = 'undo'") }
        #expect(stored == ["undone 1"])
        for id in ["older", "undo", "dead"] {
            #expect(try journal.run(id).counts == ["undone": 1], "\(id)")
        }
        #expect(try journal.run("run").counts == ["undone": 1, "skipped": 2], "a run's skips are counted")
        let counted = try journal.countsFromSteps(of: ["undo", "run"], onlyThese: true)
        #expect(counted["undo"]?.counts == ["undone": 1] && counted["run"]?.counts == ["undone": 1, "skipped": 2])
    }

    /// A flow from before the table prunes the tables it knows: the counts of the runs it
    /// deleted stay, are never listed, and go at the next prune.
    @Test func countsOfRunsAnOlderFlowPrunedGoAtTheNextPrune() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            for i in 0..<4 { try Self.insertRun(db, id: "r\(i)", started: Double(i), steps: [("1", "shell", "succeeded", false)], end: "succeeded") }
            for table in ["steps", "runs"] { try db.execute("DELETE FROM \(table) WHERE \(table == "runs" ? "id" : "run_id") = 'r0'") }
        }
        #expect(try journal.runs(limit: nil).map(\.id) == ["r3", "r2", "r1"])
        #expect(try journal.prune(keep: 2, before: nil) == 1)
        let stored: [String] = try journal.read { db in try db.values("SELECT run_id FROM run_counts ORDER BY run_id") }
        #expect(stored == ["r2", "r3"])
    }

    /// `forEachRun` reads a page at a time, each page after where the last one ended: over
    /// several pages it gives every run once, in the order of one query (newest first, ties
    /// by insertion, a damaged `started_at` of another type where `ORDER BY` puts it), and
    /// `limit` stops at page boundaries and inside pages alike.
    @Test func theListingReadsEveryRunOncePageByPage() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        let total = Journal.listingPage * 2 + 10
        try journal.write { db in
            for i in 0..<total {
                // Runs of three with the same start: the page boundaries fall between ties.
                try Self.insertRun(db, id: String(format: "run-%04d", i), started: Double(i / 3), steps: [], end: "succeeded")
            }
            try db.execute("UPDATE runs SET started_at = 'damaged' WHERE id = 'run-0100'")
        }
        let expected: [String] = try journal.read { db in try db.values("SELECT id FROM runs ORDER BY started_at DESC, rowid DESC") }
        #expect(expected.first == "run-0100")
        for listing in [false, true] {
            var seen: [String] = []
            try journal.forEachRun(listing: listing) { seen.append($0.id) }
            #expect(seen == expected, "listing: \(listing)")
            for limit in [1, Journal.listingPage - 1, Journal.listingPage, Journal.listingPage + 1, total, total + 5] {
                var page: [String] = []
                try journal.forEachRun(limit: limit, listing: listing) { page.append($0.id) }
                #expect(page == Array(expected.prefix(limit)), "limit \(limit), listing: \(listing)")
            }
        }
        // The listing reads the index alone: the rows' pages (each run's workflow content)
        // are not read.
        let plan: [String] = try journal.read { db in
            try db.rows("EXPLAIN QUERY PLAN SELECT \(Journal.listingColumns), rowid FROM runs INDEXED BY runs_listing "
                        + "WHERE (started_at, rowid) < (?, ?) ORDER BY started_at DESC, rowid DESC LIMIT 5", [1.0, 1]).map { $0[3] ?? "" }
        }
        #expect(plan.contains { $0.contains("USING COVERING INDEX runs_listing") }, "\(plan)")
    }

    /// Counting finds the groups whose `undo` ran (a step inside one is counted `undone`)
    /// through an index on the run, once per counted step: the query grouped by the state it
    /// computed, and SQLite evaluated that state a second time scanning every undone group of
    /// the journal for each succeeded leaf (`SCAN g`), 5 s for `flow runs` of 18,000 runs with
    /// 12,000 undone groups, the time growing with the square of the journal.
    @Test func countingLooksUndoneGroupsUpByRunNotByScanningThem() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        let finishedRuns = String(JournalSchema.countFinishedRuns.prefix { $0 != ";" })
        let statements = [Journal.countsQuery("", allowedFailures: true), Journal.countsQuery("run_id IN (?) AND", allowedFailures: true),
                          Journal.countsQuery("", allowedFailures: false), JournalSchema.storeRunCounts, finishedRuns]
        for sql in statements {
            let plan: [String] = try journal.read { db in try db.rows("EXPLAIN QUERY PLAN " + sql, []).map { $0[3] ?? "" } }
            #expect(plan.contains { $0.hasPrefix("SEARCH g USING") }, "\(plan)\n\(sql)")
            #expect(!plan.contains { $0.hasPrefix("SCAN g") }, "\(plan)\n\(sql)")
        }
    }
}
