import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import FlowJournal
import FlowKit

/// The journal's tables through its own API: migrations, runs that never finished, pruning.
@Suite struct JournalStorageTests {
    /// A fresh state dir under the temporary directory; the test removes it with
    /// `removeStateDir` (a `defer` right after), or every run of the suite leaves its
    /// journals in /tmp.
    static func stateDir() -> String {
        var template = Array("/tmp/flow-journal-test-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    /// Removes a directory `stateDir` made, with whatever the test left in it.
    static func removeStateDir(_ dir: String) {
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// A run of three shell steps as a v2 recorder leaves it mid-run: static `steps` rows,
    /// `state = running`, and its transitions so far.
    static func insertUnfinishedRun(_ db: SQLiteConnection, id: String, transitions: [(String, String, String, Int, Int?)]) throws {
        try db.execute("""
            INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, state, pid, host)
            VALUES (?, 'run', 'w.yml', 'w', 'h', x'', '{}', '/', 1, 'running', 1, 'host')
            """, [id])
        for (position, path) in ["1", "2", "3"].enumerated() {
            try db.execute("""
                INSERT INTO steps (run_id, path, position, depth, kind, label, state) VALUES (?, ?, ?, 0, 'shell', 'shell', 'pending')
                """, [id, path, position])
        }
        for (seq, t) in transitions.enumerated() {
            try db.execute("""
                INSERT INTO transitions (run_id, seq, path, from_state, to_state, attempt, time, exit_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [id, seq + 1, t.0, t.1, t.2, t.3, Double(seq + 1), t.4])
        }
    }

    @Test func aRunThatNeverFinishedIsReadFromItsTransitions() throws {
        let dir = Self.stateDir()
        defer { Self.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try Self.insertUnfinishedRun(db, id: "r1", transitions: [
                ("1", "pending", "running", 1, nil), ("1", "running", "succeeded", 1, 0), ("2", "pending", "running", 1, nil),
            ])
        }
        let steps = try journal.steps("r1")
        #expect(steps.map(\.state) == ["succeeded", "running", "pending"])
        #expect(steps[0].exitCode == 0 && steps[0].completedSeq == 1 && steps[0].startedAt == 1 && steps[0].endedAt == 2)
        #expect(steps[1].attempts == 1 && steps[1].startedAt == 3)
        let run = try #require(try journal.runs(limit: nil).first)
        #expect(run.state == "interrupted", "no process holds its lock")
        // The recorded `running` is what resume goes by; the history counts it `interrupted`.
        #expect(run.counts == ["succeeded": 1, "interrupted": 1, "pending": 1])
    }

    /// `runs --limit N` with a page of thousands of runs: their ids were bound one by one to
    /// count their steps alone, each binding a scope inside the one before, and the stack
    /// overflowed (a crash, from some 6,000 runs in a debug build). Every run keeps its counts.
    @Test func aPageOfThousandsOfRunsIsCounted() throws {
        let dir = Self.stateDir()
        defer { Self.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        let count = 40_000
        try journal.write { db in
            try db.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
                INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at,
                                  ended_at, state, exit_status, pid, host)
                SELECT printf('run-%05d', i), 'run', 'w.yml', 'w', 'h', x'', '{}', '/', i, i + 1, 'succeeded', 0, 1, 'host' FROM n
                """)
            try db.execute("""
                INSERT INTO steps (run_id, path, position, depth, kind, label, state)
                SELECT id, '1', 0, 0, 'shell', 'shell', 'succeeded' FROM runs
                """)
        }
        let runs = try journal.runs(limit: count)
        #expect(runs.count == count)
        #expect(runs.allSatisfy { $0.counts == ["succeeded": 1] })
        #expect(try journal.runs(limit: 2).map(\.counts) == [["succeeded": 1], ["succeeded": 1]])
    }

    /// The recorder's statements bind text and blobs in place: empty values stay empty (not
    /// NULL), and non-ASCII text arrives byte for byte.
    @Test func boundValuesArriveIntact() throws {
        let dir = Self.stateDir()
        defer { Self.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        let texts = ["", "✓ é ünïcödé", String(repeating: "long ", count: 200), "tab\tnew\nline"]
        try journal.access { db in
            let statements = try JournalStatements(db)
            for (index, text) in texts.enumerated() {
                try statements.run(statements.insertOutput, .text("r"), .text("\(index)"), .int(1), .text(text), .text(text))
            }
        }
        let stored = try journal.read { db in
            try db.rows("SELECT key, value, typeof(value) FROM outputs WHERE run_id = 'r' ORDER BY CAST(path AS INTEGER)")
        }
        #expect(stored.map { $0[0] as String? } == texts)
        #expect(stored.map { $0[1] as String? } == texts)
        #expect(stored.allSatisfy { $0[2] as String? == "text" })
    }

    @Test func pruneDeletesEveryRowOfTheRunsItDrops() throws {
        let dir = Self.stateDir()
        defer { Self.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            for id in ["old", "new"] {
                try Self.insertUnfinishedRun(db, id: id, transitions: [("1", "pending", "running", 1, nil), ("1", "running", "succeeded", 1, 0)])
                try db.execute("UPDATE runs SET state = 'succeeded', started_at = ? WHERE id = ?", [id == "old" ? 1 : 2, id])
                try db.execute("INSERT INTO outputs (run_id, path, key, value) VALUES (?, '1', 'k', 'v')", [id])
                try db.execute("INSERT INTO output_lines (run_id, path, stream, time, line) VALUES (?, '1', 'stdout', 1, x'41')",
                               [id])
                try db.execute("""
                    INSERT INTO attempts (run_id, path, number, started_at, ended_at, state) VALUES (?, '1', 1, 1, 2, 'succeeded')
                    """, [id])
            }
        }
        #expect(try journal.prune(keep: 1, before: nil) == 1)
        for table in ["runs", "steps", "attempts", "transitions", "outputs", "output_lines"] {
            let column = table == "runs" ? "id" : "run_id"
            let (old, new): (Int?, Int?) = try journal.read { db in
                (try db.value("SELECT COUNT(*) FROM \(table) WHERE \(column) = 'old'"),
                 try db.value("SELECT COUNT(*) FROM \(table) WHERE \(column) = 'new'"))
            }
            #expect(old == 0, "\(table)")
            #expect(new ?? 0 > 0, "\(table)")
        }
    }

    /// A state dir whose journal is as migration `last` left it, with the rows `sql` inserts;
    /// the test removes it with `removeStateDir`.
    static func oldJournal(upTo last: String, _ sql: String) throws -> String {
        let dir = stateDir()
        do {
            mkdir(dir + "/locks", 0o755)
            let db = try SQLiteConnection(path: dir + "/journal.sqlite")
            try JournalSchema.migrate(db, upTo: last)
            try db.transaction { try db.execute(sql) }
        } catch {
            removeStateDir(dir)
            throw error
        }
        return dir
    }

    @Test func aVersionOneJournalIsMigratedWithItsHistory() throws {
        // A journal as v1 left it: AUTOINCREMENT ids, transitions without exit codes.
        let dir = try Self.oldJournal(upTo: "v1", """
            INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, state, pid, host)
            VALUES ('v1run', 'run', 'w.yml', 'w', 'h', x'', '{}', '/', 1, 'succeeded', 1, 'host');
            INSERT INTO steps (run_id, path, position, depth, kind, label, state, exit_code) VALUES ('v1run', '1', 0, 0, 'shell', 's', 'succeeded', 0);
            INSERT INTO transitions (run_id, path, from_state, to_state, attempt, time) VALUES ('v1run', '1', 'pending', 'running', 1, 1);
            INSERT INTO transitions (run_id, path, from_state, to_state, attempt, time) VALUES ('v1run', '1', 'running', 'succeeded', 1, 2);
            INSERT INTO output_lines (run_id, path, stream, time, line) VALUES ('v1run', '1', 'stdout', 1, x'6869');
            """)
        defer { Self.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        #expect(try journal.steps("v1run").map(\.state) == ["succeeded"])
        var lines: [String] = []
        try journal.forEachLines("v1run", path: nil) { lines.append(String(decoding: $0.bytes, as: UTF8.self)) }
        #expect(lines == ["hi"])
        let (states, autoincrement): ([String], Bool?) = try journal.read { db in
            (try db.values("SELECT to_state FROM transitions WHERE run_id = 'v1run' ORDER BY seq"),
             try db.value("SELECT COUNT(*) > 0 FROM sqlite_master WHERE sql LIKE '%AUTOINCREMENT%'"))
        }
        #expect(states == ["running", "succeeded"])
        #expect(autoincrement == false)
    }

    /// A run recorded before the journal kept name bytes (v3) reads back with none: its
    /// names are their own bytes, as they were then; one recorded since keeps its bytes.
    @Test func runsFromBeforeNameBytesStillOpenTheirFile() throws {
        let dir = try Self.oldJournal(upTo: "v3", """
            INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, state, pid, host)
            VALUES ('v3run', 'run', 'w.yml', 'w', 'h', x'', '{}', '/tmp/a', 1, 'failed', 1, 'host');
            """)
        defer { Self.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        let old = try journal.run("v3run")
        #expect(old.workflowPathBytes == nil && old.cwdBytes == nil)
        #expect(old.workflowPathName == Array("w.yml".utf8) && old.cwdName == Array("/tmp/a".utf8))
        try journal.write { db in
            try db.execute("""
                INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, state, pid,
                                  host, workflow_path_bytes, cwd_bytes)
                VALUES ('v4run', 'run', 'w\\xFF.yml', 'w', 'h', x'', '{}', '/tmp/\\xFF', 2, 'failed', 1, 'host', x'77ff2e796d6c', x'2f746d702fff');
                """)
        }
        let new = try journal.run("v4run")
        #expect(new.workflowPath == "w\\xFF.yml")
        #expect(new.workflowPathName == [0x77, 0xFF] + Array(".yml".utf8))
        #expect(new.cwdName == Array("/tmp/".utf8) + [0xFF])
    }

    /// A v5 journal gets v6's outputs per instance: its runs read as they were (a step's
    /// outputs, one result per step for `flow undo`); a run recorded since keeps each
    /// instance's outputs, which `show` gives only of the latest, and says which instance a
    /// rollback's `undoing` and `undone` were of (the latest one still `succeeded`).
    @Test func aVersionFiveJournalGetsOutputsPerInstance() throws {
        let dir = try Self.oldJournal(upTo: "v5", """
            INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, state, pid, host)
            VALUES ('old', 'run', 'w.yml', 'w', 'h', x'', '{}', '/', 1, 'failed', 1, 'host');
            INSERT INTO steps (run_id, path, position, depth, kind, label, state, exit_code, completed_seq)
                VALUES ('old', '1', 0, 0, 'shell', 's', 'succeeded', 0, 2);
            INSERT INTO transitions (run_id, seq, path, from_state, to_state, attempt, time) VALUES
                ('old', 1, '1', 'pending', 'running', 1, 1), ('old', 2, '1', 'running', 'succeeded', 1, 2),
                ('old', 3, '1', 'pending', 'running', 1, 3), ('old', 4, '1', 'running', 'succeeded', 1, 4);
            INSERT INTO outputs (run_id, path, key, value) VALUES ('old', '1', 'id', 'r2');
            """)
        defer { Self.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        #expect(journal.hasInstanceOutputs)
        #expect(try journal.read { try JournalSchema.appliedMigrations($0) }.contains("v6"))
        let old = try journal.run("old")
        #expect(!old.instanceOutputs)
        #expect(try journal.steps("old").map(\.outputs) == [["id": "r2"]])
        #expect(try journal.undoableSteps(old).map(\.outputs) == [["id": "r2"]])

        try journal.write { db in
            try Self.insertUnfinishedRun(db, id: "new", transitions: [])
            try db.execute("UPDATE runs SET instance_outputs = 1 WHERE id = 'new'")
            let s = try JournalStatements(db)
            let moves: [(String, String, [(key: String, value: String)])] = [
                ("pending", "running", []), ("running", "succeeded", [("id", "r1"), ("old", "yes")]),
                ("pending", "running", []), ("running", "succeeded", [("id", "r2")]),
                ("succeeded", "undoing", []), ("undoing", "undone", []), ("succeeded", "undoing", []), ("undoing", "undo_failed", []),
            ]
            for (seq, move) in moves.enumerated() {
                try s.insert(TransitionRecord(seq: seq + 1, path: "1", from: move.0, to: move.1, attempt: 1, time: Double(seq + 1),
                                              outputs: move.2), runID: "new")
            }
        }
        // `show` of the run (read from its transitions: it never finished) has the latest outputs.
        #expect(try journal.steps("new").first?.outputs == ["id": "r2"])
        let successes = try journal.successes("new", withOutputs: true)["1"] ?? []
        #expect(successes.map(\.outputs) == [["id": "r1", "old": "yes"], ["id": "r2"]])
        #expect(successes.map(\.state) == ["undo_failed", "undone"])
        #expect(successes.map(\.completed) == [1, 2])
        var new = try journal.run("new")
        new.state = "failed"
        #expect(new.instanceOutputs)
        let undoable = try journal.undoableSteps(new)
        #expect(undoable.map(\.success) == [1, 2, 1, 1] && undoable.map(\.successes) == [2, 2, 1, 1])
        #expect(undoable.map(\.state) == ["undo_failed", "undone", "pending", "pending"])
        #expect(undoable.map(\.path) == ["1", "1", "2", "3"])
        // Which success an undo run's recorded success was of.
        #expect(StepTransition.reversedSuccess(in: StepTransition.reversedReason(from: "a-b", success: 2, of: 3)) == 2)
        #expect(StepTransition.reversedReason(from: "a-b", success: 1, of: 1) == "succeeded in run a-b")
        #expect(StepTransition.reversedSuccess(in: "succeeded in run a-b") == nil)
    }

    /// A v4 journal gets v5's `allowed_failure` on `steps` and `transitions`; its runs read
    /// as they were (no failure allowed: the journal did not know), finished or not, and the
    /// runs recorded since say which failures were allowed. Read as it is (a journal this
    /// user cannot migrate), the same runs read alike, without the columns.
    @Test func aVersionFourJournalGetsAllowedFailuresAndItsRunsReadAsBefore() throws {
        let dir = try Self.oldJournal(upTo: "v4", """
            INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, state, pid, host)
            VALUES ('done', 'run', 'w.yml', 'w', 'h', x'', '{}', '/', 1, 'succeeded', 1, 'host');
            INSERT INTO steps (run_id, path, position, depth, kind, label, state, exit_code) VALUES ('done', '1', 0, 0, 'shell', 's', 'failed', 3);
            INSERT INTO steps (run_id, path, position, depth, kind, label, state, exit_code) VALUES ('done', '2', 1, 0, 'shell', 't', 'succeeded', 0);
            """)
        defer { Self.removeStateDir(dir) }
        do {
            let old = try SQLiteConnection(path: dir + "/journal.sqlite")
            try old.transaction {
                try Self.insertUnfinishedRun(old, id: "live", transitions: [("1", "pending", "running", 1, nil), ("1", "running", "failed", 1, 3)])
            }
            let asItIs = Journal(stateDir: dir, path: dir + "/journal.sqlite", connection: old,
                                 columns: .init(allowedFailures: false, instanceOutputs: false, runCounts: false))
            let runs = try asItIs.runs(limit: nil)
            #expect(runs.map(\.countsSummary) == ["1 failed, 2 pending", "1 succeeded, 1 failed"])
            #expect(try asItIs.steps("live").map(\.allowedFailure) == [false, false, false])
        }
        let journal = try Journal.open(stateDir: dir, create: true)
        #expect(journal.hasAllowedFailures)
        #expect(try journal.read { try JournalSchema.appliedMigrations($0) }.contains("v5"))
        #expect(try journal.runs(limit: nil).map(\.countsSummary) == ["1 failed, 2 pending", "1 succeeded, 1 failed"])
        #expect(try journal.runs(limit: nil).allSatisfy(\.allowedFailures.isEmpty))
        #expect(try journal.steps("done").map(\.allowedFailure) == [false, false])
        // A run recorded since: its allowed failure is on the transition and on the step.
        try journal.write { db in
            try Self.insertUnfinishedRun(db, id: "new", transitions: [])
            let s = try JournalStatements(db)
            try s.insert(TransitionRecord(seq: 1, path: "1", from: "running", to: "failed", attempt: 1, time: 5, exitCode: 3,
                                          allowedFailure: true), runID: "new")
            try s.insert(TransitionRecord(seq: 2, path: "2", from: "running", to: "failed", attempt: 1, time: 6, exitCode: 1), runID: "new")
        }
        let new = try journal.steps("new")
        #expect(new.map(\.allowedFailure) == [true, false, false])
        #expect(try journal.run("new").countsSummary == "2 failed (1 allowed), 1 pending")
    }

    /// Every table's columns, primary key and rowid-ness, and every index, by name.
    static func shape(_ db: SQLiteConnection) throws -> [String] {
        var shape: [String] = []
        let tables: [String] = try db.values("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        for table in tables {
            for row in try db.rows("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", [table]) {
                shape.append("\(table).\(row[0] ?? "") \(row[1] ?? "") \(row[2] ?? -1) \(row[3] ?? -1)")
            }
            let sql: String = try db.value("SELECT sql FROM sqlite_master WHERE name = ?", [table]) ?? ""
            shape.append("\(table) without rowid: \(sql.contains("WITHOUT ROWID"))")
        }
        shape += try db.values("SELECT name || ' on ' || tbl_name FROM sqlite_master WHERE type = 'index' ORDER BY name") as [String]
        return shape
    }

    @Test func aNewJournalHasTheSchemaTheMigrationsBuild() throws {
        let (freshDir, migratedDir) = (Self.stateDir(), Self.stateDir())
        defer { Self.removeStateDir(freshDir); Self.removeStateDir(migratedDir) }
        let fresh = try Journal.open(stateDir: freshDir, create: true)
        let migrated = try SQLiteConnection(path: migratedDir + "/journal.sqlite")
        try JournalSchema.migrate(migrated)
        let (new, old) = (try fresh.read { try Self.shape($0) }, try Self.shape(migrated))
        #expect(new == old, "only new: \(Set(new).subtracting(old).sorted()); only migrated: \(Set(old).subtracting(new).sorted())")
        #expect(try fresh.read { try JournalSchema.appliedMigrations($0) } == Set(JournalSchema.identifiers))
        #expect(try JournalSchema.appliedMigrations(migrated) == Set(JournalSchema.identifiers))
    }
}
