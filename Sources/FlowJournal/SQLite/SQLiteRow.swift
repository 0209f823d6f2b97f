/// One result row, its columns readable by name or position.
struct SQLiteRow: Sendable {
    /// Column names to positions, shared by the rows of one query.
    let columns: [String: Int]
    let values: [SQLiteValue]

    /// The column as `T`; nil if it is NULL, of another kind, or not in the row.
    subscript<T: SQLiteColumn>(_ name: String) -> T? {
        columns[name].flatMap { T(sqlite: values[$0]) }
    }

    subscript<T: SQLiteColumn>(_ position: Int) -> T? {
        values.indices.contains(position) ? T(sqlite: values[position]) : nil
    }
}
