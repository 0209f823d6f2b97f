#if canImport(Glibc)
import Glibc
#endif
import CFlowSQLite
import FlowKit
import Synchronization

/// The run journal: one SQLite database (WAL mode) under the state dir.
///
/// Several `flow` processes may use one state dir at once: writes are short transactions,
/// and a busy database is waited for (up to 10 s) rather than failed. Within a process,
/// the one connection is used by one thread at a time (`serial`), which is what makes the
/// unchecked `Sendable` sound: `connection` is touched only inside `serial`.
public final class Journal: @unchecked Sendable {
    public let stateDir: String
    public let path: String
    private let connection: SQLiteConnection
    private let serial = Mutex(())
    /// Whether `runs` has v4's name bytes (a journal that could not be migrated has not).
    let hasNameBytes: Bool
    /// Whether `steps` and `transitions` have v5's `allowed_failure` (likewise).
    let hasAllowedFailures: Bool
    /// Whether `outputs` has v6's `seq` and `runs` its `instance_outputs` (likewise).
    let hasInstanceOutputs: Bool
    /// Whether the journal has `run_counts` (likewise).
    let hasRunCounts: Bool
    /// Whether the journal has the index `runs_listing` (likewise).
    let hasListingIndex: Bool

    /// The state dir from `--state-dir`, else `FLOW_STATE_DIR`, else `.flow` here.
    /// Trailing slashes are dropped (`state/` is `state`), so that paths made from it read
    /// `state/journal.sqlite`, not `state//journal.sqlite`.
    public static func stateDir(option: String?) -> String {
        if let option, !option.isEmpty { return withoutTrailingSlashes(option) }
        if let env = getenv("FLOW_STATE_DIR"), env.pointee != 0 { return withoutTrailingSlashes(String(cString: env)) }
        return ".flow"
    }

