import FlowKit

/// `flow runs`' table.
extension Journal {
    /// Writes the table of runs, newest first (at most `limit`): `header`, then a row of
    /// `cells(run)` a run, each column as wide as its widest cell (`SpooledTable`). Returns
    /// how many runs it listed; nothing is written when there is none.
    ///
    /// The journal is read once, a page at a time (`forEachRun`), and the rows are written
    /// as they were measured: a run that starts, ends or is pruned while the table is read
    /// cannot change a row after its column was measured, nor which runs `limit` lists.
    /// Two reads (measuring, then writing, to hold no row) listed, with `--limit`, a run that
    /// started between them, which the first had not measured, and dropped the last.
    public func writeRunTable(limit: Int?, header: [String], cells: (RunRecord) -> [String],
                              write: (String) -> Void) throws(JournalError) -> Int {
        let table = SpooledTable(header: header)
        try forEachRun(limit: limit, listing: true) { run in table.append(cells(run)) }
        guard table.count > 0 else { return 0 }
        if let failure = table.write(write) { throw JournalError("cannot list the runs: \(failure)") }
        return table.count
    }
}
