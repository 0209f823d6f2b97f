#if canImport(Glibc)
import Glibc
#endif
import FlowKit
import Dispatch
import Synchronization

/// Records a run in the journal as it happens: one more observer of the event stream.
///
/// The journal is always a prefix of the run's transitions, in order. Two places hold it:
/// - the database, written in batches: every 250 ms (on a queue of its own, beside the
///   run: `commitInBackground`), every 8,192 transitions or output rows, and at the end;
/// - the run's lock file (`RunLock`), which gets the transitions not yet in the database
///   before flow acts outside itself (`settle`: a spawn, a fail-fast signal) whenever they
///   include a step's end: so no process follows from a finished step before that end is
///   recorded. One `write` of a JSON line per sequential step, where a SQLite commit costs
///   about 60 µs of locks, page writes and B-tree work (measured: journal overhead on 1,000
///   sequential steps 9–12% with a commit per step, 3–5% this way). What a commit has
///   written leaves the file at its next write; if flow dies, the next `flow` to open the journal folds it in
///   (`Journal.recover`). Both survive a killed process and neither is synced, as with
///   SQLite's `synchronous = NORMAL`.
///
/// A start (`→ running`) alone is not written before its spawn: a SIGKILL just then leaves
/// that step `pending` rather than `running`, which `resume` treats alike (the step runs
/// again), and nothing recorded did not happen. Output is appended to the run's output
/// file as it is read (through one reused buffer); a row per run of consecutive lines of a
/// step, saying where they are, goes with the next commit, after the buffer is written. A
/// crash loses at most the last ones, which the terminal has already shown.
public final class JournalRecorder: RunObserver, @unchecked Sendable {
    /// An `output_lines` row not yet committed: consecutive output of one step and stream,
    /// at `offset` in the run's output file (or still in `outputBuffer`).
    struct Line {
        var path: String
        var stream: String
        var time: Double
        var offset: Int64
        var length: Int
    }

    /// Set once, before `attached` turns true (see `opening`).
    private(set) var journal: Journal!
    let metadata: RunMetadata
    let plan: Plan
    /// When the run started: when the recorder was made, as the run starts (the run's row is
    /// written later, once the journal is open, possibly after a short run ended: stamped
    /// then, its end came before its start).
    let startedAt = Timestamp.now().unix
    var lock: RunLock?
    var lines: [Line] = []
    /// The run's output file (see `Journal.outputPath`), opened on the first output.
    var outputFD: Int32 = -1
    /// Bytes written to it so far.
    var outputSize: Int64 = 0
    /// Output not yet written to the file: one copy of each byte, in one reused buffer,
    /// written in large pieces.
    var outputBuffer: [UInt8] = []
    /// Where a step's later attempts start in its output: the mark is stored as a row of
    /// its own (stream `flow`) before the attempt's first line, so `flow logs` shows it.
    var marks = AttemptMarks()
    /// Transitions not yet committed, oldest first.
    var pending: [TransitionRecord] = []
    /// Paths whose failure a note made an allowed one since the last commit took them
    /// (`RunEvent.note`'s `allowing`): applied to the ledger after the transitions taken
    /// with them, which hold their failures (or follow them).
    var allowances: [String] = []
    /// How many of `pending` (from the start) are in the lock file.
    var logged = 0
    /// `pending[logged...]` holds more than starts (see `settle`).
    var unloggedEnd = false
    /// A commit is queued (see `queueCommit`).
    var commitQueued = false
    /// Commits run here, off the process hub's thread: their SQLite work (about as many
    /// instructions as the rest of a sequential step) then runs beside the steps, on the
    /// other CPU, rather than between a spawn and the child's start on the same one.
    private let commitQueue = DispatchQueue(label: "flow.journal.commit", qos: .utility)
    /// The database's turn: every commit takes it while `mutex` is held (so commits run in
    /// the order they took their records) and gives it back after its transaction, which a
    /// background commit runs without `mutex`. Order: `mutex`, then this, then the journal's
    /// connection; nothing that holds it waits for `mutex`.
    private let dbTurn = DispatchSemaphore(value: 1)
    /// The highest `seq` in the database, written after each transaction.
    let committedThrough = Atomic<Int>(0)
    /// The highest `seq` taken into a background commit so far.
    var takenThrough = 0
    /// The lock file still holds lines of records a background commit took: it is emptied
    /// (and what `pending` logged since written again) once that commit is done.
    var fileHoldsTaken = false
    /// A background commit took step ends the lock file lacks (see `settle`).
    var takenUnloggedEnd = false
    /// A background commit took transitions the lock file lacks (starts, say: the first
    /// step's, or the second of two concurrent steps'): lines appended before it is done
    /// would follow a gap (see `settle`).
    var takenUnlogged = false
    /// A background commit (or `catchUp`) took or logged step ends since the last `settle`,
    /// which then logs the starts that came after them (see `settle`).
    var endTakenSinceSettle = false
    /// A background commit's failure, reported by the next caller under `mutex`.
    private let backgroundFailure = Mutex<JournalError?>(nil)
    let hub: ProcessHub
    /// Transitions numbered so far (the last one's `seq`).
    var sequence = 0
    /// The steps' state as the transitions so far leave it (see `StepLedger`).
    var ledger = StepLedger()
    /// Prepared on the first commit.
    var statements: JournalStatements?
    var disabled = false
    let mutex = Mutex(())
    var ticker: Task<Void, Never>?
    /// Called once if the journal stops working mid-run.
    let warn: @Sendable (String) -> Void
    /// The journal is open and the run written (`journal`, `lock` and `statements` may be
    /// read). Until then transitions and output rows only queue up.
    let attached = Atomic<Bool>(false)
    /// Signalled once the opening has ended, attached or not.
    private let opened = DispatchSemaphore(value: 0)
    private let openedFlag = Atomic<Bool>(false)