    private static func withoutTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }

    /// SQLite's process-wide options, set once before the first connection.
    private static let configured: Bool = cflow_sqlite_configure() == 0

    /// Opens (and with `create`, makes) the journal of `stateDir`. With `readOnly` (the
    /// history commands), a journal that cannot be opened for writing is read as it is
    /// (see `openReadOnly`).
    public static func open(stateDir: String, create: Bool, readOnly: Bool = false) throws(JournalError) -> Journal {
        _ = configured
        let path = stateDir + "/journal.sqlite"
        if !create, Glibc.access(path, F_OK) != 0 {
            let missing = errno
            if let problem = stateDirProblem(stateDir) ?? databaseFileProblem(path) { throw problem }
            // Not "no journal" when this user may not look (another user's 0700 state dir),
            // nor when the path cannot hold one (`file/state`: a component is a file), where
            // "`flow run` records runs there" sent the user to a command that cannot.
            if missing != ENOENT {
                throw JournalError("cannot read the state dir \(stateDir): \(String(cString: strerror(missing)))")
            }
            throw JournalError("no journal in \(stateDir)/ yet: `flow run` records runs there (see --state-dir)")
        }
        if create {
            do {
                if try makeDirectory(stateDir) { ignoreInGit(stateDir) }
                try makeDirectory(stateDir + "/locks")
                try makeDirectory(stateDir + "/output")
            } catch {
                // Said as the history commands say it, not as `locks` that cannot be made.
                throw stateDirProblem(stateDir) ?? error
            }
        }
        // Two first runs at once would both create the tables: serialise opening and
        // migrating with a lock file beside the database.
        let lockFD = create ? Glibc.open(stateDir + "/journal.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644) : -1
        if lockFD >= 0 { flock(lockFD, LOCK_EX) }
        defer {
            if lockFD >= 0 {
                flock(lockFD, LOCK_UN)
                close(lockFD)
            }
        }
        do {
            let fresh = Glibc.access(path, F_OK) != 0
            let connection = try SQLiteConnection(path: path)
            // Not enforced: every row of a run is written by the one recorder that inserted
            // the run first, and checking the parent on each of a run's thousands of inserts
            // was a tenth of a transition's cost. Pruning deletes the children itself.
            // The WAL is not deleted at close (see `keepOpenUntilExit`); past 64 MiB it is
            // truncated when it restarts, so one run's burst of output does not stay.
            // A brand-new file is made without syncs (switching it to WAL and creating the
            // tables cost five fdatasyncs, a third of a first run's journal time): a power
            // cut now can only damage an empty journal, which flow then reports.
            // A small auto-checkpoint (64 pages, 256 KiB, not SQLite's 4 MiB): every flow
            // process is the first to open the database, and the first connection rebuilds
            // the WAL index by reading and checksumming every valid frame of the WAL. With
            // a WAL grown towards 4 MiB that recovery was ~2.9 M instructions, about 1 ms of
            // every run's start; now it reads at most a few hundred KiB. The checkpoints
            // run in the commits that cross the mark (mostly the background ones).
            // Waiting out SQLITE_BUSY: SQLite refuses the switch to WAL at once, without its
            // busy handler, while another connection writes a file not yet in WAL mode.
            try connection.executeWaitingWhileBusy("""
                PRAGMA foreign_keys = OFF; PRAGMA journal_size_limit = 67108864; PRAGMA wal_autocheckpoint = 64;
                PRAGMA synchronous = \(fresh ? "OFF" : "NORMAL"); PRAGMA journal_mode = WAL
                """)
            // Nearly always the journal is made and migrated already, which a read says: in
            // WAL mode a read goes on beside a writer. Only making or migrating takes the
            // write lock (`BEGIN IMMEDIATE`); taken at every open, it made `runs`, `show` and
            // `logs` wait for any writer (a long prune, a migration, a tool's transaction)
            // and, past the 10 s busy timeout, fail with "stayed locked".
            let current = try !fresh && connection.transaction(write: false) { () throws(SQLiteError) in
                try JournalSchema.isCurrent(connection)
            }
            let created = try !current && connection.transaction { () throws(SQLiteError) in try JournalSchema.createLatestIfEmpty(connection) }
            if fresh { try connection.execute("PRAGMA synchronous = NORMAL") }
            if !created && !current {
                // Another program's database (tables of its own, perhaps a `runs`): migrating
                // it failed with SQLite's "table runs already exists", or added flow's tables
                // to it.
                let isJournal = try connection.transaction(write: false) { () throws(SQLiteError) in
                    try JournalSchema.isJournal(connection)
                }
                guard isJournal else { throw JournalError.notAJournal(path) }
                do {
                    try JournalSchema.migrate(connection)
                } catch let error as SQLiteError where !create && error.primaryCode == SQLITE_READONLY {
                    // A journal this user may read but not write (another user's, a copy
                    // made read-only) is read as it is, a migration short: the history
                    // commands cope with the columns it lacks (see `runColumns`).
                }
            }
            // A journal that had every migration has every column: asked only of one that
            // could not be migrated (this saves each `flow run` a query).
            let columns = current ? LaterColumns() : try laterColumns(connection)
            let journal = Journal(stateDir: stateDir, path: path, connection: connection, columns: columns)
            journal.recover()
            return journal
        } catch let error as SQLiteError {
            if let problem = databaseFileProblem(path) { throw problem }
            if readOnly, !create, [SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM].contains(error.primaryCode) {
                return try openReadOnly(stateDir: stateDir, path: path, error: error)
            }
            throw JournalError(describe(error, path: path))
        } catch let error as JournalError {
            throw error
        } catch {
            throw JournalError("cannot open the journal \(path): \(error)")
        }
    }

    /// The journal of `stateDir` for a quick look that must neither wait nor write (shell
    /// completion): nil when there is none, or it cannot be read at once.
    ///
    /// `open` may take the write lock (`BEGIN IMMEDIATE`, to make the tables of a new
    /// journal or migrate an old one) and folds dead runs' lock files in (`recover`): while
    /// another `flow` held the lock, a TAB waited out the 10 s busy timeout and then listed
    /// nothing. A read-only connection in WAL mode reads beside a writer; a dead run it did
    /// not fold in reads as `interrupted` all the same (`runRecord`).
    public static func peek(stateDir: String) -> Journal? {
        _ = configured
        let path = stateDir + "/journal.sqlite"
        guard Glibc.access(path, R_OK) == 0 else { return nil }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(readOnlyPath: path, busyTimeout: 200)
        } catch {
            // No `-shm` to use or make (a directory this user cannot write): the file alone,
            // when that is the whole journal.
            return try? openReadOnly(stateDir: stateDir, path: path, error: error)
        }
        // Another program's database lists nothing, rather than whatever its own tables hold.
        guard (try? JournalSchema.isJournal(connection)) == true, let columns = try? laterColumns(connection) else { return nil }
        return Journal(stateDir: stateDir, path: path, connection: connection, columns: columns)
    }

    /// A journal in a directory this user cannot write (another user's state dir, a
    /// read-only mount, a copy): SQLite opens a WAL database only if it can use or make
    /// the `-shm` file beside it. Without one, the database file alone is read, as
    /// immutable; that is the whole journal only while the `-wal` file is absent or empty
    /// (the last writer checkpointed it), so otherwise it is refused, saying why, rather
    /// than shown without its latest runs. Nothing is migrated or folded in: the history
    /// commands read older schemas as they are.
    private static func openReadOnly(stateDir: String, path: String, error: SQLiteError) throws(JournalError) -> Journal {
        var wal = stat()
        if stat(path + "-wal", &wal) == 0, wal.st_size > 0 {
            throw JournalError("cannot read the journal \(path) (\(error.message)): SQLite must write \(path)-shm "
                + "to read the runs still in \(path)-wal; run `flow runs` once as a user who can write \(stateDir), "
                + "or copy the state dir somewhere writable")
        }
        let opened: (connection: SQLiteConnection, isJournal: Bool, columns: LaterColumns)
        do {
            let connection = try SQLiteConnection(immutablePath: path)
            opened = (connection, try JournalSchema.isJournal(connection), try laterColumns(connection))
        } catch {
            throw JournalError(describe(error, path: path))
        }
        // As `open` checks before it migrates: another program's database gave SQLite's
        // errors about it (`no such column: kind`) to `runs`, `show` and `logs`.
        guard opened.isJournal else { throw JournalError.notAJournal(path) }
        return Journal(stateDir: stateDir, path: path, connection: opened.connection, columns: opened.columns)
    }

    /// What of the later migrations a journal has: all of it, but in one this user could
    /// not migrate (`laterColumns`).
    struct LaterColumns {
        var nameBytes = true
        var allowedFailures = true
        var instanceOutputs = true
        var runCounts = true
        var listingIndex = true
    }

    init(stateDir: String, path: String, connection: SQLiteConnection, columns: LaterColumns = LaterColumns()) {
        self.stateDir = stateDir
        self.path = path
        self.connection = connection
        self.hasNameBytes = columns.nameBytes
        self.hasAllowedFailures = columns.allowedFailures
        self.hasInstanceOutputs = columns.instanceOutputs
        self.hasRunCounts = columns.runCounts
        self.hasListingIndex = columns.listingIndex
    }

    /// Which columns and tables of later migrations the journal on `connection` has: one it
    /// could not migrate (this user may only read it) is read without them.
    static func laterColumns(_ connection: SQLiteConnection) throws(SQLiteError) -> LaterColumns {
        let names: [String] = try connection.values("""
            SELECT name FROM pragma_table_info('runs') WHERE name IN ('workflow_path_bytes', 'instance_outputs')
            UNION ALL SELECT name FROM pragma_table_info('steps') WHERE name = 'allowed_failure'
            UNION ALL SELECT name FROM sqlite_master WHERE name IN ('run_counts', 'runs_listing')
            """)
        return LaterColumns(nameBytes: names.contains("workflow_path_bytes"), allowedFailures: names.contains("allowed_failure"),
                            instanceOutputs: names.contains("instance_outputs"), runCounts: names.contains("run_counts"),
                            listingIndex: names.contains("runs_listing"))
    }

    static func describe(_ error: SQLiteError, path: String) -> String {
        if [SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_READONLY].contains(error.primaryCode), let problem = databaseFileProblem(path) {
            return problem.description
        }
        switch error.primaryCode {
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return "the journal \(path) is damaged (\(error.message)); move it away to start a new one"
        case SQLITE_CANTOPEN where fullPathLength(path) > maximumPathLength:
            // SQLite's unix VFS opens no database whose full path is longer (its pager keeps
            // room for `-journal`, `-wal` within 512 bytes): a state dir deep in a project
            // (`.flow/` under a 500-byte directory) failed as if it were a permission problem.
            return "cannot open the journal \(path): its full path is \(fullPathLength(path)) bytes, and SQLite opens "
                + "no database whose path is longer than \(maximumPathLength); use a shorter --state-dir (flow run: or --no-journal)"
        case SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_IOERR:
            return "cannot write the journal \(path) (\(error.message)); check its permissions, or use another --state-dir (flow run: or --no-journal)"
        case SQLITE_FULL:
            return "the disk holding \(path) is full"
        case SQLITE_BUSY, SQLITE_LOCKED:
            return "the journal \(path) stayed locked by another process for 10 s (another flow migrating or writing it, or a tool holding it open); try again"
        default:
            return "journal error in \(path): \(error.message)"
        }
    }

    /// The longest full path of a database SQLite's unix VFS opens: its `mxPathname` (512)
    /// less the 8 bytes the pager keeps for the names it derives (`sqlite3PagerOpen`).
    static let maximumPathLength = 504

    /// The length of `path` made absolute, as SQLite makes it before it opens anything
    /// (symbolic links in the directories resolved where they can be).
    static func fullPathLength(_ path: String) -> Int {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { path[path.index(after: $0)...] } ?? path[...]
        if let resolved = realpath(directory, nil) {
            defer { free(resolved) }
            return strlen(resolved) + 1 + name.utf8.count
        }
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path.utf8.count }
        defer { free(cwd) }
        return strlen(cwd) + 1 + path.utf8.count
    }

    /// What is wrong with `stateDir` itself, said the same way by every command: a file, or
    /// a symbolic link to nothing. Of the latter, `mkdir` says "exists" and `flow run` then
    /// failed to make `DIR/locks`, while `flow runs` said to record runs with `flow run`; the
    /// link and where it points are what the user must fix (as `ls -L` names them).
    static func stateDirProblem(_ stateDir: String) -> JournalError? {
        var info = stat()
        if stat(stateDir, &info) == 0 {
            guard info.st_mode & S_IFMT != S_IFDIR else { return nil }
            return JournalError("the state dir \(stateDir) is not a directory (see --state-dir)")
        }
        guard errno == ENOENT, lstat(stateDir, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(stateDir, &target, target.count - 1)
        let to = length > 0 ? " to " + String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return JournalError("the state dir \(stateDir) is a symbolic link\(to), which does not exist (see --state-dir)")
    }

    /// The database's file, or its `-wal` or `-shm`, that is there but is not a file (a
    /// directory, a FIFO), said as such. SQLite only says "disk I/O error" or "unable to
    /// open database file" then, which flow passed on with "check its permissions" (or, for
    /// a `-wal` directory, that SQLite must write the `-shm` file): neither is what to fix.
    static func databaseFileProblem(_ path: String) -> JournalError? {
        for file in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            guard stat(file, &info) == 0 else {
                // A link to nothing: SQLite says only that it cannot open the file, and a
                // history command took it for no journal at all.
                guard errno == ENOENT, let target = danglingLinkTarget(file) else { continue }
                return JournalError("cannot open the journal \(path): \(file == path ? "it" : file) is a symbolic link to "
                    + "\(target), which does not exist; move it away" + (file == path ? " to start a new journal" : "")
                    + " (flow run: or use another --state-dir, or --no-journal)")
            }
            let what: String
            switch info.st_mode & S_IFMT {
            case S_IFREG: continue
            case S_IFDIR: what = "a directory"
            case S_IFIFO: what = "a FIFO"
            case S_IFSOCK: what = "a socket"
            default: what = "a device"
            }
            return JournalError("cannot open the journal \(path): \(file) is \(what), not a file; move it away"
                + (file == path ? " to start a new journal" : "") + " (flow run: or use another --state-dir, or --no-journal)")
        }
        return nil
    }

    /// Where `path` points, when it is a symbolic link (whose target, then, is missing).
    static func danglingLinkTarget(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return nil }
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &target, target.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Makes `path` and the directories above it; true when this call made `path` itself.
    @discardableResult
    static func makeDirectory(_ path: String) throws(JournalError) -> Bool {
        // The directory is there at every run but the first: one mkdir then.
        if mkdir(path, 0o755) == 0 { return true }
        if errno == EEXIST { return false }
        var partial = path.hasPrefix("/") ? "" : "."
        var made = false
        for component in path.split(separator: "/") {
            partial += "/" + component
            made = mkdir(partial, 0o755) == 0
            if !made, errno != EEXIST {
                throw JournalError("cannot create the state dir \(path): \(String(cString: strerror(errno)))")
            }
        }
        return made
    }

    /// Writes `.gitignore` holding `*` into a state dir flow has just made, so that `.flow/`
    /// stays out of `git status` (as pytest, ruff and mypy do with their caches). Only on
    /// creation: a state dir that was there is the user's, and a `.gitignore` they removed
    /// stays removed. It is a courtesy, so a failure to write it is not reported.
    static func ignoreInGit(_ stateDir: String) {
        let fd = Glibc.open(stateDir + "/.gitignore", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let text = Array("# Created by flow automatically.\n*\n".utf8)
        _ = text.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// The file holding the output of `runID` (see `JournalSchema.outputLines`).
    public func outputPath(_ runID: String) -> String {
        "\(stateDir)/output/\(runID).log"
    }

    /// Keeps the connection open until the process exits.
    ///
    /// Why: closing the last connection to a WAL database checkpoints the whole log into
    /// the database and syncs it twice, on the run's wall clock (about 1% of a 1,000-step
    /// run). Left open, the log simply stays: the next `flow` on this state dir (or the next
    /// commit that passes the auto-checkpoint size) carries on from it, exactly as after a
    /// crash, which WAL mode is built for.
    public func keepOpenUntilExit() {
        Self.keptOpen.withLock { $0.append(self) }
    }

    private static let keptOpen = Mutex<[Journal]>([])

    /// A short stable hash of workflow content (FNV-1a, 64 bits), for display and quick checks.
    public static func hash(_ bytes: [UInt8]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        let s = String(h, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }

    /// Runs `body` in a write transaction (see `SQLiteConnection.transaction`).
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws(JournalError) -> T {
        try withConnection { connection in try connection.transaction { try body(connection) } }
    }

    /// Runs `body` on the journal's connection, outside any transaction (the recorder's hot
    /// path manages its own; see `JournalStatements`).
    func access(_ body: (SQLiteConnection) throws -> Void) throws(JournalError) {
        try withConnection(body)
    }

    /// Runs `body` in a read transaction: its queries see one snapshot of the journal.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws(JournalError) -> T {
        try withConnection { connection in try connection.transaction(write: false) { try body(connection) } }
    }

    /// Gives `body` the connection, to this thread alone, and describes what it throws.
    private func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws(JournalError) -> T {
        // Handed out through a local: the lock's closure may only return values it can send.
        nonisolated(unsafe) var result: Result<T, any Error>?
        serial.withLock { _ in result = Result { try body(connection) } }
        do {
            return try result!.get()
        } catch let error as SQLiteError {
            var failure = JournalError(Self.describe(error, path: path))
            failure.diskFull = error.primaryCode == SQLITE_FULL
            throw failure
        } catch let error as JournalError {
            throw error
        } catch {
            throw JournalError("journal error: \(error)")
        }
    }
}
