import CFlowSQLite
#if canImport(Glibc)
import Glibc
#endif

/// One connection to a SQLite database, through SQLite's C API.
///
/// Not thread-safe by itself: `Journal` hands it to one thread at a time.
///
/// Why not GRDB (used until journal schema v3): GRDB imports Foundation, and on Linux
/// linking Foundation adds 2,500 protocol conformance records (scanned on every uncached
/// dynamic cast, which the argument parser makes dozens of) and CoreFoundation's
/// initialisers to every start of `flow`, whatever the command: measured 2.6 ms (+37%)
/// on a command-line program that only parses its arguments. The journal needs a handful
/// of statements, a transaction, and rows by column name — this file.
final class SQLiteConnection {
    let handle: OpaquePointer
    /// Milliseconds a statement waits for another connection's lock (0: it does not wait).
    private let busyTimeout: Int32

    /// Opens (creating if need be) the database at `path`; a busy database is waited for up
    /// to `busyTimeout` milliseconds before a statement fails with `SQLITE_BUSY`.
    convenience init(path: String, busyTimeout: Int32 = 10_000) throws(SQLiteError) {
        try self.init(filename: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      busyTimeout: busyTimeout)
    }

    /// Opens the existing database at `path` read-only (its `-wal` and `-shm` are used as
    /// by any reader); waits at most `busyTimeout` milliseconds for a lock.
    convenience init(readOnlyPath path: String, busyTimeout: Int32) throws(SQLiteError) {
        try self.init(filename: path, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, busyTimeout: busyTimeout)
    }

    /// Opens the database at `path` read-only and as immutable: SQLite takes no locks and
    /// reads no WAL, so nothing is created beside the file. Right only for a database whose
    /// WAL is absent or empty (see `Journal.openReadOnly`).
    convenience init(immutablePath path: String) throws(SQLiteError) {
        try self.init(filename: "file:" + SQLiteConnection.uriPath(path) + "?immutable=1",
                      flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, busyTimeout: 0)
    }

