#if canImport(Glibc)
import Glibc
#endif
import FlowKit

/// Reading the journal: history, one run, its steps and output; pruning.
extension Journal {
    var runColumns: String {
        """
        id, kind, parent_id, workflow_path, workflow_name, content_hash, args, cwd, started_at, ended_at, state,
        exit_status, pid, host, total_steps, \(hasNameBytes ? "workflow_path_bytes, cwd_bytes" : "NULL AS workflow_path_bytes, NULL AS cwd_bytes"),
        \(hasInstanceOutputs ? "instance_outputs" : "NULL AS instance_outputs")
        """
    }

    func runRecord(_ row: SQLiteRow, content: [UInt8] = [],
                   arguments: (String) -> RunArguments? = RunArguments.decode) -> RunRecord {
        let id: String = row["id"] ?? ""
        var state: String = row["state"] ?? ""
        if state == "running", !RunLock.isHeld(stateDir: stateDir, runID: id) { state = RunRecord.interrupted }
        return runRecord(row, state: state, content: content, arguments: arguments)
    }

    /// The records of `rows`, read in one snapshot, with the state each run is in now.
    ///
    /// A row read `running` whose lock nobody holds when looked at is read again: a run
    /// commits its end, then lets go of its lock, so it may have ended between the snapshot
    /// and the look. Taken from the snapshot alone, a run that had just succeeded read as
    /// `interrupted` (found by the concurrency audit: `flow runs` in a loop beside short
    /// runs, about one read in 700), which `flow resume` would have taken up. Read after the
    /// lock was seen free, a row still `running` is of a run that died.
    func runRecords(_ rows: [SQLiteRow], content: (SQLiteRow) -> [UInt8] = { _ in [] },
                    arguments: (String) -> RunArguments? = RunArguments.decode) throws(JournalError) -> [RunRecord] {
        var records = rows.map { runRecord($0, content: content($0), arguments: arguments) }
        let unheld = records.indices.filter { records[$0].state == RunRecord.interrupted }
        guard !unheld.isEmpty else { return records }
        let ids = unheld.map { records[$0].id }
        let columns = runColumns
        let again: [String: SQLiteRow] = try read { db in
            var found: [String: SQLiteRow] = [:]
            for id in ids {
                if let row = try db.rows("SELECT \(columns) FROM runs WHERE id = ?", [id]).first { found[id] = row }
            }
            return found
        }
        for i in unheld {
            // A run pruned meanwhile keeps what the snapshot said.
            guard let row = again[records[i].id], let state: String = row["state"], state != "running" else { continue }
            records[i] = runRecord(row, state: state, content: records[i].content)
        }
        return records
    }

    private func runRecord(_ row: SQLiteRow, state: String, content: [UInt8],
                           arguments: (String) -> RunArguments? = RunArguments.decode) -> RunRecord {
        let id: String = row["id"] ?? ""
        let args = (row["args"] as String?).flatMap(arguments)
        var record = RunRecord(
            id: id, kind: row["kind"] ?? "", parentID: row["parent_id"], workflowPath: row["workflow_path"] ?? "",
            workflowName: row["workflow_name"] ?? "", contentHash: row["content_hash"] ?? "", content: content,
            args: args ?? RunArguments(PlanOptions()), cwd: row["cwd"] ?? "",
            workflowPathBytes: row["workflow_path_bytes"], cwdBytes: row["cwd_bytes"],
            startedAt: Self.plausibleTime(row["started_at"]) ?? 0, endedAt: Self.plausibleTime(row["ended_at"]), state: state,
            exitStatus: Self.plausibleCode(row["exit_status"]),
            pid: row["pid"] ?? 0, host: row["host"] ?? "", totalSteps: row["total_steps"] ?? 0)
        record.argsDamaged = args == nil
        record.instanceOutputs = (row["instance_outputs"] as Int?) == 1
        return record
    }

    /// `last`, a full id, or a unique prefix of one.
    public func resolve(_ reference: String) throws(JournalError) -> String {
        // Every id starts with the empty prefix: it would name the only run, or a list.
        guard !reference.isEmpty else { throw JournalError("an empty run id names no run (give an id, a prefix of one, or `last`)") }
        let ids: [String] = try read { db in
            if reference == "last" {
                return try db.values("SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1")
            }
            // The ids starting with the reference as given or in lower case (flow's ids are
            // lower-case hex; `LIKE` matched `6A3F` too) are two ranges of the primary key's
            // index: `LIKE` alone, which no index serves, read every run of the journal.
            let lower = reference.lowercased()
            return try db.values("""
                SELECT id FROM runs WHERE ((id >= ? AND id < ?) OR (id >= ? AND id < ?))
                    AND (id = ? OR id LIKE ? ESCAPE '\\') ORDER BY started_at DESC
                """, [reference, reference + Self.pastPrefix, lower, lower + Self.pastPrefix,
                      reference, reference.replacing("%", with: "\\%").replacing("_", with: "\\_") + "%"])
        }
        if ids.contains(reference) { return reference }
        switch ids.count {
        case 0:
            if reference == "last" { throw JournalError("no runs recorded in \(stateDir)/ yet") }
            // `flow show lsat`: ids are hexadecimal, so a word near `last` is a typo of it.
            if Suggestion.closest(to: reference, in: ["last"]) != nil {
                throw JournalError("no run `\(reference)` in \(stateDir)/ (did you mean `last`?)")
            }
            throw JournalError("no run `\(reference)` in \(stateDir)/ (see `flow runs`)")
        case 1: return ids[0]
        default:
            throw JournalError("`\(reference)` matches \(ids.count) runs (\(ids.prefix(5).joined(separator: ", "))); give more of the id")
        }
    }

