import FlowKit

/// A journal problem with a message for people (which file, what went wrong, what to do).
public struct JournalError: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// Whether SQLite failed for want of disk space (`SQLITE_FULL`): freeing some (the
    /// output files of runs being pruned) can make the same write succeed.
    var diskFull = false

    /// The message, with control characters escaped: it quotes what the user typed (a run
    /// id, a state dir) and file names, and it is written to a terminal.
    public init(_ description: String) {
        self.description = ControlEscaping.escaped(description)
    }

    /// `path` holds another program's SQLite database (tables of its own, no flow migration).
    static func notAJournal(_ path: String) -> JournalError {
        JournalError("\(path) is not a flow journal (an SQLite database with tables of its own); "
                     + "move it away, or use another --state-dir")
    }
}
