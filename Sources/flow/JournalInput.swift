#if canImport(Glibc)
import Glibc
#endif
import FlowJournal
import FlowKit

/// Opening the journal for the history commands; problems are usage errors (exit 2).
enum JournalInput {
    /// With `readOnly` (runs, show, logs), a journal this user cannot write is read as it is.
    static func open(_ options: JournalOptions, readOnly: Bool = false) throws -> Journal {
        do {
            return try Journal.open(stateDir: Journal.stateDir(option: options.stateDir), create: false, readOnly: readOnly)
        } catch {
            Console.stderr("error: \(error.description)\n")
            throw ExitCode(2)
        }
    }

    /// Runs `body`, turning journal errors into a message and exit status 2.
    static func attempt<T>(_ body: () throws(JournalError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            Console.stderr("error: \(error.description)\n")
            throw ExitCode(2)
        }
    }

    /// Opens the journal and finds the run `reference` names (id, prefix or `last`).
    static func run(_ options: JournalOptions, _ reference: String, readOnly: Bool = false) throws -> (Journal, RunRecord) {
        let journal = try open(options, readOnly: readOnly)
        let record = try attempt { () throws(JournalError) in try journal.run(try journal.resolve(reference)) }
        return (journal, record)
    }

    /// Whether the run with id `id` is in the journal (`runs --prune` may have deleted the
    /// run an undo undid); false too when the journal cannot say.
    static func holds(_ journal: Journal, _ id: String) -> Bool {
        (try? journal.resolve(id)) == id
    }

    /// Takes `run` for this `resume` or `undo` until flow exits (see `RunClaim`), and reads
    /// it again; exit 2 if another `flow` is resuming, undoing or pruning it now. Call before
    /// deciding anything from the run's history, so the decision sees what the other one
    /// did: the record read before the claim may be of a run another `resume` has just
    /// carried on, or that a `--prune` has deleted since (the resume then ran every step
    /// again, as the resume of a run with none recorded).
    static func claim(_ journal: Journal, _ run: RunRecord) throws -> RunRecord {
        switch RunClaim.take(stateDir: journal.stateDir, runID: run.id) {
        case .held:
            Console.stderr("error: run \(run.id) is being resumed, undone or pruned by another flow now; try again once that ends\n")
            throw ExitCode(2)
        case .taken(let claim):
            claim.holdUntilExit(stateDir: journal.stateDir, runID: run.id)
        case .unavailable:
            break
        }
        return try attempt { () throws(JournalError) in try journal.run(try journal.resolve(run.id)) }
    }

    /// The runs that carried run `id` on, newest first: its resumes and its undos. A run is
    /// one history with them: `resume` and `undo` act on its latest state, not on the
    /// run's own record alone (a step an undo reversed is not reused; a resumed run is
    /// undone or resumed through its resume, which carries its succeeded steps on).
    static func laterRuns(of id: String, in journal: Journal) throws -> (resumes: [RunRecord], undos: [RunRecord]) {
        let later = try attempt { () throws(JournalError) in try journal.laterRuns(of: id) }
        return (later.filter { $0.kind == "resume" }, later.filter { $0.kind == "undo" })
    }

    /// Refuses (exit 2) to resume or undo a run whose recorded arguments cannot be read (a
    /// row edited by hand or by another tool): they were taken as none, and the steps ran
    /// with the defaults of `vars` and without the ACTION, `--with` or selection the run had.
    static func refuseIfArgumentsDamaged(_ record: RunRecord, command: String) throws {
        guard record.argsDamaged else { return }
        Console.stderr("error: the arguments recorded with run \(record.id) are damaged (its `args` in the journal is not "
                       + "what flow writes); \(command) would not run the same workflow\n")
        throw ExitCode(2)
    }

    /// Refuses (exit 2) to resume or undo run `id` once a resume carried it on: the resume
    /// holds its succeeded steps as its own, so acting on the old run as well would reverse
    /// them twice, or run again what the resume did. The run to act on is the last of the
    /// chain of resumes (a resume of the resume…), which the message names: naming the
    /// first only, it sent the user from refusal to refusal, one resume at a time.
    static func refuseIfResumed(_ id: String, by resumes: [RunRecord], command: String, in journal: Journal) throws {
        guard var resume = resumes.first else { return }
        var chain = [resume]
        // `seen` only guards against a damaged journal whose parents loop.
        var seen: Set<String> = [id, resume.id]
        while let next = try laterRuns(of: resume.id, in: journal).resumes.first, seen.insert(next.id).inserted {
            resume = next
            chain.append(next)
        }
        let through = "run \(id) was resumed as run \(chain[0].id)" + chain.dropFirst().map { ", then as run \($0.id)" }.joined()
        if command == "resume", resume.state == "succeeded" {
            Console.stderr("error: \(through), which succeeded; there is nothing left to resume\n")
            throw ExitCode(2)
        }
        let state = resume.state == "running" ? "still running" : resume.state
        Console.stderr("error: \(through) (\(state)), which carries its steps on; \(command) that run instead\n")
        Console.stderr("help: flow \(command) \(resume.id)\n")
        throw ExitCode(2)
    }

