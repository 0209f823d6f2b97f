import CFlowSQLite

/// The statements a run's recorder runs for every transition, prepared once on its
/// connection (`SQLITE_PREPARE_PERSISTENT`) and stepped again and again: each transition
/// costs a handful of these, thousands of times a run. The handles are only used while the
/// journal has handed its connection to the caller (`Journal.access`).
final class JournalStatements {
    typealias Value = SQLiteValue

    private let connection: OpaquePointer
    private let prepared: [OpaquePointer]
    /// Prepared on first use: most runs have no allowed failure, and preparing costs more
    /// than a transition.
    private var allowedTransition: OpaquePointer?
    private var allowedStep: OpaquePointer?
    private var allowedLatest: OpaquePointer?

    let begin: OpaquePointer
    let commit: OpaquePointer
    let insertTransition: OpaquePointer
    let insertStep: OpaquePointer
    let updateStep: OpaquePointer
    let insertAttempt: OpaquePointer
    let insertOutput: OpaquePointer
    let insertLines: OpaquePointer

    init(_ db: SQLiteConnection) throws(SQLiteError) {
        let connection = db.handle
        self.connection = connection
        var prepared: [OpaquePointer] = []
        var complete = false
        defer { if !complete { for statement in prepared { sqlite3_finalize(statement) } } }
        func prepare(_ sql: String) throws(SQLiteError) -> OpaquePointer {
            var statement: OpaquePointer?
            let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
            guard code == SQLITE_OK, let statement else { throw SQLiteError(code: code, connection: connection) }
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
        insertOutput = try prepare("INSERT OR REPLACE INTO outputs (run_id, path, seq, key, value) VALUES (?, ?, ?, ?, ?)")
        insertLines = try prepare("""
            INSERT INTO output_lines (run_id, path, stream, time, line, file_offset, file_length) VALUES (?, ?, ?, ?, x'', ?, ?)
            """)
        self.prepared = prepared
        complete = true
    }

    deinit {
        for statement in prepared { sqlite3_finalize(statement) }
        sqlite3_finalize(allowedTransition)
        sqlite3_finalize(allowedStep)
        sqlite3_finalize(allowedLatest)
    }

    /// `sql` prepared for repeated use.
    private func prepare(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw SQLiteError(code: code, connection: connection) }
        return statement
    }

    /// `updateStep` that also sets `allowed_failure` (its last value), for a step whose
    /// failure was allowed at some point of the run (`StepLedger.Entry.allowedFailure`).
    func updateAllowedStep() throws(SQLiteError) -> OpaquePointer {
        if let allowedStep { return allowedStep }
        let statement = try prepare("""
            UPDATE steps SET state = ?, attempts = ?, exit_code = ?, started_at = ?, ended_at = ?, completed_seq = ?,
                             allowed_failure = ?
            WHERE run_id = ? AND path = ?
            """)
        allowedStep = statement
        return statement
    }

    /// Marks the latest transition of `path` in run `runID` allowed when it is a failure: a
    /// retry called off made it the step's end (`StepLedger.allow`). A run not finished
    /// (live, or killed) is read back from its transitions, not its `steps` rows.
    func allowLatestFailure(runID: String, path: String) throws(SQLiteError) {
        if allowedLatest == nil {
            allowedLatest = try prepare("""
                UPDATE transitions SET allowed_failure = 1
                WHERE run_id = ?1 AND to_state IN ('failed', 'timed_out')
                  AND seq = (SELECT MAX(seq) FROM transitions WHERE run_id = ?1 AND path = ?2)
                """)
        }
        try run(allowedLatest!, .text(runID), .text(path))
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
    /// caller's transaction), keyed by the transition's `seq`: each instance of a retried
    /// group's step keeps its own (see `JournalSchema`'s v6).
    func insert(_ r: TransitionRecord, runID: String) throws(SQLiteError) {
        func optional(_ value: Int?) -> Value { value.map { .int(Int64($0)) } ?? .null }
        // Its own statement, the column set to 1: the common one binds nothing more.
        var statement = insertTransition
        if r.allowedFailure {
            if allowedTransition == nil {
                allowedTransition = try prepare("""
                    INSERT INTO transitions (run_id, seq, path, from_state, to_state, attempt, time, reason, exit_code, signal,
                                             allowed_failure)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
                    """)
            }
            statement = allowedTransition!
        }
        try run(statement, .text(runID), .int(Int64(r.seq)), .text(r.path), .text(r.from), .text(r.to),
                .int(Int64(r.attempt)), .double(r.time), r.reason.map { .text($0) } ?? .null, optional(r.exitCode),
                optional(r.signal))
        for output in r.outputs {
            try run(insertOutput, .text(runID), .text(r.path), .int(Int64(r.seq)), .text(output.key), .text(output.value))
        }
    }

    /// Binds `values` to `statement` and runs it to completion.
    func run(_ statement: OpaquePointer, _ values: Value...) throws(SQLiteError) {
        let code = SQLiteConnection.binding(statement, values) { sqlite3_step(statement) }
        sqlite3_reset(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw SQLiteError(code: code, connection: connection) }
    }
}
