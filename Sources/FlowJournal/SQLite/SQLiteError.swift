import CFlowSQLite

/// A failed SQLite call: its result code and SQLite's message.
struct SQLiteError: Error, CustomStringConvertible {
    /// The extended result code (`SQLITE_BUSY_TIMEOUT`, …); `primaryCode` is its low byte.
    let code: Int32
    let message: String

    var primaryCode: Int32 { code & 0xFF }

    init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The last error of `connection`, which returned `code`.
    init(code: Int32, connection: OpaquePointer?) {
        self.code = code
        if let connection, let text = sqlite3_errmsg(connection) {
            message = String(cString: text)
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
    }

    var description: String { "SQLite error \(code): \(message)" }
}
