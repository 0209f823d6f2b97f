#if canImport(Glibc)
import Glibc
#endif
import FlowCommandLine
import FlowJournal
import FlowKit

/// `flow runs`: the history, newest first.
struct RunsCommand: Command {
    static let spec = CommandSpec(
        name: "runs",
        abstract: "List recorded runs, newest first.",
        discussion: """
            A run whose flow process died (killed, crashed, machine lost) is shown as \
            `interrupted`; `flow resume ID` finishes it.

            Housekeeping: --prune KEEP deletes all but the newest KEEP runs; \
            --prune-older-than 7d deletes runs that started longer ago. Live runs, and runs a resume or \
            undo is carrying on, are never deleted. A prune that leaves half of the journal's file \
            free or more compacts the file. On a terminal, a prune that lasts over a second shows \
            how far it got.
            """,
        options: JournalOptions.options + [
            .value("limit", help: "Show at most this many runs (default: all of them)."),
            .flag("json", help: "Print the runs as JSON."),
            .value("prune", valueName: "keep", help: "Delete all but the newest KEEP runs (with --json, print {\"pruned\": N})."),
            .value("prune-older-than", valueName: "age", help: "Delete runs older than this (e.g. 12h, 7d)."),
        ]
    )

    var journal: JournalOptions
    var limit: Int?
    var json: Bool
    var prune: Int?
    var pruneOlderThan: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        journal = JournalOptions(arguments)
        limit = try arguments.value("limit", as: Int.self)
        json = arguments.flag("json")
        prune = try arguments.value("prune", as: Int.self)
        pruneOlderThan = arguments.value("prune-older-than")
        // `--limit 0` would list nothing and then say "no runs recorded": a wrong answer, not an empty one.
        if let limit, limit < 1 { throw arguments.error("--limit must be 1 or more (got \(limit))") }
        if let prune, prune < 0 { throw arguments.error("--prune must be 0 or more (got \(prune))") }
        // Both list runs, which pruning does not (it said "pruned 1 run" in reply to --json).
        if limit != nil, prune != nil || pruneOlderThan != nil {
            throw arguments.error("--limit lists runs; it does not go with --prune or --prune-older-than")
        }
        if let age = pruneOlderThan, Self.age(age) == nil {
            // Say the bound too: `99999999d` is well formed, only too long.
            let days = Int(Duration.maximum.seconds / 86_400)
            throw arguments.error("invalid age `\(age)` for --prune-older-than (a duration such as 12h or 7d, at most \(days)d)")
        }
    }

    func run() async throws {
        // A prune of thousands of runs takes a while (seconds to a minute for 50,000): on a
        // terminal, a line says how far it got (docs/journal.md). Started before the open,
        // which may migrate a large journal first.
        let progress = prune != nil || pruneOlderThan != nil ? Self.pruneProgress(json: json) : nil
        // Pruning writes: only listing reads a journal this user cannot write.
        let journal = try JournalInput.open(self.journal, readOnly: prune == nil && pruneOlderThan == nil)
        if prune != nil || pruneOlderThan != nil {
            var before: Double?
            if let age = pruneOlderThan {
                before = Timestamp.now().unix - (Self.age(age) ?? 0)
            }
            let removed: Int
            var spared = 0
            do {
                removed = try JournalInput.attempt { () throws(JournalError) in
                    try journal.prune(keep: prune, before: before, progress: { done, total in
                        progress?.update("deleting runs… \(ProgressLine.grouped(done)) of \(ProgressLine.grouped(total))")
                    }, spared: { spared = $0 })
                }
            } catch {
                progress?.clear()
                throw error
            }
            if removed > 0 {
                // The runs are gone whatever happens here: a journal left as large is said,
                // not failed (a full disk may have no room for the rewrite).
                do {
                    _ = try journal.compactIfMostlyFree { progress?.update("compacting the journal…", now: true) }
                } catch {
                    progress?.clear()
                    Console.stderr("note: the journal was not compacted (\(error.description)); "
                                   + "the pruned runs' space in it is reused by later runs\n")
                }
            }
            progress?.clear()
            if spared > 0 {
                Console.stderr("note: kept \(spared) older run\(spared == 1 ? "" : "s") that a kept `flow resume` carries on "
                               + "(the steps it did not get to are read from \(spared == 1 ? "it" : "them"))\n")
            }
            if json {
                Console.stdout(JSONValue.object([("pruned", .int(removed))]).rendered(pretty: true) + "\n")
            } else {
                Console.stdout("pruned \(removed) run\(removed == 1 ? "" : "s")\n")
            }
            return
        }
        // A page of runs at a time (`Journal.forEachRun`), so that a history of any length
        // takes the memory of one page, not of the whole list: the JSON is written as it is
        // read, the table's rows wait for its widths in a file (`Journal.writeRunTable`).
        var output = ChunkedOutput()
        if json {
            // As `JSONValue.array(…).rendered(pretty: true)` writes it, one element at a time.
            var count = 0
            try JournalInput.attempt { () throws(JournalError) in
                try journal.forEachRun(limit: limit, listing: true) { run in
                    var text = count == 0 ? "[\n  " : ",\n  "
                    Self.json(run).write(to: &text, pretty: true, indent: 1)
                    output.append(text)
                    count += 1
                }
            }
            output.append(count == 0 ? "[]\n" : "\n]\n")
            output.flush()
            return
        }
        let header = ["ID", "STATE", "STARTED", "DURATION", "WORKFLOW", "STEPS"]
        let count = try JournalInput.attempt { () throws(JournalError) in
            try journal.writeRunTable(limit: limit, header: header, cells: Self.cells) { output.append($0) }
        }
        if count == 0 {
            Console.stdout("no runs recorded in \(journal.stateDir)/\n")
            return
        }
        output.flush()
    }

    /// The progress line of a prune: only where stderr is a terminal that can redraw a line
    /// (not `TERM=dumb`), and not with `--json`, whose reader is a program.
    static func pruneProgress(json: Bool) -> ProgressLine? {
        guard !json, isatty(2) == 1 else { return nil }
        if TerminalType.isDumb { return nil }
        return ProgressLine { Console.stderr($0) }
    }

    /// A run's row in the listing.
    static func cells(_ run: RunRecord) -> [String] {
        let duration = run.endedAt.map { formatElapsed($0 - run.startedAt) } ?? "-"
        var workflow = ControlEscaping.escaped(run.workflowName)
        if let action = run.args.action { workflow += " · action " + ControlEscaping.escaped(action) }
        if run.kind != "run" { workflow += " (\(run.kind) \(run.parentID ?? ""))" }
        return [run.id, run.state, JournalInput.localTime(run.startedAt), duration, workflow, run.countsSummary]
    }

    static func json(_ run: RunRecord) -> JSONValue { .object(members(run)) }

    /// A run's members in `runs --json`, which `show --json` has too.
    static func members(_ run: RunRecord) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [
            ("id", .string(run.id)), ("kind", .string(run.kind)), ("state", .string(run.state)),
            ("workflow", .string(run.workflowName)), ("action", run.args.action.map(JSONValue.string) ?? .null),
            ("file", .string(run.workflowPath)),
            ("started_at", .string(Timestamp(unix: run.startedAt).iso8601)),
        ]
        members.append(("ended_at", run.endedAt.map { .string(Timestamp(unix: $0).iso8601) } ?? .null))
        members.append(("duration_seconds", run.endedAt.map { .double($0 - run.startedAt) } ?? .null))
        members.append(("exit_status", run.exitStatus.map(JSONValue.int) ?? .null))
        members.append(("parent_id", run.parentID.map(JSONValue.string) ?? .null))
        let counts: [(String, JSONValue)] = run.counts.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int($0.value)) }
        members.append(("counts", .object(counts)))
        // As `run_finished` has it (events.md): `{}` when none was, and in runs recorded
        // before the journal kept it.
        let allowed: [(String, JSONValue)] = run.allowedFailures.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int($0.value)) }
        members.append(("allowed_failures", .object(allowed)))
        return members
    }

    /// `30s`, `12h`, `7d` → seconds.
    /// Days are a plain number of the duration grammar (not `Double`'s, which takes `inf` and
    /// `1e400`), and the result is at most `Duration.maximum`, as every duration.
    static func age(_ text: String) -> Double? {
        // Spaces around it are allowed, as in every duration (`--grace ' 5s '`).
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let text = String(text.drop(while: blank).reversed().drop(while: blank).reversed())
        if text.hasSuffix("d") {
            guard let days = Duration.parse(String(text.dropLast())), !text.dropLast().contains(where: \.isLetter) else { return nil }
            let seconds = days.seconds * 86_400
            return seconds <= Duration.maximum.seconds ? seconds : nil
        }
        return Duration.parse(text).map(\.seconds)
    }
}
