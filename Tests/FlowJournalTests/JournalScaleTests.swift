import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import FlowJournal

/// The journal's queries that read one run, or a few, out of a long history: they answer as
/// the whole-history reads they replace did (speed is shown by bench/journal_scale.py).
@Suite struct JournalScaleTests {
    /// Inserts a finished run (`state`, started at `started`) that carried `parent` on as `kind`.
    static func insertRun(_ db: SQLiteConnection, id: String, kind: String = "run", parent: String? = nil,
                          started: Double, state: String = "succeeded") throws {
        try db.execute("""
            INSERT INTO runs (id, kind, parent_id, workflow_path, workflow_name, content_hash, content, args, cwd, started_at,
                              ended_at, state, pid, host)
            VALUES (?, ?, ?, 'w.yml', 'w', 'h', x'', '{}', '/', ?, ?, ?, 1, 'host')
            """, [id, kind, parent, started, started + 1, state])
        try db.execute("INSERT INTO steps (run_id, path, position, depth, kind, label, state) VALUES (?, '1', 0, 0, 'shell', 's', ?)",
                       [id, state == "running" ? "running" : "succeeded"])
    }

    /// A journal as main's flow left it (v1 to v5, no `runs_parent` index) opens, is given
    /// the index, and keeps its runs; the runs that carried a run on are found through it.
    @Test func aJournalFromBeforeTheParentIndexOpensWithItsRuns() throws {
        let dir = try JournalStorageTests.oldJournal(upTo: "v5", """
            INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, state, pid, host)
            VALUES ('a', 'run', 'w.yml', 'w', 'h', x'', '{}', '/', 1, 'failed', 1, 'host');
            INSERT INTO runs (id, kind, parent_id, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, state, pid, host)
            VALUES ('b', 'resume', 'a', 'w.yml', 'w', 'h', x'', '{}', '/', 2, 'succeeded', 1, 'host');
            """)
        defer { JournalStorageTests.removeStateDir(dir) }
        let indexBefore: Int? = try SQLiteConnection(path: dir + "/journal.sqlite")
            .value("SELECT 1 FROM sqlite_master WHERE name = 'runs_parent'")
        #expect(indexBefore == nil)
        let journal = try Journal.open(stateDir: dir, create: true)
        #expect(try journal.runs(limit: nil).map(\.id) == ["b", "a"])
        #expect(try journal.laterRuns(of: "a").map(\.id) == ["b"])
        let (index, applied): (Int?, [String]) = try journal.read { db in
            (try db.value("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'runs_parent'"),
             try db.values("SELECT identifier FROM grdb_migrations ORDER BY identifier"))
        }
        #expect(index == 1)
        #expect(Set(applied) == Set(JournalSchema.identifiers) && applied.contains("runs_parent_index"))
        let plan: [String] = try journal.read { db in
            try db.rows("EXPLAIN QUERY PLAN SELECT id FROM runs WHERE parent_id = ?", ["a"]).map { $0[3] ?? "" }
        }
        #expect(plan.contains { $0.contains("USING INDEX runs_parent") }, "\(plan)")
    }