    /// The runs that carried run `id` on (its resumes and undos), newest first, with their
    /// step counts.
    ///
    /// `resume` and `undo` ask this of the run they act on. They used to read the whole
    /// history (`runs(limit: nil)`, every run's step counts included) and keep the few
    /// whose parent is `id`: with 50,000 runs recorded, a resume spent seconds, and memory
    /// for every run, before it ran anything (see `JournalSchema.runsParentIndex`).
    public func laterRuns(of id: String) throws(JournalError) -> [RunRecord] {
        let rows: [SQLiteRow] = try read { db in
            try db.rows("SELECT \(runColumns) FROM runs WHERE parent_id = ? ORDER BY started_at DESC, rowid DESC", [id])
        }
        var records = try runRecords(rows)
        try fillCounts(&records, onlyThese: true)
        return records
    }

    /// Appended to a prefix, the end of the range of the texts that start with it (in
    /// SQLite's binary order, no character comes after U+10FFFF).
    static let pastPrefix = "\u{10FFFF}"

    /// Runs, newest first, with their step counts.
    public func runs(limit: Int?) throws(JournalError) -> [RunRecord] {
        var records: [RunRecord] = []
        try forEachRun(limit: limit) { records.append($0) }
        return records
    }

    /// Runs, newest first, with their step counts, handed to `body` as they are read: a
    /// page (`listingPage` runs) at a time, so that `flow runs` of a history of any length
    /// holds one page, and prints its first rows before it has read the last.
    ///
    /// Each page is one snapshot, read after the page before it (keyed by where that one
    /// ended, so each is a range of `runs_started`): a run that starts meanwhile is newer
    /// than every page and is not listed, and one pruned meanwhile is not listed if its page
    /// comes later. Within a page, a run's state is derived as `runRecords` says.
    ///
    /// With `listing`, each record has only what `flow runs` shows (id, kind, parent, file,
    /// workflow, arguments, times, state, exit status, counts), read from the index
    /// `runs_listing` alone where the journal has it; its directory, host, process, content
    /// hash, step total and name bytes are left empty.
    public func forEachRun(limit: Int? = nil, listing: Bool = false, _ body: (RunRecord) -> Void) throws(JournalError) {
        var left = limit ?? Int.max
        var after: [SQLiteValue]?
        // The stored counts come with each run (one lookup of `run_counts`' key a run).
        let lean = listing && hasListingIndex
        let columns = (lean ? Self.listingColumns : runColumns)
            + (hasRunCounts ? ", c.counts AS stored_counts, c.allowed AS stored_allowed" : "")
        // Named: SQLite's planner takes `runs_started`, which gives `rowid DESC` without a
        // sort, and reads the rows; this index sorts only runs that started at the same time.
        let counted = (lean ? " INDEXED BY runs_listing" : "") + (hasRunCounts ? " LEFT JOIN run_counts c ON c.run_id = runs.id" : "")
        // Most runs of a history share their arguments and their counts (the same workflow,
        // run the same way, ending the same way): each distinct text is decoded once, not
        // once a run (a listing's largest cost after reading the rows).
        var decodedArguments: [String: RunArguments?] = [:], parsedCounts: [String: [String: Int]] = [:]
        func arguments(_ text: String) -> RunArguments? {
            if let known = decodedArguments[text] { return known }
            if decodedArguments.count >= Self.listingPage { decodedArguments = [:] }
            let decoded = RunArguments.decode(text)
            decodedArguments[text] = decoded
            return decoded
        }
        func counts(_ text: String) -> [String: Int] {
            if let known = parsedCounts[text] { return known }
            if parsedCounts.count >= Self.listingPage { parsedCounts = [:] }
            let parsed = Self.parseCounts(text)
            parsedCounts[text] = parsed
            return parsed
        }
        while left > 0 {
            let page = min(left, Self.listingPage)
            let rows: [SQLiteRow] = try read { db in
                var sql = "SELECT \(columns), runs.rowid AS listing_rowid FROM runs\(counted)"
                // A row value: `started_at` and `rowid` compared as `ORDER BY` orders them,
                // whatever the type a damaged row's `started_at` has.
                if after != nil { sql += " WHERE (runs.started_at, runs.rowid) < (?, ?)" }
                sql += " ORDER BY runs.started_at DESC, runs.rowid DESC LIMIT \(page)"
                return try db.rows(sql, (after ?? []).map { $0 as any SQLiteBindable })
            }
            guard let last = rows.last else { return }
            var records = try runRecords(rows, arguments: arguments)
            var stored: [String: Counts] = [:]
            for row in rows {
                guard let id: String = row["id"], let text: String = row["stored_counts"] else { continue }
                stored[id] = (counts(text), counts(row["stored_allowed"] ?? ""))
            }
            try fillCounts(&records, onlyThese: true, stored: stored)
            for record in records { body(record) }
            left -= rows.count
            guard rows.count == page, let started = last.columns["started_at"] else { return }
            after = [last.values[started], .int(last["listing_rowid"] ?? 0)]
        }
    }

