#if canImport(Glibc)
import Glibc
#endif
import FlowKit
import Foundation
import GRDB
import Synchronization

/// Records a run in the journal as it happens: one more observer of the event stream.
///
/// The journal is always a prefix of the run's transitions, in order, each transaction
/// atomic. Transitions are queued and committed in batches:
/// - before flow acts outside itself (`settle`: a spawn, a fail-fast signal), when the
///   queue holds anything but starts (`→ running`): so no process follows from a finished
///   step before the journal has that step's end, and the common sequential case costs one
///   commit per step (the previous step's end and this one's start together);
/// - when the process hub is about to sleep (a child running, a delay waiting): starts of
///   concurrent steps, and ends nothing acted on yet, go in one transaction;
/// - at the end of the run, and with buffered output every 250 ms.
///
/// A start may thus be committed just after its process was spawned. A SIGKILL in between
/// leaves that step `pending` rather than `running`, which `resume` treats alike (the step
/// runs again), and leaves nothing recorded that did not happen. Output lines go with the
/// next commit, consecutive lines of a step in one row; a crash loses at most the last
/// ones, which the terminal has already shown.
public final class JournalRecorder: RunObserver, @unchecked Sendable {
    struct Line {
        var path: String
        var stream: String
        var time: Double
        var bytes: [UInt8]
    }

    let journal: Journal
    let metadata: RunMetadata
    let plan: Plan
    var lock: RunLock?
    var lines: [Line] = []
    /// Bytes in `lines`.
    var bufferedBytes = 0
    /// Transitions not yet committed, oldest first.
    var pending: [StepTransition] = []
    /// `pending` holds more than starts (see `settle`).
    var pendingEnd = false
    /// An idle-time commit is queued on the hub.
    var idleCommitQueued = false
    let hub: ProcessHub
    /// Transitions written so far (their `seq`).
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

    public init(journal: Journal, metadata: RunMetadata, plan: Plan, hub: ProcessHub = .shared,
                warn: @escaping @Sendable (String) -> Void) {
        self.journal = journal
        self.hub = hub
        self.metadata = metadata
        self.plan = plan
        self.warn = warn
    }