    private init(filename: String, flags: Int32, busyTimeout: Int32) throws(SQLiteError) {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(filename, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError(code: code, connection: handle)
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
        self.busyTimeout = busyTimeout
        sqlite3_extended_result_codes(handle, 1)
        if busyTimeout > 0 { sqlite3_busy_timeout(handle, busyTimeout) }
        // Reading the schema now makes a file that is not a database fail here, with
        // SQLITE_NOTADB, rather than at some later statement.
        try execute("SELECT 1 FROM sqlite_master LIMIT 1")
    }

    /// `path` for a `file:` URI: `%`, `?` and `#` (which would end the path) and bytes
    /// outside printable ASCII are percent-encoded, byte by byte.
    static func uriPath(_ path: String) -> String {
        let hex = Array("0123456789ABCDEF".unicodeScalars)
        var out = ""
        for byte in path.utf8 {
            if byte > 0x20 && byte < 0x7F && byte != 0x25 && byte != 0x3F && byte != 0x23 {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%"
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        return out
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs one or more `;`-separated statements without parameters (schema, pragmas).
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: handle) }
    }

    /// Runs `sql` as `execute` does, trying it again while it fails with `SQLITE_BUSY`, for up
    /// to the busy timeout in all: for statements that SQLite refuses at once instead of
    /// calling the busy handler. Switching a database that is not in WAL mode yet to WAL is
    /// one: it reads the file and then needs the write lock, and a connection that reads
    /// while another holds that lock is refused at once (waiting could deadlock). A journal
    /// being created is such a database until its creator's first write, and so is one left
    /// empty by a `flow` killed right after SQLite made the file: a `flow runs` opening it
    /// beside that first write, or the `flow run` beside such a reader, failed at once with
    /// "database is locked" (the run went unrecorded), found by the SIGKILL audit.
    func executeWaitingWhileBusy(_ sql: String) throws(SQLiteError) {
        // Wall time, not the pauses' sum: a statement that did call the busy handler and
        // failed after the whole timeout is not tried for another one.
        let deadline = Self.monotonicMilliseconds() + Int64(busyTimeout)
        var pause: Int32 = 1
        while true {
            do {
                try execute(sql)
                return
            } catch where error.primaryCode == SQLITE_BUSY && Self.monotonicMilliseconds() < deadline {
                // SQLite's own busy handler backs off likewise (1, 2, 5… up to 100 ms).
                sqlite3_sleep(pause)
                pause = min(pause * 2, 100)
            }
        }
    }

    private static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Runs one statement with `arguments` bound to its `?` parameters, in order.
    func execute(_ sql: String, _ arguments: [any SQLiteBindable]) throws(SQLiteError) {
        try query(sql, arguments) { _ in }
    }

    /// The rows of one statement.
    func rows(_ sql: String, _ arguments: [any SQLiteBindable] = []) throws(SQLiteError) -> [SQLiteRow] {
        var rows: [SQLiteRow] = []
        try query(sql, arguments) { rows.append($0) }
        return rows
    }

    /// The first column of the first row, if there is a row and it is a `T`.
    func value<T: SQLiteColumn>(_ sql: String, _ arguments: [any SQLiteBindable] = []) throws(SQLiteError) -> T? {
        var found: T?
        var first = true
        try query(sql, arguments) { row in
            if first { found = row[0] }
            first = false
        }
        return found
    }

    /// The first column of every row that is a `T`.
    func values<T: SQLiteColumn>(_ sql: String, _ arguments: [any SQLiteBindable] = []) throws(SQLiteError) -> [T] {
        var found: [T] = []
        try query(sql, arguments) { row in
            if let value: T = row[0] { found.append(value) }
        }
        return found
    }

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` (the write lock taken at once, so a
    /// busy database is waited for here rather than failing at the first write) or, for
    /// `write: false`, `BEGIN DEFERRED` (reads see one snapshot). Rolled back if `body` throws.
    func transaction<T>(write: Bool = true, _ body: () throws -> T) throws -> T {
        try execute(write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// Prepares `sql`, binds `arguments`, and calls `body` with each row.
    private func query(_ sql: String, _ arguments: [any SQLiteBindable], _ body: (SQLiteRow) -> Void) throws(SQLiteError) {
        var prepared: OpaquePointer?
        var code = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
        guard code == SQLITE_OK, let statement = prepared else { throw SQLiteError(code: code, connection: handle) }
        defer { sqlite3_finalize(statement) }
        let values = arguments.map(\.sqliteValue)
        let count = Int(sqlite3_column_count(statement))
        var columns: [String: Int] = [:]
        for position in 0..<count {
            if let name = sqlite3_column_name(statement, Int32(position)) { columns[String(cString: name)] = position }
        }
        code = Self.binding(statement, values) {
            var code = sqlite3_step(statement)
            while code == SQLITE_ROW {
                body(SQLiteRow(columns: columns, values: (0..<count).map { Self.column(statement, Int32($0)) }))
                code = sqlite3_step(statement)
            }
            return code
        }
        guard code == SQLITE_DONE else { throw SQLiteError(code: code, connection: handle) }
    }

    private static func column(_ statement: OpaquePointer, _ position: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, position) {
        case SQLITE_INTEGER:
            return .int(sqlite3_column_int64(statement, position))
        case SQLITE_FLOAT:
            return .double(sqlite3_column_double(statement, position))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, position) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, position))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, position))
            guard count > 0, let bytes = sqlite3_column_blob(statement, position) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    /// Binds `values[index...]` to `statement`, then returns `body()` (which steps it).
    ///
    /// Text and blobs are bound in place (SQLITE_STATIC), each inside the scope that keeps
    /// its bytes alive, with `body` innermost: SQLite may read a parameter at every step
    /// (a `WHERE` evaluated row by row), and copying values instead (SQLITE_TRANSIENT) cost
    /// a malloc, a copy and a free per value, most of the binding's cost on runs of
    /// thousands of steps.
    static func binding(_ statement: OpaquePointer, _ values: [SQLiteValue], from index: Int = 0,
                        _ body: () -> Int32) -> Int32 {
        guard index < values.count else { return body() }
        let position = Int32(index + 1)
        switch values[index] {
        case .text(var text):
            return text.withUTF8 { utf8 in
                if let base = utf8.baseAddress {
                    sqlite3_bind_text(statement, position, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                      Int32(utf8.count), nil)
                } else {
                    sqlite3_bind_text(statement, position, "", 0, transient)  // empty, not NULL
                }
                return binding(statement, values, from: index + 1, body)
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
                return binding(statement, values, from: index + 1, body)
            }
        case .null:
            sqlite3_bind_null(statement, position)
        }
        return binding(statement, values, from: index + 1, body)
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
