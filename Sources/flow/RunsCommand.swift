import ArgumentParser
import FlowJournal
import FlowKit

/// `flow runs`: the history, newest first.
struct RunsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs",
        abstract: "List recorded runs, newest first.",
        discussion: """
            A run whose flow process died (killed, crashed, machine lost) is shown as \
            `interrupted`; `flow resume ID` finishes it.

            Housekeeping: --prune KEEP deletes all but the newest KEEP runs; \
            --prune-older-than 7d deletes runs that started longer ago. Live runs are never deleted.
            """
    )

    @OptionGroup var journal: JournalOptions

    @Option(help: "Show at most this many runs.")
    var limit: Int?

    @Flag(help: "Print the runs as JSON.")
    var json = false

    @Option(help: ArgumentHelp("Delete all but the newest KEEP runs.", valueName: "keep"))
    var prune: Int?

    @Option(name: .customLong("prune-older-than"), help: ArgumentHelp("Delete runs older than this (e.g. 12h, 7d).", valueName: "age"))
    var pruneOlderThan: String?

    func run() throws {
        let journal = try JournalInput.open(self.journal)
        if prune != nil || pruneOlderThan != nil {
            var before: Double?
            if let age = pruneOlderThan {
                guard let seconds = Self.age(age) else {
                    throw ValidationError("invalid age `\(age)` for --prune-older-than (e.g. 12h, 7d)")
                }
                before = Timestamp.now().unix - seconds
            }
            if let prune, prune < 0 { throw ValidationError("--prune takes 0 or more") }
            let removed = try JournalInput.attempt { () throws(JournalError) in try journal.prune(keep: prune, before: before) }
            Console.stdout("pruned \(removed) run\(removed == 1 ? "" : "s")\n")
            return
        }
        let runs = try JournalInput.attempt { () throws(JournalError) in try journal.runs(limit: limit) }
        if json {
            let value = JSONValue.array(runs.map(Self.json))
            Console.stdout(value.rendered(pretty: true) + "\n")
            return
        }
        if runs.isEmpty {
            Console.stdout("no runs recorded in \(journal.stateDir)/\n")
            return
        }
        var rows = [["ID", "STATE", "STARTED", "DURATION", "WORKFLOW", "STEPS"]]
        for run in runs {
            let duration = run.endedAt.map { formatElapsed($0 - run.startedAt) } ?? "-"
            var workflow = run.workflowName
            if run.kind != "run" { workflow += " (\(run.kind) \(run.parentID ?? ""))" }
            rows.append([run.id, run.state, JournalInput.localTime(run.startedAt), duration, workflow, JournalInput.counts(run.counts)])
        }
        let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            var line = ""
            for (i, cell) in row.enumerated() {
                line += i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count + 2)
            }
            Console.stdout(line + "\n")
        }
    }

    static func json(_ run: RunRecord) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(run.id)), ("kind", .string(run.kind)), ("state", .string(run.state)),
            ("workflow", .string(run.workflowName)), ("file", .string(run.workflowPath)),
            ("started_at", .string(Timestamp(unix: run.startedAt).iso8601)),
        ]
        members.append(("ended_at", run.endedAt.map { .string(Timestamp(unix: $0).iso8601) } ?? .null))
        members.append(("duration_seconds", run.endedAt.map { .double($0 - run.startedAt) } ?? .null))
        members.append(("exit_status", run.exitStatus.map(JSONValue.int) ?? .null))
        members.append(("parent_id", run.parentID.map(JSONValue.string) ?? .null))
        let counts: [(String, JSONValue)] = run.counts.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int($0.value)) }
        members.append(("counts", .object(counts)))
        return .object(members)
    }

    /// `30s`, `12h`, `7d` → seconds.
    static func age(_ text: String) -> Double? {
        if text.hasSuffix("d"), let days = Double(text.dropLast()), days >= 0 { return days * 86_400 }
        return Duration.parse(text).map(\.seconds)
    }
}
