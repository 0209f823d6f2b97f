/// A value bound to a statement's parameter or read from a column.
enum SQLiteValue: Equatable, Sendable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])
}

/// What can be bound to a statement's parameter.
protocol SQLiteBindable {
    var sqliteValue: SQLiteValue { get }
}

/// What a column can be read as (see `SQLiteRow`).
protocol SQLiteColumn {
    /// The value as this type, or nil if it is NULL or of another kind.
    init?(sqlite value: SQLiteValue)
}

extension SQLiteValue: SQLiteBindable {
    var sqliteValue: SQLiteValue { self }
}

extension String: SQLiteBindable, SQLiteColumn {
    var sqliteValue: SQLiteValue { .text(self) }

    init?(sqlite value: SQLiteValue) {
        switch value {
        case .text(let text): self = text
        case .blob(let bytes): self = String(decoding: bytes, as: UTF8.self)
        default: return nil
        }
    }
}

extension Int: SQLiteBindable, SQLiteColumn {
    var sqliteValue: SQLiteValue { .int(Int64(self)) }

    init?(sqlite value: SQLiteValue) {
        guard let number = Int64(sqlite: value) else { return nil }
        self = Int(truncatingIfNeeded: number)
    }
}

extension Int64: SQLiteBindable, SQLiteColumn {
    var sqliteValue: SQLiteValue { .int(self) }

    init?(sqlite value: SQLiteValue) {
        switch value {
        case .int(let number): self = number
        case .double(let number):
            guard let exact = Int64(exactly: number) else { return nil }
            self = exact
        default: return nil
        }
    }
}

extension Double: SQLiteBindable, SQLiteColumn {
    var sqliteValue: SQLiteValue { .double(self) }

    init?(sqlite value: SQLiteValue) {
        switch value {
        case .double(let number): self = number
        case .int(let number): self = Double(number)
        default: return nil
        }
    }
}

extension Bool: SQLiteColumn {
    init?(sqlite value: SQLiteValue) {
        guard let number = Int64(sqlite: value) else { return nil }
        self = number != 0
    }
}

extension Array: SQLiteBindable, SQLiteColumn where Element == UInt8 {
    var sqliteValue: SQLiteValue { .blob(self) }

    init?(sqlite value: SQLiteValue) {
        switch value {
        case .blob(let bytes): self = bytes
        case .text(let text): self = Array(text.utf8)
        default: return nil
        }
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
}