    /// The successes of run `id`'s steps that its earlier undos reached, by path and success
    /// (an undo reverses each instance of a retried group's step that succeeded): the state
    /// each ended in there (`undone`, `undo_failed`, or `undoing` when that undo was killed)
    /// and the undo run; where several did, the latest (`undos` is newest first): a
    /// `flow undo --force` whose undo step failed left the reversal in doubt, as a first undo
    /// that failed does, and the next `flow undo` (its hint's `to undo what is left`) runs
    /// it again. It was left alone, the earlier undo having reversed it, and the hint's
    /// command was refused (`already undone`).
    /// `successes`: how many successes each step had in run `id`. An undo that names no
    /// success reversed the step's latest: the step succeeded once, or the undo was recorded
    /// by a flow from before v6, which reverses one result per step, the latest (taken as
    /// success 1, a `flow undo` after it reversed that latest result again and never the
    /// earlier ones).
    static func reachedByUndos(_ undos: [RunRecord], successes: [String: Int], in journal: Journal) throws
        -> [Reversal: (state: String, by: String)]
    {
        var reached: [Reversal: (state: String, by: String)] = [:]
        for undo in undos {
            let reversals = try attempt { () throws(JournalError) in try journal.reversals(byUndo: undo.id) }
            for reversal in reversals {
                let key = Reversal(path: reversal.path, success: reversal.success ?? successes[reversal.path] ?? 1)
                if reached[key] == nil { reached[key] = (reversal.state, undo.id) }
            }
        }
        return reached
    }

    /// One success of a step in a run, which a `flow undo` of it reverses: its path and
    /// which of the step's successes it is (a retried group's step succeeds once per attempt).
    struct Reversal: Hashable {
        var path: String
        var success: Int

        init(path: String, success: Int) {
            self.path = path
            self.success = success
        }

        init(_ step: ReversedStep) {
            self.init(path: step.path, success: step.success)
        }
    }

    /// The results of the steps that succeeded in a recorded run, by path (what `resume`
    /// reuses and what `undo` steps see).
    static func succeededResults(_ steps: [StepRecord], leavesOnly: Bool) -> [String: StepResult] {
        var results: [String: StepResult] = [:]
        for step in steps where step.state == "succeeded" && (!leavesOnly || ["print", "delay", "shell"].contains(step.kind)) {
            results[step.path] = StepResult(state: .succeeded, exitCode: step.exitCode.map(Int32.init), outputs: step.outputs)
        }
        return results
    }

    /// The states of a step whose rollback was reached: reversed, failed to, or cut short.
    static let reversalStates: Set<String> = ["undone", "undo_failed", "undoing"]

    /// Removes from `results` every step inside one of `groups` (by path: `2.1` and `2.1.3`
    /// are inside `2`): a group's `undo` reverses its steps together, so none of them stands.
    static func dropSteps(inside groups: Set<String>, from results: inout [String: StepResult]) {
        guard !groups.isEmpty else { return }
        for path in Array(results.keys) {
            // Each enclosing path, nearest first: `2.1.3` → `2.1`, `2`.
            var enclosing = Substring(path)
            while let dot = enclosing.lastIndex(of: ".") {
                enclosing = enclosing[..<dot]
                if groups.contains(String(enclosing)) {
                    results[path] = nil
                    break
                }
            }
        }
    }

    /// How many steps `resume` will not run again: the reused leaves of `plan`, except those
    /// in `finally` blocks (every finally block runs again). Undo steps are not in
    /// `plan.steps`; a step that was undone is not among the results (its state is `undone`).
    static func reusedCount(_ reuse: [String: StepResult], plan: Plan) -> Int {
        plan.steps.filter { node in
            reuse[node.path] != nil && !node.isGroup && !node.path.split(separator: ".").contains { $0.hasPrefix("f") }
        }.count
    }

    /// The step `selector` names: a name, a label as output shows it (`shell@2.1`), or a
    /// path (`2.1`), tried in that order (a name such as `f1` wins over the path `f1`).
    static func step(_ selector: String, in steps: [StepRecord]) -> StepRecord? {
        steps.first { $0.name == selector } ?? steps.first { $0.label == selector } ?? steps.first { $0.path == selector }
    }

    /// `2026-11-21 22:31:47` in local time.
    static func localTime(_ unix: Double) -> String {
        var seconds = time_t(unix)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func pad(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.tm_year + 1900)-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday)) \(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec))"
    }

    static func stateSymbol(_ state: String) -> String {
        if let s = StepState(rawValue: state) { return s.symbol }
        return state == RunRecord.interrupted || state == "undo_interrupted" ? "⚡" : "·"
    }

    /// Loads and plans the workflow content a run recorded (or the current file), named
    /// `path` (`<stdin>` for one the run read from standard input: `standardInput`).
    /// `annotate`: a refusal's diagnostics are GitHub Actions commands too, as `flow run`
    /// writes them (`WorkflowInput.loadValid`): the file may have been edited since the run.
    /// A refusal (an invalid workflow, or recorded arguments that no longer fit it) is said
    /// as `flow run` says it, and reported to `junit` as `flow run` reports one.
    static func plan(content: [UInt8], path: String, standardInput: Bool, args: RunArguments, noColor: Bool,
                     annotate: Bool, junit: String?) throws -> (Workflow, Plan) {
        let options = args.planOptions
        let file = SourceFile(path: path, bytes: content, isStandardInput: standardInput)
        let loaded = LoadedWorkflow.load(file, overriddenVars: Set(options.vars.map(\.name)))
        do {
            let workflow = try WorkflowInput.accept(loaded, name: ControlEscaping.escaped(path), noColor: noColor,
                                                    running: true, annotate: annotate)
            return (workflow, try WorkflowInput.plan(workflow, options: options))
        } catch {
            WorkflowInput.reportRefusal(junit: junit, workflow: path)
            throw error
        }
    }

    /// The name of a run's workflow file as bytes, as seen from here (relative names are from
    /// the run's directory).
    static func workflowFile(_ run: RunRecord) -> [UInt8] {
        PathBytes.resolve(run.workflowPathName, from: run.cwdName)
    }
}
