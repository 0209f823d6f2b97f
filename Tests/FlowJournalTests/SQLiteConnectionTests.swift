#if canImport(Glibc)
import Glibc
#endif
import CFlowSQLite
import FlowKit
import Testing
@testable import FlowJournal

/// The journal's SQLite layer and the JSON it stores.
@Suite struct SQLiteConnectionTests {
    static func database(in dir: String) throws -> SQLiteConnection {
        try SQLiteConnection(path: dir + "/test.sqlite")
    }

    /// Parameters stay bound while a query steps through many rows: its `WHERE` reads them
    /// again for each row.
    @Test func boundTextLastsForEveryRow() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let db = try Self.database(in: dir)
        try db.execute("CREATE TABLE t (k TEXT, n INTEGER)")
        try db.transaction {
            for n in 0..<2_000 { try db.execute("INSERT INTO t VALUES (?, ?)", [n % 2 == 0 ? "even-key" : "odd", n]) }
        }
        let key = String(repeating: "even-key", count: 1).uppercased().lowercased()  // not a literal's storage
        let rows = try db.rows("SELECT n FROM t WHERE k = ? ORDER BY n", [key])
        #expect(rows.count == 1_000)
        #expect(rows.compactMap { $0["n"] as Int? } == Array(stride(from: 0, to: 2_000, by: 2)))
    }

    @Test func valuesRoundTripByKind() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let db = try Self.database(in: dir)
        try db.execute("CREATE TABLE t (a, b, c, d, e)")
        let text: String? = nil
        try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", ["✓ text", Int64.max, 2.5, [UInt8]([0, 1, 255]), text])
        let row = try #require(try db.rows("SELECT a, b, c, d, e FROM t").first)
        #expect(row["a"] == "✓ text")
        #expect(row["b"] == Int64.max)
        #expect(row["c"] == 2.5)
        #expect(row["d"] == [UInt8]([0, 1, 255]))
        #expect((row["e"] as String?) == nil)
        #expect((row["missing"] as Int?) == nil)
    }

    @Test func aFailedTransactionLeavesNothing() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let db = try Self.database(in: dir)
        try db.execute("CREATE TABLE t (n INTEGER PRIMARY KEY)")
        #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1)", [])
                try db.execute("INSERT INTO t VALUES (1)", [])  // a duplicate key
            }
        }
        #expect(try db.value("SELECT COUNT(*) FROM t") == 0)
    }

    @Test func aFileThatIsNotADatabaseFailsAtOpenAsDamaged() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let path = dir + "/journal.sqlite"
        let fd = open(path, O_WRONLY | O_CREAT, 0o644)
        _ = "this is not a database, just some bytes that go on for a while\n".utf8CString.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        do {
            _ = try SQLiteConnection(path: path)
            Issue.record("opened a file that is not a database")
        } catch {
            #expect(error.primaryCode == SQLITE_NOTADB)
            #expect(Journal.describe(error, path: path).contains("is damaged"))
        }
    }

    /// A journal another process keeps locked past the busy timeout is reported as that,
    /// not as a bare "database is locked".
    @Test func aJournalLockedTooLongSaysSo() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let path = dir + "/journal.sqlite"
        let holder = try SQLiteConnection(path: path)
        try holder.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
        let waiter = try SQLiteConnection(path: path, busyTimeout: 20)
        do {
            try waiter.execute("INSERT INTO t VALUES (2)")
            Issue.record("wrote past another connection's write lock")
        } catch {
            #expect(error.primaryCode == SQLITE_BUSY)
            #expect(Journal.describe(error, path: path).contains("stayed locked by another process"))
        }
        try holder.execute("COMMIT")
    }

    @Test func runArgumentsRoundTripThroughJSON() throws {
        var options = PlanOptions()
        options.action = "deploy \"prod\""
        options.vars = [("a", "1"), ("quote", "x\"y\\z\n✓")]
        options.with = [("target", "eu")]
        options.tags = ["fast", "é"]
        options.skipTags = ["slow"]
        options.only = "build.*"
        let arguments = RunArguments(options)
        #expect(RunArguments.decode(arguments.json) == arguments)
        #expect(RunArguments.decode(RunArguments(PlanOptions()).json) == RunArguments(PlanOptions()))
        // As Foundation's JSONEncoder wrote them before flow had its own writer.
        let old = #"{"action":"a","only":"x\/y","skip_tags":[],"tags":["t"],"vars":[["k","v"]],"with":[]}"#
        let decoded = try #require(RunArguments.decode(old))
        #expect(decoded.action == "a" && decoded.only == "x/y" && decoded.tags == ["t"] && decoded.vars == [["k", "v"]])
        #expect(RunArguments.decode("[]") == nil)
        #expect(RunArguments.decode(#"{"tags": [1]}"#) == nil)
    }
}
