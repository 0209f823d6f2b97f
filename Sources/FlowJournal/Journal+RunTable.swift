import FlowKit

/// `flow runs`' table.
extension Journal {
    /// Writes the table of runs, newest first (at most `limit`): `header`, then a row of
    /// `cells(run)` a run, each column as wide as its widest cell, two spaces between
    /// columns, the last one unpadded. Returns how many runs it listed; nothing is written
    /// when there is none.
    ///
    /// The columns are as wide as their widest cell, which is known only once every run
    /// has been read: a first pass measures them (holding no run), the second writes. A
    /// run that ends or starts between the passes may be wider than measured: its row
    /// is then out of line, never cut.
    public func writeRunTable(limit: Int?, header: [String], cells rowCells: (RunRecord) -> [String],
                              write: (String) -> Void) throws(JournalError) -> Int {
        var widths = header.map { DisplayWidth.columns(of: $0) }
        var count = 0
        try forEachRun(limit: limit, listing: true) { run in
            // Padded by terminal columns, not characters: a workflow named after its file may
            // be `构建.yaml`'s `构建`, two columns a character, which pushed STEPS out of line.
            for (column, cell) in rowCells(run).enumerated() {
                widths[column] = max(widths[column], DisplayWidth.columns(of: cell))
            }
            count += 1
        }
        guard count > 0 else { return 0 }
        write(Self.paddedLine(header, widths: widths))
        try forEachRun(limit: limit, listing: true) { run in write(Self.paddedLine(rowCells(run), widths: widths)) }
        return count
    }

    /// `cells` padded to `widths`, two spaces between columns, the last one unpadded.
    static func paddedLine(_ cells: [String], widths: [Int]) -> String {
        var line = ""
        for (i, cell) in cells.enumerated() {
            line += i == cells.count - 1 ? cell : cell + String(repeating: " ", count: max(widths[i] - DisplayWidth.columns(of: cell), 0) + 2)
        }
        return line + "\n"
    }
}
