import GRDB
import GRDBSQLite

/// The statements a run's recorder runs for every transition, prepared once on its
/// connection and stepped through SQLite's C API.
///
/// Why not GRDB's `Statement` here: each transition costs a handful of these, thousands of
/// times a run, and GRDB's per-call work (looking the SQL up in its cache, boxing
/// arguments, its statement bookkeeping) cost more than SQLite's own. GRDB still owns the
/// connection, opens it, migrates it and serialises access to it: these handles are only
/// used inside its `writeWithoutTransaction` closures.
final class JournalStatements {
    /// A value bound to a parameter.
    enum Value {
        case text(String)
        case int(Int64)
        case double(Double)
        case blob([UInt8])
        case null
    }

    private let connection: OpaquePointer
    private let prepared: [OpaquePointer]

    let begin: OpaquePointer
    let commit: OpaquePointer
    let insertTransition: OpaquePointer
    let insertStep: OpaquePointer
    let updateStep: OpaquePointer
    let insertAttempt: OpaquePointer
    let insertOutput: OpaquePointer
    let insertLines: OpaquePointer

    init(_ db: Database) throws {
        let connection = db.sqliteConnection!
        self.connection = connection
        var prepared: [OpaquePointer] = []
        var complete = false
        defer { if !complete { for statement in prepared { sqlite3_finalize(statement) } } }
        func prepare(_ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
            guard code == SQLITE_OK, let statement else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
            }
            prepared.append(statement)
            return statement
        }
        begin = try prepare("BEGIN IMMEDIATE")
        commit = try prepare("COMMIT")
        insertTransition = try prepare("""
            INSERT INTO transitions (run_id, seq, path, from_state, to_state, attempt, time, reason, exit_code, signal)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insertStep = try prepare("""
            INSERT INTO steps (run_id, path, position, depth, name, kind, label, state) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending')
            """)
        updateStep = try prepare("""
            UPDATE steps SET state = ?, attempts = ?, exit_code = ?, started_at = ?, ended_at = ?, completed_seq = ?
            WHERE run_id = ? AND path = ?
            """)
        insertAttempt = try prepare("""
            INSERT OR REPLACE INTO attempts (run_id, path, number, started_at, ended_at, state, exit_code, signal)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insertOutput = try prepare("INSERT OR REPLACE INTO outputs (run_id, path, key, value) VALUES (?, ?, ?, ?)")
        insertLines = try prepare("""
            INSERT INTO output_lines (run_id, path, stream, time, line, file_offset, file_length) VALUES (?, ?, ?, ?, x'', ?, ?)
            """)
        self.prepared = prepared
        complete = true
    }

    deinit {
        for statement in prepared { sqlite3_finalize(statement) }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction (the write lock taken at once, so a
    /// busy database is waited for here, not failed at the first write).
    func transaction(_ body: () throws -> Void) throws {
        try run(begin)
        do {
            try body()
            try run(commit)
        } catch {
            sqlite3_exec(connection, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// Inserts one transition's row and, for a step that succeeded, its outputs (inside the
    /// caller's transaction).
    func insert(_ r: TransitionRecord, runID: String) throws {
        func optional(_ value: Int?) -> Value { value.map { .int(Int64($0)) } ?? .null }
        try run(insertTransition, .text(runID), .int(Int64(r.seq)), .text(r.path), .text(r.from), .text(r.to),
                .int(Int64(r.attempt)), .double(r.time), r.reason.map { .text($0) } ?? .null, optional(r.exitCode),
                optional(r.signal))
        for output in r.outputs {
            try run(insertOutput, .text(runID), .text(r.path), .text(output.key), .text(output.value))
        }
    }

    /// Binds `values` to `statement` and runs it to completion.
    func run(_ statement: OpaquePointer, _ values: Value...) throws {
        let code = bindThenStep(statement, values, from: 0)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)))
        }
    }

    /// Binds `values[index...]`, then steps the statement. Text and blobs are bound in
    /// place (SQLITE_STATIC), each inside the scope that keeps its bytes alive, with the
    /// step innermost: copying them (SQLITE_TRANSIENT) cost a malloc, a copy and a free per
    /// value, most of the binding's cost on runs of thousands of steps.
    private func bindThenStep(_ statement: OpaquePointer, _ values: [Value], from index: Int) -> Int32 {
        guard index < values.count else { return sqlite3_step(statement) }
        let position = Int32(index + 1)
        switch values[index] {
        case .text(var text):
            return text.withUTF8 { utf8 in
                if let base = utf8.baseAddress {
                    sqlite3_bind_text(statement, position, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                      Int32(utf8.count), nil)
                } else {
                    sqlite3_bind_text(statement, position, "", 0, Self.transient)  // empty, not NULL
                }
                return bindThenStep(statement, values, from: index + 1)
            }
        case .int(let number):
            sqlite3_bind_int64(statement, position, number)
        case .double(let number):
            sqlite3_bind_double(statement, position, number)
        case .blob(let bytes):
            return bytes.withUnsafeBytes { raw in
                if let base = raw.baseAddress, raw.count > 0 {
                    _ = sqlite3_bind_blob64(statement, position, base, sqlite3_uint64(raw.count), nil)
                } else {
                    _ = sqlite3_bind_zeroblob(statement, position, 0)  // empty, not NULL
                }
                return bindThenStep(statement, values, from: index + 1)
            }
        case .null:
            sqlite3_bind_null(statement, position)
        }
        return bindThenStep(statement, values, from: index + 1)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
