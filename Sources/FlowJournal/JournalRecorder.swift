#if canImport(Glibc)
import Glibc
#endif
import FlowKit
import Foundation
import GRDB
import Synchronization

/// Records a run in the journal as it happens: one more observer of the event stream.
///
/// Each transition is committed in its own transaction before `handle` returns, and the
/// event bus waits for it, so a run killed at any instant (even by SIGKILL) leaves a
/// journal that says exactly how far it got. Output lines are buffered and written with
/// the next transition (or every 250 ms), consecutive lines of a step in one row; a crash loses at most those last lines, which
/// the terminal has already shown.
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
    var completed = 0
    /// When the running attempt of each step started.
    var attemptStarts: [String: Double] = [:]
    var disabled = false
    let mutex = Mutex(())
    var ticker: Task<Void, Never>?
    /// Called once if the journal stops working mid-run.
    let warn: @Sendable (String) -> Void

    public init(journal: Journal, metadata: RunMetadata, plan: Plan, warn: @escaping @Sendable (String) -> Void) {
        self.journal = journal
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
        try journal.write { db in
            try db.execute(sql: """
                INSERT INTO runs (id, kind, parent_id, workflow_path, workflow_name, content_hash, content, args, cwd,
                                  started_at, state, pid, host, total_steps)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)
                """, arguments: [m.id, m.kind.rawValue, m.parentID, m.workflowPath, plan.workflowName,
                                 Journal.hash(m.content), Data(m.content), m.args.json, m.cwd,
                                 Timestamp.now().unix, Int(getpid()), hostName, total])
            let insert = try db.cachedStatement(sql: """
                INSERT INTO steps (run_id, path, position, depth, name, kind, label, state) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending')
                """)
            for row in rows {
                try insert.execute(arguments: [m.id, row.0, row.1, row.2, row.3, row.4, row.5])
            }
        }
        ticker = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                guard let self else { return }
                self.mutex.withLock { _ in self.flushLines() }
            }
        }
    }

    public func handle(_ event: RunEvent) {
        mutex.withLock { _ in
            guard !disabled else { return }
            switch event {
            case .stepState(let t): record(t)
            case .runFinished(let outcome): finish(outcome)
            default: break
            }
        }
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        mutex.withLock { _ in
            guard !disabled else { return }
            // Consecutive lines of one step and stream share a row (newline-separated), so a
            // step printing millions of lines costs thousands of inserts, not millions.
            let name = stream == .stdout ? "stdout" : "stderr"
            if let last = lines.indices.last, lines[last].path == step.path, lines[last].stream == name,
               lines[last].bytes.count < 64 * 1024 {
                lines[last].bytes.append(0x0A)
                lines[last].bytes.append(contentsOf: line)
            } else {
                lines.append(Line(path: step.path, stream: name, time: Timestamp.now().unix, bytes: Array(line)))
                if lines.count >= 256 { flushLines() }
            }
        }
    }

    func attempt(_ db: Database) throws {
        if !lines.isEmpty {
            let insert = try db.cachedStatement(sql: "INSERT INTO output_lines (run_id, path, stream, time, line) VALUES (?, ?, ?, ?, ?)")
            for line in lines {
                try insert.execute(arguments: [metadata.id, line.path, line.stream, line.time, Data(line.bytes)])
            }
            lines.removeAll(keepingCapacity: true)
        }
    }

    func guarded(_ body: (Database) throws -> Void) {
        do {
            try journal.writeImmediate { db in
                try attempt(db)
                try body(db)
            }
        } catch {
            disabled = true
            warn("flow: the journal stopped recording this run: \(error)")
        }
    }

    func flushLines() {
        guard !disabled, !lines.isEmpty else { return }
        guarded { _ in }
    }

    func record(_ t: StepTransition) {
        let id = metadata.id
        let now = t.time.unix
        let path = t.step.path
        func optional(_ value: Int32?) -> FastValue { value.map { .int(Int64($0)) } ?? .null }
        guarded { db in
            try db.cachedStatement(sql: """
                INSERT INTO transitions (run_id, path, from_state, to_state, attempt, time, reason) VALUES (?, ?, ?, ?, ?, ?, ?)
                """).runFast(.text(id), .text(path), .text(t.from.rawValue), .text(t.to.rawValue), .int(Int64(t.attempt)),
                             .double(now), t.reason.map(FastValue.text) ?? .null)
            switch t.to {
            case .running:
                try db.cachedStatement(sql: """
                    UPDATE steps SET state = 'running', attempts = ?, started_at = COALESCE(started_at, ?) WHERE run_id = ? AND path = ?
                    """).runFast(.int(Int64(t.attempt)), .double(now), .text(id), .text(path))
                attemptStarts[path] = now
            case .succeeded, .failed, .timedOut, .cancelled:
                var sequence = FastValue.null
                if t.to == .succeeded {
                    completed += 1
                    sequence = .int(Int64(completed))
                }
                try db.cachedStatement(sql: """
                    UPDATE steps SET state = ?, exit_code = ?, ended_at = ?, completed_seq = COALESCE(?, completed_seq)
                    WHERE run_id = ? AND path = ?
                    """).runFast(.text(t.to.rawValue), optional(t.exitCode), .double(now), sequence, .text(id), .text(path))
                // An attempt's row is written once, when it ends (its start is in `transitions`
                // and `steps.started_at` meanwhile): one statement less per step.
                try db.cachedStatement(sql: """
                    INSERT OR REPLACE INTO attempts (run_id, path, number, started_at, ended_at, state, exit_code, signal)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """).runFast(.text(id), .text(path), .int(Int64(t.attempt)), .double(attemptStarts.removeValue(forKey: path) ?? now),
                                 .double(now), .text(t.to.rawValue), optional(t.exitCode), optional(t.signal))
                if let outputs = t.outputs {
                    let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO outputs (run_id, path, key, value) VALUES (?, ?, ?, ?)")
                    for (key, value) in outputs.sorted(by: { $0.key < $1.key }) {
                        try insert.runFast(.text(id), .text(path), .text(key), .text(value))
                    }
                }
            default:
                try db.cachedStatement(sql: "UPDATE steps SET state = ?, ended_at = ? WHERE run_id = ? AND path = ?")
                    .runFast(.text(t.to.rawValue), t.to.isFinal ? .double(now) : .null, .text(id), .text(path))
            }
        }
    }

    func finish(_ outcome: RunOutcome) {
        ticker?.cancel()
        let id = metadata.id
        guarded { db in
            try db.execute(sql: "UPDATE runs SET state = ?, exit_status = ?, ended_at = ? WHERE id = ?",
                           arguments: [outcome.status.rawValue, Int(outcome.exitCode), outcome.time.unix, id])
        }
        lock?.release(stateDir: journal.stateDir, runID: id)
        lock = nil
    }
}