    /// The columns of `runs_listing` (`JournalSchema.runsListingIndex`).
    static let listingColumns = "id, kind, parent_id, workflow_path, workflow_name, args, started_at, ended_at, state, exit_status"

    /// How many runs `forEachRun` reads at a time: few enough that a page's step counts
    /// are looked up by id (`countsByIDLimit`), and a page's records are little memory.
    static let listingPage = 256

    /// The most runs whose steps `fillCounts` names one by one. More (`runs --limit 40000`)
    /// are counted over the whole journal, as before: each id is a bound parameter, bound
    /// one scope inside the other (`SQLiteConnection.binding`), and thousands of them
    /// overflowed the stack (and SQLite allows 32,766 at most), where the page is most of
    /// the journal anyway.
    static let countsByIDLimit = 500

    /// Sets the step counts of `records`: a finished run's are those `run_counts` took at its
    /// end, else counted from its `steps` rows (a journal without the table, a row another
    /// tool wrote); an unfinished run's are counted from its transitions. With `onlyThese`,
    /// the query reads only their steps: `flow show` and a TAB asked for one run or a page
    /// of them, and counting every run's steps made them as slow as the whole journal is
    /// large.
    /// `stored`: the counts `run_counts` holds, read with the runs (nil: looked up here).
    func fillCounts(_ records: inout [RunRecord], onlyThese: Bool, stored: [String: Counts]? = nil) throws(JournalError) {
        guard !records.isEmpty else { return }
        var summaries: [String: Counts]
        if let stored { summaries = stored } else { summaries = try storedCounts(of: records.filter { !$0.isUnfinished }.map(\.id)) }
        let uncounted = records.filter { !$0.isUnfinished && summaries[$0.id] == nil }.map(\.id)
        if !uncounted.isEmpty {
            for (id, counts) in try countsFromSteps(of: uncounted, onlyThese: onlyThese) { summaries[id] = counts }
        }
        for i in records.indices {
            if records[i].isUnfinished {
                // Its `steps` rows were never brought up to date: count from its transitions.
                var counts: [String: Int] = [:], allowed: [String: Int] = [:]
                let steps = try steps(records[i].id)
                let interrupted = records[i].state == RunRecord.interrupted
                let undoneGroups = Self.undoneGroupPrefixes(steps)
                for step in steps where Self.isCountedAlone(step, among: steps, interrupted: interrupted) {
                    let state = Self.countedState(step.shown(inRun: records[i].state).state, of: step, undoneGroups: undoneGroups)
                    counts[state, default: 0] += 1
                    if step.allowedFailure { allowed[state, default: 0] += 1 }
                }
                records[i].counts = counts
                records[i].allowedFailures = allowed
            } else {
                records[i].counts = summaries[records[i].id]?.counts ?? [:]
                records[i].allowedFailures = summaries[records[i].id]?.allowed ?? [:]
            }
            // An undo counts what it reversed or tried, not the steps it left alone (its only
            // skips, `not undone by this run`), as its summary does: also for an undo a flow
            // from before 2026-11-27 recorded (its `run_counts` has them), one killed (counted
            // from its transitions) and a journal without `run_counts`.
            if records[i].kind == "undo" { records[i].counts["skipped"] = nil }
        }
    }

    /// Step counts per state, and allowed failures per state.
    typealias Counts = (counts: [String: Int], allowed: [String: Int])

    /// The counts `run_counts` holds for the finished runs `ids` (those it has).
    private func storedCounts(of ids: [String]) throws(JournalError) -> [String: Counts] {
        guard hasRunCounts, !ids.isEmpty else { return [:] }
        let wanted = Set(ids)
        let rows: [SQLiteRow] = try read { db in
            // Past the bound-parameter limit, the whole table: one short row a run.
            guard ids.count <= Self.countsByIDLimit else { return try db.rows("SELECT run_id, counts, allowed FROM run_counts") }
            return try db.rows("SELECT run_id, counts, allowed FROM run_counts WHERE run_id IN ("
                               + ids.map { _ in "?" }.joined(separator: ", ") + ")", ids)
        }
        var found: [String: Counts] = [:]
        for row in rows {
            guard let id: String = row["run_id"], wanted.contains(id) else { continue }
            found[id] = (Self.parseCounts(row["counts"] ?? ""), Self.parseCounts(row["allowed"] ?? ""))
        }
        return found
    }