    public init(journal: Journal, metadata: RunMetadata, plan: Plan, hub: ProcessHub = .shared,
                warn: @escaping @Sendable (String) -> Void) {
        self.journal = journal
        self.hub = hub
        self.metadata = metadata
        self.plan = plan
        self.warn = warn
    }

    private init(metadata: RunMetadata, plan: Plan, hub: ProcessHub, warn: @escaping @Sendable (String) -> Void) {
        self.hub = hub
        self.metadata = metadata
        self.plan = plan
        self.warn = warn
    }

    /// A recorder whose journal (under `stateDir`, made if need be) is opened, and the run
    /// written, on a thread of its own while the run starts.
    ///
    /// Why: opening SQLite, reading or making the schema and writing the run takes 1–2 ms
    /// (a new journal, as in a fresh checkout, most), a quarter of a one-step run; the
    /// first steps need none of it. Transitions queue up meanwhile. The first time the
    /// journal must hold something before flow goes on (a step's end before the next
    /// spawn, the run's end) waits for the opening (`awaitOpening`); commits asked for
    /// earlier are left for it. If the journal cannot be opened, `failed` gets the error and
    /// the run goes on unrecorded.
    public static func opening(stateDir: String, metadata: RunMetadata, plan: Plan, hub: ProcessHub = .shared,
                               prefetched: JournalOpening? = nil,
                               warn: @escaping @Sendable (String) -> Void,
                               failed: @escaping @Sendable (JournalError) -> Void) -> JournalRecorder {
        let recorder = JournalRecorder(metadata: metadata, plan: plan, hub: hub, warn: warn)
        let attach: @Sendable (Result<Journal, JournalError>) -> Void = { opened in
            do throws(JournalError) {
                let journal = try opened.get()
                journal.keepOpenUntilExit()
                recorder.journal = journal
                try recorder.begin()
            } catch {
                failed(error)
            }
            recorder.openedFlag.store(true, ordering: .releasing)
            recorder.opened.signal()
            // What queued up meanwhile goes in with a commit now.
            recorder.mutex.withLock { _ in recorder.queueCommit() }
        }
        if let prefetched {
            prefetched.then(attach)
        } else {
            let open: @Sendable () -> Void = {
                attach(Result { () throws(JournalError) -> Journal in try Journal.open(stateDir: stateDir, create: true) })
            }
            if !BackgroundThread.start(open) { open() }
        }
        return recorder
    }

