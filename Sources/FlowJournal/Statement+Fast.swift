import GRDB
import GRDBSQLite

/// A value bound to a statement on the journal's hot path.
enum FastValue {
    case text(String)
    case int(Int64)
    case double(Double)
    case null
}

extension Statement {
    /// Resets, binds and runs the statement through SQLite's C API: the per-transition
    /// statements run thousands of times a run, and GRDB's argument boxing costs more
    /// than SQLite's own work there.
    func runFast(_ values: FastValue...) throws {
        let statement = sqliteStatement
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            switch value {
            case .text(let text): sqlite3_bind_text(statement, position, text, -1, transient)
            case .int(let number): sqlite3_bind_int64(statement, position, number)
            case .double(let number): sqlite3_bind_double(statement, position, number)
            case .null: sqlite3_bind_null(statement, position)
            }
        }
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code))
        }
    }
}