    /// `succeeded 100,failed 1` (`JournalSchema.runCounts`) as a dictionary; a pair that
    /// does not read as one (a row edited by hand) is left out.
    static func parseCounts(_ text: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for pair in text.split(separator: ",") {
            guard let space = pair.lastIndex(of: " "), let n = Int(pair[pair.index(after: space)...]) else { continue }
            counts[String(pair[..<space]), default: 0] += n
        }
        return counts
    }

    /// The counts of the finished runs `ids`, from their `steps` rows. With `onlyThese` (and
    /// few enough ids), only their steps are read; otherwise every run's.
    func countsFromSteps(of ids: [String], onlyThese: Bool) throws(JournalError) -> [String: Counts] {
        let onlyThese = onlyThese && ids.count <= Self.countsByIDLimit
        let filter = onlyThese ? "run_id IN (" + ids.map { _ in "?" }.joined(separator: ", ") + ") AND" : ""
        let query = Self.countsQuery(filter, allowedFailures: hasAllowedFailures)
        let arguments: [any SQLiteBindable] = onlyThese ? ids + ids : []
        let rows: [SQLiteRow] = try read { db in try db.rows(query, arguments) }
        var found: [String: Counts] = [:]
        for row in rows {
            let id: String = row["run_id"] ?? "", state: String = row["counted"] ?? ""
            found[id, default: ([:], [:])].counts[state] = row["n"]
            if let allowed: Int = row["allowed"], allowed > 0 { found[id, default: ([:], [:])].allowed[state] = allowed }
        }
        return found
    }

    /// The query of `countsFromSteps`: `run_id`, `counted` (the state), `n` and `allowed` of
    /// the runs `filter` (SQL ending in `AND`, each run's id bound twice, or empty) selects.
    /// `allowedFailures`: whether the journal has `steps.allowed_failure`.
    static func countsQuery(_ filter: String, allowedFailures: Bool) -> String {
        "WITH " + JournalSchema.undoneGroups(filter) + ", "
            + JournalSchema.countedSteps(filter, allowed: allowedFailures ? "s.allowed_failure" : "NULL")
            + " SELECT run_id, counted, COUNT(*) AS n, COUNT(allowed_failure) AS allowed FROM counted_steps GROUP BY run_id, counted"
    }

    /// The paths, each with its `.`, of the groups in `steps` whose `undo` ran: a step that
    /// succeeded inside one is counted `undone` (`RunState.recount`, `JournalSchema.storeRunCounts`).
    static func undoneGroupPrefixes(_ steps: [StepRecord]) -> [String] {
        steps.filter { !isLeaf($0) && $0.state == "undone" && !$0.path.contains("u") }.map { $0.path + "." }
    }

    /// The state a counted `step` is counted in, `state` being the one shown: `undone` for a
    /// leaf that succeeded inside one of `undoneGroups` (`undoneGroupPrefixes`), whose undo
    /// reversed it (`JournalSchema.countedState`, `RunState.recount`).
    static func countedState(_ state: String, of step: StepRecord, undoneGroups: [String]) -> String {
        state == "succeeded" && isLeaf(step) && undoneGroups.contains(where: step.path.hasPrefix) ? "undone" : state
    }

    /// Whether `step` is a leaf (`print`, `delay`, `shell`), not a group.
    static func isLeaf(_ step: StepRecord) -> Bool { ["print", "delay", "shell"].contains(step.kind) }

    /// Whether the run's summary counts `step` (the rule of `fillCounts`' query): a leaf, a
    /// group its own timeout ended, a group whose undo failed, or a group that failed with
    /// nothing inside it having run. Undo steps aside. In a run whose process died
    /// (`interrupted`), a group whose undo was cut short (`undoing`, shown
    /// `undo_interrupted`) too: its rollback was left incomplete, as one that failed, and a
    /// second signal records it `undo_failed`, which is counted (`runs` said `1 succeeded, 1
    /// failed` of a run whose show had the group `undo_interrupted`).
    static func isCountedAlone(_ step: StepRecord, among steps: [StepRecord], interrupted: Bool = false) -> Bool {
        guard !step.path.contains("u") else { return false }
        if isLeaf(step) || ["timed_out", "undo_failed"].contains(step.state) { return true }
        if interrupted, step.state == "undoing" { return true }
        guard step.state == "failed" else { return false }
        let inside = step.path + "."
        return !steps.contains { $0.path.hasPrefix(inside) && !["skipped", "pending"].contains($0.state) }
    }

    /// One run, with its stored workflow content.
    public func run(_ id: String) throws(JournalError) -> RunRecord {
        let found: SQLiteRow? = try read { db in
            try db.rows("SELECT \(runColumns), content FROM runs WHERE id = ?", [id]).first
        }
        guard let row = found else { throw JournalError("no run `\(id)`") }
        var records = try runRecords([row], content: { $0["content"] ?? [] })
        try fillCounts(&records, onlyThese: true)
        return records[0]
    }