    /// Waits until the opening has ended; false (recording stops) if it failed.
    func awaitOpening() -> Bool {
        if attached.load(ordering: .acquiring) { return true }
        if !openedFlag.load(ordering: .acquiring) {
            opened.wait()
            opened.signal()  // for the next one who waits
        }
        if attached.load(ordering: .acquiring) { return true }
        disabled = true
        return false
    }

    /// The journal holds the run and has taken everything so far: false once recording
    /// stopped (a full disk, an output file past `ulimit -f`) or if it never started.
    /// Why: the end-of-run hints that point at `flow logs RUN` would point at nothing.
    public var isRecording: Bool {
        mutex.withLock { _ in !disabled && attached.load(ordering: .acquiring) }
    }

    /// Waits until the journal is open and the run written; false if it could not be
    /// (the run would go unrecorded).
    public func waitUntilRecording() -> Bool {
        mutex.withLock { _ in awaitOpening() }
    }

    /// Writes the run and its (pending) steps, and takes the run's lock.
    public func begin() throws(JournalError) {
        // Without its lock a live run reads as `interrupted` to every other `flow`, which
        // then lets `resume` or `undo` run its steps while it still runs them (it was
        // recorded all the same when `locks/` could not take the file). So it is not
        // recorded, as for any journal that cannot be written.
        guard let lock = RunLock(stateDir: journal.stateDir, runID: metadata.id) else {
            let reason = String(cString: strerror(errno))
            throw JournalError("cannot make the run's lock file \(RunLock.path(stateDir: journal.stateDir, runID: metadata.id)) "
                + "(\(reason)); without it the run would read as interrupted while it runs")
        }
        self.lock = lock
        let m = metadata
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, 255)
        let hostName = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var rows: [(String, Int, Int, String?, String, String)] = []
        func visit(_ node: PlanNode, depth: Int) {
            rows.append((node.path, rows.count, depth, node.name, node.keyword, node.summary))
            for child in node.children + node.finally { visit(child, depth: depth + 1) }
            for child in node.undo { visit(child, depth: depth + 1) }
        }
        for child in plan.root.children + plan.root.finally { visit(child, depth: 0) }
        let total = rows.filter { ["print", "delay", "shell"].contains($0.4) }.count
        do {
            try journal.access { db in
                let s = try JournalStatements(db)
                statements = s
                try s.transaction {
                    try db.execute("""
                        INSERT INTO runs (id, kind, parent_id, workflow_path, workflow_name, content_hash, content, args, cwd,
                                          started_at, state, pid, host, total_steps, workflow_path_bytes, cwd_bytes,
                                          instance_outputs)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, 1)
                        """, [m.id, m.kind.rawValue, m.parentID, m.workflowPath, plan.workflowName,
                              Journal.hash(m.content), m.content, m.args.json, m.cwd,
                              startedAt, Int(getpid()), hostName, total, m.workflowPathBytes, m.cwdBytes])
                    for row in rows {
                        try s.run(s.insertStep, .text(m.id), .text(row.0), .int(Int64(row.1)), .int(Int64(row.2)),
                                  row.3.map { .text($0) } ?? .null, .text(row.4), .text(row.5))
                    }
                }
            }
        } catch {
            // No run was written: its lock file would stay behind for good (nothing clears
            // the lock of a run the journal does not have).
            lock.release(stateDir: journal.stateDir, runID: metadata.id)
            self.lock = nil
            throw error
        }
        // Before `attached`: whoever sees it true (the run's end, on another thread) reads
        // `ticker` to cancel it. Made after it, the end could read it still nil (a data race
        // ThreadSanitizer reported), and the ticker then ran on past the run's end.
        ticker = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await DispatchPool.sleep(for: .milliseconds(250))
                guard let self else { return }
                self.mutex.withLock { _ in self.queueCommit() }
            }
        }
        attached.store(true, ordering: .releasing)
    }

    public func handle(_ event: RunEvent) {
        mutex.withLock { _ in
            reportBackgroundFailure()
            guard !disabled else { return }
            switch event {
            case .stepState(let t):
                marks.observe(t)
                sequence += 1
                pending.append(TransitionRecord(seq: sequence, t))
                if t.to != .running { unloggedEnd = true }
                if pending.count >= Self.maxPending { queueCommit() }
            case .note(_, _, let allowing) where !allowing.isEmpty: allowances += allowing
            case .runFinished(let outcome): finish(outcome)
            default: break
            }
        }
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        append(step, stream, line)
        withUnsafeBytes(of: UInt8(0x0A)) { append(step, stream, $0) }
    }

    public func outputLines(_ step: StepRef, _ stream: OutputChannel, lines: UnsafeRawBufferPointer) {
        append(step, stream, lines)
    }

    /// Consecutive output of one step and stream shares a row (whole lines, each ending in
    /// `\n`), of about 1 MiB: a step printing millions of lines costs hundreds of inserts.
    func append(_ step: StepRef, _ stream: OutputChannel, _ bytes: UnsafeRawBufferPointer) {
        mutex.withLock { _ in
            guard !disabled else { return }
            if let mark = marks.take(step.path) {
                Array((mark + "\n").utf8).withUnsafeBytes { append(path: step.path, stream: "flow", $0) }
            }
            append(path: step.path, stream: stream == .stdout ? "stdout" : "stderr", bytes)
        }
    }

    /// Appends `bytes` to the output file, in a row of `stream`'s (`stdout`, `stderr`, or
    /// `flow` for an attempt's mark); the caller holds the mutex.
    private func append(path: String, stream name: String, _ bytes: UnsafeRawBufferPointer) {
        guard !disabled else { return }
        if let last = lines.indices.last, lines[last].path == path, lines[last].stream == name,
           lines[last].length < Self.rowBytes {
            lines[last].length += bytes.count
        } else {
            lines.append(Line(path: path, stream: name, time: Timestamp.now().unix,
                              offset: outputSize + Int64(outputBuffer.count), length: bytes.count))
        }
        if outputBuffer.count + bytes.count > Self.outputBufferBytes {
            do { try flushOutput() } catch { return fail(error) }
        }
        if bytes.count > Self.outputBufferBytes {
            do { try writeOutput(bytes) } catch { return fail(error) }
        } else {
            outputBuffer.append(contentsOf: bytes)
        }
        // The rows go with the next commit (at most 250 ms away); a flood of short
        // alternating rows is committed sooner (bounded memory).
        if lines.count >= Self.maxPending { commit() }
    }

    static let rowBytes = 1 << 20
    /// Transitions (or output rows) held before a commit is due regardless of the clock
    /// (bounded memory).
    static let maxPending = 8192

    /// Called before flow acts outside itself: records the step ends it has been told of,
    /// in the lock file (one `write`), or without one in the database.
    public func settle() {
        mutex.withLock { _ in
            awaitTakenCommit()
            reportBackgroundFailure()
            // A commit that took (or logged) the step ends since the last settle leaves the
            // starts after them to this one: the start of the step about to be spawned was
            // then in memory only, and a flow killed while it ran left it `pending`, not
            // `interrupted` (3 kills in 240 of a run whose second step hangs).
            let startsAfterTakenEnds = endTakenSinceSettle && logged < pending.count
            endTakenSinceSettle = false
            guard unloggedEnd || startsAfterTakenEnds, !disabled, awaitOpening() else { return }
            if logPending() { return }
            commit()
        }
    }

    /// Does now what would make the next `settle` wait, before a step starts: flow's own
    /// wait for the journal is then in no step's time (the step's clock starts at its
    /// `running`, which follows). Waits for a background commit the settle would wait for,
    /// and for the journal's opening (the run's row, which another process holding the
    /// database locked delays up to the busy timeout); writes ends with large outputs to the
    /// lock file (a 30 MB value: half a second of encoding), which the settle would have
    /// written with the step's start. A start is then written by the settle on its own, a
    /// second `write`, only after such an end: the usual one `write` per step stays one.
    public func catchUp() {
        mutex.withLock { _ in
            awaitTakenCommit()
            reportBackgroundFailure()
            guard unloggedEnd || endTakenSinceSettle, !disabled, awaitOpening(), unloggedOutputBytes() >= Self.largeOutputs,
                  logPending() else { return }
            // The settle before the spawn then writes the step's start (see `settle`).
            endTakenSinceSettle = true
        }
    }

    /// Outputs (in UTF-8 bytes) in the transitions the lock file lacks, from which
    /// `catchUp` writes them itself: about a millisecond of encoding in a debug build.
    static let largeOutputs = 64 << 10

    /// The bytes of output values in `pending[logged...]`, counted up to `largeOutputs`.
    /// Called with `mutex` held.
    func unloggedOutputBytes() -> Int {
        var bytes = 0
        for record in pending[logged...] where !record.outputs.isEmpty {
            for output in record.outputs { bytes += output.value.utf8.count }
            if bytes >= Self.largeOutputs { break }
        }
        return bytes
    }

    /// Waits for a background commit that took step ends the lock file lacks, or that took
    /// transitions it lacks when ends are about to be appended to it (it needs nothing this
    /// thread holds). Appended while it was under way, the lines followed a gap (the
    /// transitions it took), and a flow killed before it was done lost them all: a dead
    /// run's lines are folded in only without gaps, so ends flow had acted on (it started
    /// the next step) were gone (found by reading; `flow show` of such a run said `pending`
    /// and `interrupted` for steps that had succeeded). Called with `mutex` held.
    func awaitTakenCommit() {
        guard takenUnloggedEnd || (takenUnlogged && unloggedEnd) else { return }
        dbTurn.wait()
        dbTurn.signal()
        takenUnloggedEnd = false
        takenUnlogged = false
    }

    /// Appends `pending[logged...]` to the lock file (first emptying it of records already
    /// committed, once no commit is under way); false without a lock file or on a failed
    /// write. Called with `mutex` held.
    func logPending() -> Bool {
        guard let lock else { return false }
        if fileHoldsTaken, committedThrough.load(ordering: .acquiring) >= takenThrough {
            lock.clear()
            fileHoldsTaken = false
            logged = 0
        }
        var text: [UInt8] = []
        text.reserveCapacity(256 * (pending.count - logged))
        for record in pending[logged...] { record.appendLine(to: &text) }
        guard text.isEmpty || lock.append(text) else { return false }
        logged = pending.count
        unloggedEnd = false
        return true
    }

    /// At most this many transitions the lock file lacks are written to it when a
    /// background commit takes them (see `commitInBackground`).
    static let gapLinesLogged = 64

    /// Commits on the commit queue (once, however often asked).
    func queueCommit() {
        guard !commitQueued, !disabled else { return }
        commitQueued = true
        commitQueue.async { [weak self] in self?.commitInBackground() }
    }

    /// Takes the queued records and output rows under `mutex` and commits them without it,
    /// so that the steps' transitions and output go on being recorded meanwhile. Ends that
    /// were in the lock file stay there until the commit is done; for those that were not,
    /// `settle` waits for it: a step's end is never only in memory once the next step may
    /// start.
    func commitInBackground() {
        var taken: (lines: [Line], records: [TransitionRecord], allowing: [String]) = ([], [], [])
        let go = mutex.withLock { _ -> Bool in
            commitQueued = false
            reportBackgroundFailure()
            guard !disabled, !lines.isEmpty || !pending.isEmpty || !allowances.isEmpty else { return false }
            guard attached.load(ordering: .acquiring) else {
                commit()  // still opening (the opening commits then), or failed
                return false
            }
            do { try flushOutput() } catch {
                fail(error)
                return false
            }
            // Step ends not in the lock file are taken as they are: a `settle` (before flow
            // next acts outside itself) waits for this commit rather than have them only
            // in memory. Logging them here instead cost a line of JSON per end (10,000
            // delay steps ending at once: 4 MB of them).
            dbTurn.wait()
            // A few transitions the lock file lacks (in a sequential run, the start of the
            // step now running) go into it now, one `write`: otherwise the next `settle`
            // must wait for this commit (see `takenUnlogged`), which put the SQLite work
            // back on the path between two steps. Many (10,000 delays ending at once) are
            // left to that wait, as above.
            if unloggedEnd { endTakenSinceSettle = true }
            if pending.count - logged <= Self.gapLinesLogged { _ = logPending() }
            if unloggedEnd { takenUnloggedEnd = true }
            if logged < pending.count { takenUnlogged = true }
            unloggedEnd = false
            taken = (lines, pending, allowances)
            lines.removeAll(keepingCapacity: true)
            pending.removeAll(keepingCapacity: true)
            allowances.removeAll()
            if logged > 0 { fileHoldsTaken = true }
            logged = 0
            if let last = taken.records.last { takenThrough = last.seq }
            return true
        }
        guard go else { return }
        defer { dbTurn.signal() }
        do {
            try transaction(lines: taken.lines, records: taken.records, allowing: taken.allowing)
        } catch {
            backgroundFailure.withLock { $0 = $0 ?? error }
        }
    }

    /// Reports a background commit's failure (once). Called with `mutex` held.
    func reportBackgroundFailure() {
        if let error = backgroundFailure.withLock({ failure -> JournalError? in
            defer { failure = nil }
            return failure
        }) {
            fail(error)
        }
    }

    static let outputBufferBytes = 256 << 10

    /// Writes `outputBuffer` to the run's output file (made on first use).
    func flushOutput() throws(JournalError) {
        guard !outputBuffer.isEmpty else { return }
        var failure: JournalError?
        outputBuffer.withUnsafeBytes { raw in
            do throws(JournalError) { try writeOutput(raw) } catch { failure = error }
        }
        if let failure { throw failure }
        outputBuffer.removeAll(keepingCapacity: true)
    }

    /// Appends `bytes` to the run's output file.
    func writeOutput(_ bytes: UnsafeRawBufferPointer) throws(JournalError) {
        guard awaitOpening() else { return }
        let path = journal.outputPath(metadata.id)
        if outputFD < 0 {
            outputFD = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard outputFD >= 0 else { throw JournalError("cannot write \(path): \(String(cString: strerror(errno)))") }
        }
        guard writeAll(outputFD, bytes) else { throw JournalError("cannot write \(path): \(String(cString: strerror(errno)))") }
        outputSize += Int64(bytes.count)
    }

    /// Stops recording after a failure, warning once (the run itself goes on).
    func fail(_ error: any Error) {
        disabled = true
        warn("error: the journal stopped recording this run: \(error)")
    }

    /// Writes the buffered lines and queued transitions (if any) in one transaction.
    func commit() {
        guard !disabled, !lines.isEmpty || !pending.isEmpty || !allowances.isEmpty else { return }
        guard attached.load(ordering: .acquiring) else {
            // Still opening: the opening commits what queued up when it ends. Failed: nothing
            // will be recorded, so nothing is kept.
            if openedFlag.load(ordering: .acquiring) {
                disabled = true
                pending.removeAll()
                allowances.removeAll()
                lines.removeAll()
                outputBuffer.removeAll()
            }
            return
        }
        guarded()
    }

    /// Writes the buffered lines and queued transitions, then `body`, in one transaction
    /// (after any background commit under way); on failure, warns once and stops recording
    /// (the run itself goes on). Called with `mutex` held.
    func guarded(_ body: (SQLiteConnection, JournalStatements) throws -> Void = { _, _ in }) {
        do {
            // The bytes first: a committed row never points past the end of the file.
            try flushOutput()
            dbTurn.wait()
            defer { dbTurn.signal() }
            try transaction(lines: lines, records: pending, allowing: allowances, body)
            lines.removeAll(keepingCapacity: true)
            pending.removeAll(keepingCapacity: true)
            allowances.removeAll()
            unloggedEnd = false
            // Everything recorded is in the database now.
            if logged > 0 || fileHoldsTaken { lock?.clear() }
            logged = 0
            fileHoldsTaken = false
        } catch {
            fail(error)
        }
    }

    /// One transaction: `lines`, `records` (applied to the ledger) and the `allowing`
    /// that follow them (see `allowances`), then `body`. Called with the database's turn
    /// (`dbTurn`).
    func transaction(lines: [Line], records: [TransitionRecord], allowing: [String] = [],
                     _ body: (SQLiteConnection, JournalStatements) throws -> Void = { _, _ in }) throws(JournalError) {
        try journal.access { db in
            let s = try statements ?? JournalStatements(db)
            statements = s
            try s.transaction {
                for line in lines {
                    try s.run(s.insertLines, .text(metadata.id), .text(line.path), .text(line.stream), .double(line.time),
                              .int(line.offset), .int(Int64(line.length)))
                }
                for record in records { try write(record, s) }
                for path in allowing {
                    ledger.allow(path: path)
                    try s.allowLatestFailure(runID: metadata.id, path: path)
                }
                try writeLedgerChanges(s)
                try body(db, s)
            }
        }
        if let last = records.last { committedThrough.store(last.seq, ordering: .releasing) }
    }

    /// Writes one transition's rows inside the caller's transaction, and applies it to the
    /// ledger.
    func write(_ r: TransitionRecord, _ s: JournalStatements) throws {
        try s.insert(r, runID: metadata.id)
        ledger.apply(path: r.path, to: r.to, attempt: r.attempt, time: r.time, exitCode: r.exitCode, signal: r.signal,
                     allowedFailure: r.allowedFailure)
    }

    /// Brings `steps` and `attempts` up to date with the transitions of the same
    /// transaction. Done with every commit rather than once at the end: most of it then
    /// runs in the background commits, beside the run, not after its last step.
    func writeLedgerChanges(_ s: JournalStatements) throws {
        let id = metadata.id
        func optional(_ value: Int?) -> JournalStatements.Value { value.map { .int(Int64($0)) } ?? .null }
        func optional(_ value: Double?) -> JournalStatements.Value { value.map { .double($0) } ?? .null }
        let changes = ledger.takeChanges()
        for (path, entry) in changes.entries {
            if let allowed = entry.allowedFailure {
                // 1 or NULL (see `JournalSchema`'s v5): a step allowed to fail at some point.
                try s.run(s.updateAllowedStep(), .text(entry.state), .int(Int64(entry.attempts)), optional(entry.exitCode),
                          optional(entry.startedAt), optional(entry.endedAt), optional(entry.completedSeq),
                          allowed ? .int(1) : .null, .text(id), .text(path))
                continue
            }
            try s.run(s.updateStep, .text(entry.state), .int(Int64(entry.attempts)), optional(entry.exitCode), optional(entry.startedAt),
                      optional(entry.endedAt), optional(entry.completedSeq), .text(id), .text(path))
        }
        for attempt in changes.attempts {
            try s.run(s.insertAttempt, .text(id), .text(attempt.path), .int(Int64(attempt.number)), .double(attempt.startedAt),
                      .double(attempt.endedAt), .text(attempt.state), optional(attempt.exitCode), optional(attempt.signal))
        }
    }

    /// Lets go of the run's lock. Its file goes with it once the database has everything;
    /// when the last commit failed (another process held the database past the busy
    /// timeout, a full disk), the file keeps what the database lacks, with the transitions
    /// not yet in it added (a gap before them ends what is folded in, as after a crash), and
    /// the run reads as `interrupted` with every step as far as it got. Called with `mutex`
    /// held.
    func releaseLock() {
        guard let lock else { return }
        if disabled {
            _ = logPending()
            lock.releaseKeepingRecords()
        } else {
            lock.release(stateDir: journal.stateDir, runID: metadata.id)
        }
        self.lock = nil
    }

    /// `counts` as `run_counts` keeps them: `state n` pairs joined by `,`, those of 0 left out.
    static func countsText(_ counts: [StepState: Int]) -> String {
        counts.filter { $0.value > 0 }.map { "\($0.key.rawValue) \($0.value)" }.sorted().joined(separator: ",")
    }

    func finish(_ outcome: RunOutcome) {
        guard awaitOpening() else { return }
        ticker?.cancel()
        let id = metadata.id
        guarded { db, _ in
            try db.execute("UPDATE runs SET state = ?, exit_status = ?, ended_at = ? WHERE id = ?",
                           [outcome.status.rawValue, Int(outcome.exitCode), outcome.time.unix, id])
            // The counts the summary gave, which are those of the run's steps rows
            // (`JournalSchema.countedStep`): no SQL to parse and run for them, a tenth of a
            // one-step run's instructions as `storeRunCounts` (see `JournalSchema.runCounts`).
            if journal.hasRunCounts {
                try db.execute("INSERT OR REPLACE INTO run_counts (run_id, counts, allowed) VALUES (?, ?, ?)",
                               [id, Self.countsText(outcome.counts), Self.countsText(outcome.allowedFailures)])
            }
        }
        // Finalised while the connection is ours, before it may close.
        try? journal.access { _ in statements = nil }
        releaseLock()
        if outputFD >= 0 {
            close(outputFD)
            outputFD = -1
        }
    }
}