    /// The index migration does not depend on its place among the others: a journal that
    /// has the index already (made by a flow whose list has it elsewhere) is marked migrated
    /// without an error, and a new journal is made with it.
    @Test func theParentIndexMigrationMayMeetTheIndexAlready() throws {
        let dir = try JournalStorageTests.oldJournal(upTo: "v5", JournalSchema.runsParentIndex)
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        let applied: [String] = try journal.read { db in try db.values("SELECT identifier FROM grdb_migrations") }
        #expect(applied.contains("runs_parent_index"))
        let fresh = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(fresh) }
        let made = try Journal.open(stateDir: fresh, create: true)
        let index: Int? = try made.read { db in try db.value("SELECT 1 FROM sqlite_master WHERE name = 'runs_parent'") }
        #expect(index == 1)
    }

    /// `laterRuns(of:)` is what `runs(limit: nil)` filtered by parent gave: the resumes and
    /// undos of that run alone, newest first, with their states and counts.
    @Test func laterRunsAreTheRunsWhoseParentIsTheRun() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try Self.insertRun(db, id: "a", started: 1, state: "failed")
            try Self.insertRun(db, id: "other", started: 2, state: "failed")
            try Self.insertRun(db, id: "a-resume", kind: "resume", parent: "a", started: 3)
            try Self.insertRun(db, id: "other-undo", kind: "undo", parent: "other", started: 4)
            try Self.insertRun(db, id: "a-undo", kind: "undo", parent: "a", started: 5)
            try Self.insertRun(db, id: "a-dead", kind: "resume", parent: "a", started: 6, state: "running")
        }
        let later = try journal.laterRuns(of: "a")
        let expected = try journal.runs(limit: nil).filter { $0.parentID == "a" }
        #expect(later.map(\.id) == ["a-dead", "a-undo", "a-resume"])
        #expect(later.map(\.id) == expected.map(\.id))
        #expect(later.map(\.state) == ["interrupted", "succeeded", "succeeded"], "a dead run's lock is free")
        #expect(later.map(\.counts) == expected.map(\.counts))
        #expect(try journal.laterRuns(of: "a-undo").isEmpty)
    }

    /// `--prune` keeps a live run (recorded `running`, its lock held) and deletes one whose
    /// process died (`running`, its lock free), as when it read every run as `flow runs` does.
    @Test func pruneKeepsALiveRunAndDeletesADeadOne() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try Self.insertRun(db, id: "old", started: 1)
            try Self.insertRun(db, id: "live", started: 2, state: "running")
            try Self.insertRun(db, id: "dead", started: 3, state: "running")
            try Self.insertRun(db, id: "new", started: 4)
        }
        let lock = try #require(RunLock(stateDir: dir, runID: "live"))
        defer { lock.release(stateDir: dir, runID: "live") }
        // Keep 1: `new`; `live` is kept although it is past the newest one.
        #expect(try journal.prune(keep: 1, before: nil) == 2)
        #expect(try journal.runs(limit: nil).map(\.id) == ["new", "live"])
        // By age: the live one stays whatever its age.
        #expect(try journal.prune(keep: nil, before: 10) == 1)
        #expect(try journal.runs(limit: nil).map(\.id) == ["live"])
    }

    /// A run a kept resume carries on is kept, and so is the one that run resumed: the
    /// steps a resume did not get to are read from them (a resume of it left without them
    /// ran those steps again). An undo keeps nothing; a resume that goes frees its chain.
    @Test func pruneKeepsTheRunsAKeptResumeCarriesOn() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try Self.insertRun(db, id: "first", started: 1, state: "failed")
            try Self.insertRun(db, id: "second", kind: "resume", parent: "first", started: 2, state: "failed")
            try Self.insertRun(db, id: "other", started: 3, state: "failed")
            try Self.insertRun(db, id: "other-undo", kind: "undo", parent: "other", started: 4)
            try Self.insertRun(db, id: "third", kind: "resume", parent: "second", started: 5, state: "failed")
            try Self.insertRun(db, id: "new", started: 6)
        }
        var spared: [Int] = []
        #expect(try journal.prune(keep: 2, before: nil, spared: { spared.append($0) }) == 2)
        #expect(try journal.runs(limit: nil).map(\.id) == ["new", "third", "second", "first"])
        #expect(spared == [2])
        // By age too; and once the resume itself goes, its chain goes with it.
        #expect(try journal.prune(keep: nil, before: 4.5, spared: { spared.append($0) }) == 0)
        #expect(try journal.prune(keep: 1, before: nil) == 3)
        #expect(try journal.runs(limit: nil).map(\.id) == ["new"])
        #expect(spared == [2, 2])
    }

    /// A run is named by its whole id or a unique prefix, in either case (flow's ids are
    /// lower-case hex); `%` and `_` are not wildcards; an ambiguous prefix lists the runs.
    @Test func aRunIsResolvedByAPrefixOfItsID() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try Self.insertRun(db, id: "6a3f0c2e-9b1d40c7", started: 1)
            try Self.insertRun(db, id: "6a3f0c2e-9b1d", started: 2)
            try Self.insertRun(db, id: "6b00aaaa-00000001", started: 3)
            try Self.insertRun(db, id: "6b00aaaa-0000", started: 4)
        }
        #expect(try journal.resolve("6a3f0c2e-9b1d40c7") == "6a3f0c2e-9b1d40c7")
        #expect(try journal.resolve("6a3f0c2e-9b1d4") == "6a3f0c2e-9b1d40c7")
        #expect(try journal.resolve("6A3F0C2E-9B1D4") == "6a3f0c2e-9b1d40c7")
        // A whole id that is also a prefix of another names itself.
        #expect(try journal.resolve("6a3f0c2e-9b1d") == "6a3f0c2e-9b1d")
        #expect(try journal.resolve("last") == "6b00aaaa-0000")
        #expect(throws: JournalError.self) { try journal.resolve("6%") }
        #expect(throws: JournalError.self) { try journal.resolve("6a3f0c2_") }
        #expect(throws: JournalError.self) { try journal.resolve("7") }
        do {
            _ = try journal.resolve("6A")
            Issue.record("`6A` matches two runs")
        } catch {
            #expect(error.description.contains("matches 2 runs (6a3f0c2e-9b1d, 6a3f0c2e-9b1d40c7)"), "\(error)")
        }
    }

    /// A prune that leaves at least half of the database's pages free gives them back to
    /// the file system; one that frees less leaves the file as it is, its pages for later
    /// runs. The runs kept read as before.
    @Test func aPruneOfMostOfTheJournalCompactsIt() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            for i in 0..<200 {
                try Self.insertRun(db, id: String(format: "run-%03d", i), started: Double(i))
                try db.execute("INSERT INTO outputs (run_id, path, key, value) VALUES (?, '1', 'k', ?)",
                               [String(format: "run-%03d", i), String(repeating: "x", count: 4000)])
            }
        }
        func pages() throws -> (all: Int, free: Int) {
            try journal.read { db in ((try db.value("PRAGMA page_count")) ?? 0, (try db.value("PRAGMA freelist_count")) ?? 0) }
        }
        #expect(try journal.prune(keep: 150, before: nil) == 50)
        let quarter = try pages()
        #expect(try !journal.compactIfMostlyFree(), "a quarter freed: \(quarter)")
        let before = try pages()
        #expect(before.free > 0)
        #expect(try journal.prune(keep: 10, before: nil) == 140)
        #expect(try journal.compactIfMostlyFree())
        let after = try pages()
        #expect(after.free == 0 && after.all * 4 < before.all, "\(before) → \(after)")
        var size = stat()
        #expect(stat(dir + "/journal.sqlite", &size) == 0 && Int(size.st_size) <= after.all * 4096)
        let runs = try journal.runs(limit: nil)
        #expect(runs.map(\.id) == (190..<200).reversed().map { String(format: "run-%03d", $0) })
        #expect(runs.allSatisfy { $0.counts == ["succeeded": 1] })
    }
}