    /// A run's steps in plan order, with their state (see `StepLedger` for a run that never
    /// finished: live, or killed) and outputs.
    public func steps(_ runID: String) throws(JournalError) -> [StepRecord] {
        // A live run's transitions not yet committed are in its lock file. Read before the
        // database: the recorder commits before it empties the file, so whatever this read
        // misses, the database read that follows has.
        let uncommitted = RunLock.records(stateDir: stateDir, runID: runID)
        // A journal this user could not migrate has no `allowed_failure` (see `hasAllowedFailures`).
        let allowedColumn = hasAllowedFailures ? "allowed_failure" : "NULL"
        return try read { db in
            // The signal that ended the step's latest attempt is that attempt's (`steps` has none).
            let rows = try db.rows("""
                SELECT s.path AS path, s.position AS position, s.depth AS depth, s.name AS name, s.kind AS kind,
                       s.label AS label, s.state AS state, s.attempts AS attempts, s.exit_code AS exit_code,
                       s.started_at AS started_at, s.ended_at AS ended_at, s.completed_seq AS completed_seq, a.signal AS signal,
                       \(hasAllowedFailures ? "s.allowed_failure" : "NULL") AS allowed_failure
                FROM steps s LEFT JOIN attempts a ON a.run_id = s.run_id AND a.path = s.path AND a.number = s.attempts
                WHERE s.run_id = ? ORDER BY s.position
                """, [runID])
            // A step's row shows its latest instance's outputs: those of its latest `seq` (v6
            // keeps every instance's; rows from before it have 0, one set per step). In a run
            // recorded per instance, rows with 0 are the latest: a flow from before v6 wrote
            // them when it folded in the run's lock file, after the run had died, so after
            // everything the run itself committed (read as the earliest, `show` and `resume`
            // took an earlier attempt's outputs for the step's).
            var outputs: [String: (seq: Int, values: [String: String])] = [:]
            let seqColumn = hasInstanceOutputs ? "seq" : "0"
            let perInstance: Int? = hasInstanceOutputs ? try db.value("SELECT instance_outputs FROM runs WHERE id = ?", [runID]) : nil
            for row in try db.rows("SELECT path, \(seqColumn) AS seq, key, value FROM outputs WHERE run_id = ?", [runID]) {
                let path: String = row["path"] ?? "", recorded: Int = row["seq"] ?? 0
                let seq = recorded == 0 && perInstance == 1 ? Int.max : recorded
                if let held = outputs[path], held.seq > seq { continue }
                if outputs[path]?.seq != seq { outputs[path] = (seq, [:]) }
                outputs[path]?.values[row["key"] ?? ""] = row["value"]
            }
            var records = StepRecord.markingSharedNames(Self.plausibleDepths(rows.map { row in
                let path: String = row["path"] ?? ""
                return StepRecord(path: path, position: row["position"] ?? 0, depth: row["depth"] ?? 0, name: row["name"],
                                  kind: row["kind"] ?? "", summary: row["label"] ?? "", state: row["state"] ?? "",
                                  attempts: row["attempts"] ?? 0, exitCode: Self.plausibleCode(row["exit_code"]),
                                  startedAt: Self.plausibleTime(row["started_at"]), endedAt: Self.plausibleTime(row["ended_at"]),
                                  completedSeq: row["completed_seq"], signal: Self.plausibleCode(row["signal"]),
                                  allowedFailure: (row["allowed_failure"] as Int?) == 1, outputs: outputs[path]?.values ?? [:])
            }))
            let state: String? = try db.value("SELECT state FROM runs WHERE id = ?", [runID])
            guard state == "running" else { return Self.withoutEarlierInstancesOutputs(records) }
            var ledger = StepLedger()
            let transitions = try db.rows("""
                SELECT path, to_state, attempt, time, exit_code, signal, seq, \(allowedColumn) FROM transitions
                WHERE run_id = ? ORDER BY seq
                """, [runID])
            var next = 1
            for row in transitions {
                ledger.apply(path: row[0] ?? "", to: row[1] ?? "", attempt: row[2] ?? 0, time: Self.plausibleTime(row[3]) ?? 0,
                             exitCode: Self.plausibleCode(row[4]), signal: Self.plausibleCode(row[5]), allowedFailure: (row[7] as Int?) == 1)
                next = (row[6] ?? 0) + 1
            }
            for record in uncommitted where record.seq >= next {
                guard record.seq == next else { break }
                ledger.apply(path: record.path, to: record.to, attempt: record.attempt, time: record.time, exitCode: record.exitCode,
                             signal: record.signal, allowedFailure: record.allowedFailure)
                // A later instance's outputs replace the earlier one's, as in the database.
                if !record.outputs.isEmpty, let i = records.firstIndex(where: { $0.path == record.path }) {
                    records[i].outputs = Dictionary(record.outputs.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
                }
                next += 1
            }
            for i in records.indices {
                guard let entry = ledger.entries[records[i].path] else { continue }
                records[i].state = entry.state
                records[i].attempts = entry.attempts
                records[i].exitCode = entry.exitCode
                records[i].signal = entry.signal
                records[i].startedAt = entry.startedAt
                records[i].endedAt = entry.endedAt
                records[i].completedSeq = entry.completedSeq
                records[i].allowedFailure = entry.allowedFailure == true
            }
            return Self.withoutEarlierInstancesOutputs(records)
        }
    }

    /// Outputs are recorded when a step succeeds, and kept by path. A retried group runs
    /// its steps again as new instances: a step whose latest instance failed or was skipped
    /// has no outputs (`steps.<name>.outputs.*` is empty after it), but its row kept the
    /// ones an earlier attempt wrote, which `show` listed and `flow undo` handed to undo steps.
    static func withoutEarlierInstancesOutputs(_ records: [StepRecord]) -> [StepRecord] {
        let hasOutputs: Set<String> = ["succeeded", "undoing", "undone", "undo_failed"]
        return records.map { record in
            var record = record
            if !hasOutputs.contains(record.state) { record.outputs = [:] }
            return record
        }
    }

    /// The steps of run `runID` (a resume) taken from an earlier run rather than run, by
    /// path: the run their result came from, as their `reused from run <id>` transition
    /// says (a live run's not yet committed ones too). The `steps` row of such a step has
    /// the earlier exit code and an instant's duration, which read as a run of it.
    ///
    /// A step's latest instance decides: in a retried group the resume reused a result in
    /// the first attempt and ran the step again in a later one, whose result is the run's
    /// own (read as reused, `show` named the earlier run and `flow undo` reversed the step
    /// as completed then).
    public func reusedSources(_ runID: String) throws(JournalError) -> [String: String] {
        let prefix = StepTransition.reusedReason(from: "")
        var sources: [String: String] = [:]
        for (path, reason) in try reasons(runID, startingWith: prefix) { sources[path] = String(reason.dropFirst(prefix.count)) }
        guard !sources.isEmpty else { return sources }
        // An instance that is not a reuse after one (run, or skipped, in a later attempt of
        // its retried group): the step's result is this run's after all.
        var order: [(seq: Int, path: String, reused: Bool)] = []
        let rows = try read { db in
            try db.rows("""
                SELECT seq, path, reason FROM transitions
                WHERE run_id = ? AND from_state = 'pending' ORDER BY seq
                """, [runID])
        }
        for row in rows {
            let reason: String? = row["reason"]
            order.append((row["seq"] ?? 0, row["path"] ?? "", reason?.hasPrefix(prefix) == true))
        }
        for record in RunLock.records(stateDir: stateDir, runID: runID) where record.from == "pending" {
            order.append((record.seq, record.path, record.reason?.hasPrefix(prefix) == true))
        }
        var ranSince: Set<String> = []  // paths whose latest instance is not a reuse
        for start in order.sorted(by: { $0.seq < $1.seq }) where sources[start.path] != nil {
            if start.reused { ranSince.remove(start.path) } else { ranSince.insert(start.path) }
        }
        for path in ranSince { sources[path] = nil }
        return sources
    }

    /// The steps of run `runID` that `--only`, `--tags` or `--skip-tags` left out (their
    /// `not selected` transition; the steps inside them and their undo steps are left out
    /// with them). `flow logs` pads labels as the live output did, which counted only the
    /// selected steps.
    public func unselectedPaths(_ runID: String) throws(JournalError) -> Set<String> {
        Set(try reasons(runID, startingWith: StepTransition.notSelectedReason).map(\.path))
    }

    /// The transitions of run `runID` whose reason starts with `prefix`, in order, as
    /// (path, reason): the database's and a live run's not yet committed ones.
    private func reasons(_ runID: String, startingWith prefix: String) throws(JournalError) -> [(path: String, reason: String)] {
        var found: [(path: String, reason: String)] = []
        let rows = try read { db in
            // `reason` is set on few transitions: the run's own, keyed by run first, are scanned.
            try db.rows("SELECT path, reason FROM transitions WHERE run_id = ? AND reason LIKE ? ORDER BY seq",
                        [runID, prefix + "%"])
        }
        for row in rows {
            let reason: String = row["reason"] ?? ""
            if reason.hasPrefix(prefix) { found.append((row["path"] ?? "", reason)) }
        }
        for record in RunLock.records(stateDir: stateDir, runID: runID) {
            if let reason = record.reason, reason.hasPrefix(prefix) { found.append((record.path, reason)) }
        }
        return found
    }

    /// The run that ran each step of `holders` (path → the run whose record holds its
    /// result): that run itself, or where it took the result from an earlier run (its
    /// `reused from run` transition), that run's, followed back through the chain. A resume
    /// of a resume holds results the resume in between only reused, or never reached
    /// (`StepRecord.origin`), and says where they come from by the run that ran them; a
    /// resume recorded before it did named the run it resumed, which this reads past too.
    public func producers(_ holders: [String: String]) throws(JournalError) -> [String: String] {
        var sources: [String: [String: String]] = [:]
        var result: [String: String] = [:]
        for (path, holder) in holders {
            var run = holder
            // `seen` only guards against a damaged journal whose reuses loop.
            var seen: Set<String> = [run]
            while true {
                if sources[run] == nil { sources[run] = try reusedSources(run) }
                guard let earlier = sources[run]?[path], seen.insert(earlier).inserted else { break }
                run = earlier
            }
            result[path] = run
        }
        return result
    }

    /// The output of a run (or of one step and the steps inside it) after row `after`, one
    /// row at a time, oldest first: `body` gets each row's lines (see `LineRecord`) while the
    /// next are still unread, so a log of any size takes memory for one row (~1 MiB) and
    /// the rows' metadata (a journal from before v3 held the lines in the rows themselves).
    /// Returns the last row's id (`after` when there were none).
    @discardableResult
    public func forEachLines(_ runID: String, path: String?, after: Int64 = 0,
                             _ body: (LineRecord) -> Void) throws(JournalError) -> Int64 {
        let file = RunOutputFile(path: outputPath(runID))
        return try read { db in
            var sql = "SELECT id, path, stream, time, line, file_offset, file_length FROM output_lines WHERE run_id = ? AND id > ?"
            var arguments: [any SQLiteBindable] = [runID, after]
            if let path {
                sql += " AND (path = ? OR path LIKE ?)"
                arguments += [path, path + ".%"]
            }
            sql += " ORDER BY id"
            var last = after
            // A row holds one or more consecutive lines, each ending in a newline (rows of
            // v1 journals: newline-separated, without the last one).
            for row in try db.rows(sql, arguments) {
                var bytes: [UInt8]
                if let offset = row["file_offset"] as Int64?, let length = row["file_length"] as Int? {
                    bytes = try file.read(offset: offset, length: length)
                } else {
                    bytes = row["line"] ?? []  // a row from before v3
                }
                if bytes.last == 0x0A { bytes.removeLast() }
                last = row["id"] ?? last
                body(LineRecord(id: last, path: row["path"] ?? "", stream: row["stream"] ?? "", time: row["time"] ?? 0,
                                bytes: bytes))
            }
            return last
        }
    }

    /// Whether the journal still has run `runID` (a `--prune` may have deleted it since it
    /// was named).
    public func contains(_ runID: String) throws(JournalError) -> Bool {
        let found: Int? = try read { db in try db.value("SELECT 1 FROM runs WHERE id = ?", [runID]) }
        return found != nil
    }

    /// Whether the run is still being written by a live process.
    public func isLive(_ runID: String) throws(JournalError) -> Bool {
        let state: String? = try read { db in try db.value("SELECT state FROM runs WHERE id = ?", [runID]) }
        return state == "running" && RunLock.isHeld(stateDir: stateDir, runID: runID)
    }

    /// Deletes all but the newest `keep` runs, and runs that started before `before`
    /// (never a live one, nor one a `resume` or `undo` has claimed). Returns how many were
    /// deleted.
    ///
    /// A run is deleted only under its claim (`RunClaim`), the one a `resume` or `undo` takes
    /// before it reads the run and holds until it exits: a prune beside `flow resume X` left
    /// the resume carrying on a run the journal no longer had (found by the concurrency
    /// audit), and one between the resume's reading of X and its run would have had it run
    /// every step again. A claim held elsewhere keeps its run; while one is taken here, a
    /// `resume` or `undo` of the run is refused as beside another one, and after it finds
    /// no run (it reads the run again once it has the claim).
    ///
    /// `progress` is told, before the first batch of deletions and after each, how many of
    /// the runs chosen have been dealt with and how many were chosen.
    ///
    /// A run a kept `resume` carries on is kept too, and so on up its chain (`spared` is told
    /// how many were kept so): the steps a resume never got to (it was killed, or stopped
    /// before them) are read from the run it resumed, and a resume left without it ran
    /// them again, and `flow undo` of it could not reverse them.
    public func prune(keep: Int?, before: Double?,
                      progress: (_ done: Int, _ total: Int) -> Void = { _, _ in },
                      spared: (Int) -> Void = { _ in }) throws(JournalError) -> Int {
        // Only what the choice needs: reading every run as `flow runs` does (its step counts
        // too) took most of a prune's time on a long history, and memory for every run.
        let all: [(id: String, state: String?, startedAt: Double, resumes: String?)] = try read { db in
            try db.rows("SELECT id, state, started_at, kind, parent_id FROM runs ORDER BY started_at DESC, rowid DESC").map { row in
                let kind: String? = row["kind"]
                return (row["id"] ?? "", row["state"], Self.plausibleTime(row["started_at"]) ?? 0, kind == "resume" ? row["parent_id"] : nil)
            }
        }
        var doomed: [String] = []
        // A live run is one recorded `running` whose lock is held; a `running` row whose
        // lock nobody holds is of a run that died (`interrupted`), or that ended since the
        // read: either may go.
        for (index, run) in all.enumerated() where !(run.state == "running" && RunLock.isHeld(stateDir: stateDir, runID: run.id)) {
            if let keep, index >= keep { doomed.append(run.id); continue }
            if let before, run.startedAt < before { doomed.append(run.id) }
        }
        if !doomed.isEmpty {
            var going = Set(doomed)
            let resumed = Dictionary(all.compactMap { run in run.resumes.map { (run.id, $0) } }, uniquingKeysWith: { a, _ in a })
            var saved = 0
            for run in all where !going.contains(run.id) {
                // Up the chain of a kept resume: a run it resumed is kept, and what that one resumed.
                var next = resumed[run.id]
                while let parent = next, going.remove(parent) != nil {
                    saved += 1
                    next = resumed[parent]
                }
            }
            if saved > 0 {
                doomed.removeAll { !going.contains($0) }
                spared(saved)
            }
        }
        var deleted = 0
        // In batches: a claim is an open file, and a prune of thousands of runs would run
        // out of them.
        var start = doomed.startIndex
        if !doomed.isEmpty { progress(0, doomed.count) }
        while start < doomed.endIndex {
            let batch = doomed[start..<min(start + Self.pruneBatch, doomed.endIndex)]
            start = batch.endIndex
            var claims: [(id: String, claim: RunClaim?)] = []
            for id in batch {
                switch RunClaim.take(stateDir: stateDir, runID: id) {
                case .taken(let claim): claims.append((id, claim))
                case .held: continue  // being resumed or undone now
                case .unavailable: claims.append((id, nil))  // nothing to coordinate through
                }
            }
            defer { for entry in claims { entry.claim?.release(stateDir: stateDir, runID: entry.id) } }
            try delete(claims.map(\.id))
            deleted += claims.count
            progress(start, doomed.count)
        }
        if deleted > 0, hasRunCounts {
            // The counts of runs a flow from before `run_counts` pruned (it deletes the tables
            // it knows): a run's counts are written after its row, so one without a row is
            // of a run that is gone.
            try write { db in try db.execute("DELETE FROM run_counts WHERE run_id NOT IN (SELECT id FROM runs)") }
        }
        return deleted
    }

    static let pruneBatch = 256

    /// Gives the space of deleted runs back to the file system (`VACUUM`) when at least
    /// half of the database's pages are free; returns whether it did.
    ///
    /// SQLite keeps a deleted row's pages in the file for later rows: a journal of 50,000
    /// runs pruned to 100 stayed 2.3 GB on disk, which is not what `--prune` is run for. A
    /// `VACUUM` rewrites what is kept, holding the write lock meanwhile (other `flow`s wait
    /// for it, up to the 10 s busy timeout): with half the file or more free, what is kept,
    /// and so that time, is at most what the prune deleted. A smaller prune leaves its pages
    /// to the runs that follow. The checkpoint after it shrinks `journal.sqlite` (in WAL mode
    /// the rewritten pages are in `journal.sqlite-wal` until then) and empties the WAL.
    /// `starting` is called when it does, before the rewrite.
    public func compactIfMostlyFree(starting: () -> Void = {}) throws(JournalError) -> Bool {
        let (pages, free): (Int?, Int?) = try read { db in
            (try db.value("PRAGMA page_count"), try db.value("PRAGMA freelist_count"))
        }
        guard let pages, let free, free > 0, free * 2 >= pages else { return false }
        starting()
        try access { db in
            try db.execute("VACUUM")
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        return true
    }

    /// Deletes the rows and output files of `doomed`.
    private func delete(_ doomed: [String]) throws(JournalError) {
        guard !doomed.isEmpty else { return }
        func deleteRows() throws(JournalError) {
            try write { db in
                // Foreign keys are declared but not enforced (see `Journal.open`): delete the
                // children ourselves, in the same transaction.
                for id in doomed {
                    for table in ["output_lines", "outputs", "transitions", "attempts", "steps", "runs"] + (hasRunCounts ? ["run_counts"] : []) {
                        try db.execute("DELETE FROM \(table) WHERE \(table == "runs" ? "id" : "run_id") = ?", [id])
                    }
                }
            }
        }
        do {
            try deleteRows()
        } catch where error.diskFull {
            // Deleting rows writes pages to the WAL first, and a full disk (most often filled
            // by these runs' output) has no room for them: `--prune`, the way to free space,
            // failed for want of it. These runs are going: their files go first this once,
            // and the rows after; should that fail too, their rows stay, their output gone,
            // which `flow logs` names.
            for id in doomed { unlink(outputPath(id)) }
            try deleteRows()
        }
        // After the rows: a crash in between leaves a file nothing points to, never a row
        // pointing nowhere.
        for id in doomed { unlink(outputPath(id)) }
        // The lock file of a run killed after this `flow` folded dead runs in, and before it
        // read them: nobody holds it (the run read `interrupted`), and once the run's rows are
        // gone no `flow` would take it (`recover` leaves the file of a run it does not have),
        // so it stayed for good (found by the concurrency audit).
        for id in doomed { unlink(RunLock.path(stateDir: stateDir, runID: id)) }
    }
}