    /// Writes the run and its (pending) steps, and takes the run's lock.
    public func begin() throws(JournalError) {
        lock = RunLock(stateDir: journal.stateDir, runID: metadata.id)
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
        try journal.access { db in
            let s = try JournalStatements(db)
            statements = s
            try s.transaction {
                try db.execute(sql: """
                    INSERT INTO runs (id, kind, parent_id, workflow_path, workflow_name, content_hash, content, args, cwd,
                                      started_at, state, pid, host, total_steps)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)
                    """, arguments: [m.id, m.kind.rawValue, m.parentID, m.workflowPath, plan.workflowName,
                                     Journal.hash(m.content), Data(m.content), m.args.json, m.cwd,
                                     Timestamp.now().unix, Int(getpid()), hostName, total])
                for row in rows {
                    try s.run(s.insertStep, .text(m.id), .text(row.0), .int(Int64(row.1)), .int(Int64(row.2)),
                              row.3.map { .text($0) } ?? .null, .text(row.4), .text(row.5))
                }
            }
        }
        ticker = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                guard let self else { return }
                self.mutex.withLock { _ in self.commit() }
            }
        }
    }

    public func handle(_ event: RunEvent) {
        mutex.withLock { _ in
            guard !disabled else { return }
            switch event {
            case .stepState(let t):
                pending.append(t)
                if t.to != .running { pendingEnd = true }
                guard !idleCommitQueued else { return }
                idleCommitQueued = true
                hub.whenIdle { [weak self] in
                    guard let self else { return }
                    self.mutex.withLock { _ in
                        self.idleCommitQueued = false
                        self.commit()
                    }
                }
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
            let name = stream == .stdout ? "stdout" : "stderr"
            if let last = lines.indices.last, lines[last].path == step.path, lines[last].stream == name,
               lines[last].bytes.count < Self.rowBytes {
                lines[last].bytes.append(contentsOf: bytes)
            } else {
                lines.append(Line(path: step.path, stream: name, time: Timestamp.now().unix, bytes: Array(bytes)))
            }
            bufferedBytes += bytes.count
            // Bounded memory, and big transactions (a commit per line would cost more than
            // the lines): written with the next transition, every 250 ms, or per 4 MiB.
            if bufferedBytes >= 4 << 20 { commit() }
        }
    }

    static let rowBytes = 1 << 20

    public func settle() {
        mutex.withLock { _ in
            if pendingEnd { commit() }
        }
    }

    /// Writes the buffered lines and queued transitions (if any) in one transaction.
    func commit() {
        guard !disabled, !lines.isEmpty || !pending.isEmpty else { return }
        guarded()
    }

    /// Writes the buffered lines and queued transitions, then `body`, in one transaction;
    /// on failure, warns once and stops recording (the run itself goes on).
    func guarded(_ body: (Database, JournalStatements) throws -> Void = { _, _ in }) {
        do {
            try journal.access { db in
                let s = try statements ?? JournalStatements(db)
                statements = s
                try s.transaction {
                    for line in lines {
                        try s.run(s.insertLines, .text(metadata.id), .text(line.path), .text(line.stream), .double(line.time), .blob(line.bytes))
                    }
                    for transition in pending { try write(transition, s) }
                    try body(db, s)
                }
                lines.removeAll(keepingCapacity: true)
                bufferedBytes = 0
                pending.removeAll(keepingCapacity: true)
                pendingEnd = false
            }
        } catch {
            disabled = true
            warn("flow: the journal stopped recording this run: \(error)")
        }
    }

    /// Writes one transition's row (and a succeeded step's outputs), inside the caller's
    /// transaction, and applies it to the ledger.
    func write(_ t: StepTransition, _ s: JournalStatements) throws {
        let id = metadata.id
        let path = t.step.path
        func optional(_ value: Int32?) -> JournalStatements.Value { value.map { .int(Int64($0)) } ?? .null }
        sequence += 1
        try s.run(s.insertTransition, .text(id), .int(Int64(sequence)), .text(path), .text(t.from.rawValue), .text(t.to.rawValue),
                  .int(Int64(t.attempt)), .double(t.time.unix), t.reason.map { .text($0) } ?? .null, optional(t.exitCode),
                  optional(t.signal))
        for (key, value) in (t.outputs ?? [:]).sorted(by: { $0.key < $1.key }) {
            try s.run(s.insertOutput, .text(id), .text(path), .text(key), .text(value))
        }
        ledger.apply(path: path, to: t.to.rawValue, attempt: t.attempt, time: t.time.unix, exitCode: t.exitCode.map(Int.init),
                     signal: t.signal.map(Int.init))
    }

    /// Brings `steps` and `attempts` up to date from the ledger (the run's last transaction).
    func writeLedger(_ s: JournalStatements) throws {
        let id = metadata.id
        func optional(_ value: Int?) -> JournalStatements.Value { value.map { .int(Int64($0)) } ?? .null }
        func optional(_ value: Double?) -> JournalStatements.Value { value.map { .double($0) } ?? .null }
        for (path, entry) in ledger.entries {
            try s.run(s.updateStep, .text(entry.state), .int(Int64(entry.attempts)), optional(entry.exitCode), optional(entry.startedAt),
                      optional(entry.endedAt), optional(entry.completedSeq), .text(id), .text(path))
        }
        for attempt in ledger.attempts {
            try s.run(s.insertAttempt, .text(id), .text(attempt.path), .int(Int64(attempt.number)), .double(attempt.startedAt),
                      .double(attempt.endedAt), .text(attempt.state), optional(attempt.exitCode), optional(attempt.signal))
        }
    }

    func finish(_ outcome: RunOutcome) {
        ticker?.cancel()
        let id = metadata.id
        guarded { db, statements in
            try writeLedger(statements)
            try db.execute(sql: "UPDATE runs SET state = ?, exit_status = ?, ended_at = ? WHERE id = ?",
                           arguments: [outcome.status.rawValue, Int(outcome.exitCode), outcome.time.unix, id])
        }
        // Finalised on the connection's queue, before GRDB may close it.
        try? journal.access { _ in statements = nil }
        lock?.release(stateDir: journal.stateDir, runID: id)
        lock = nil
    }
}
