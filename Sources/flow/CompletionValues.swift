#if canImport(Glibc)
import Glibc
#endif
import FlowCommandLine
import FlowJournal
import FlowKit

/// The values `flow --complete-values` lists for the completion scripts, one per line, a
/// tab before a description: the names `--only` takes and the tags `--tags` takes, from
/// the workflow file on the line; its actions; the recorded runs and a run's steps. Whatever goes wrong
/// (no file yet, an invalid workflow, no journal) lists nothing: a completion says nothing
/// on stderr, and changes nothing (the journal is read only, never made; see `Journal.peek`).
enum CompletionValues {
    /// The kinds `CompletionKind.dynamic` names in flow's commands.
    static let steps = CompletionKind.dynamic("steps")
    static let tags = CompletionKind.dynamic("tags")
    static let actions = CompletionKind.dynamic("actions")
    static let runs = CompletionKind.dynamic("runs")
    static let runSteps = CompletionKind.dynamic("run-steps")

    /// Runs listed at most, newest first: enough to pick from, and bounded for a journal of
    /// thousands.
    static let runLimit = 100

    /// The lines for `query` at the word `current`, given what was typed before it.
    static func lines(_ query: String, current: String, typed: ParsedArguments) -> [String] {
        switch query {
        case "steps":
            guard let workflow = workflow(typed) else { return [] }
            let action = typed.argument("action")
            let scope = SelectionNames.onlyScope(workflow, action: action)
            var descriptions: [String: String] = [:]
            Self.describe(scope) { name, description in descriptions[name] = descriptions[name] ?? description }
            return SelectionNames.onlyNames(workflow, action: action).map { line($0, descriptions[$0]) }
        case "tags":
            guard let workflow = workflow(typed) else { return [] }
            // `--tags a,b,c`: the tags before the last comma stay, and are not offered again.
            let head = current.lastIndex(of: ",").map { String(current[...$0]) } ?? ""
            let given = Set(SelectionOptions.list([head]))
            return SelectionNames.tags(workflow, action: typed.argument("action"))
                .filter { !given.contains($0) }.map { head + $0 }
        case "actions":
            guard let workflow = workflow(typed) else { return [] }
            return workflow.actions.map { line($0.name.value, $0.description?.value) }
        case "runs":
            return runs(stateDir: Journal.stateDir(option: typed.value("state-dir")))
        case "run-steps":
            guard let reference = typed.argument("run-id") else { return [] }
            return runSteps(reference, stateDir: Journal.stateDir(option: typed.value("state-dir")))
        default:
            return []
        }
    }

    /// The largest workflow file a TAB reads: 8 MiB is some 170,000 steps, read in under a
    /// second (release build); a larger one (the loader takes up to 64 MiB) would hold the
    /// shell longer than a completion may.
    static let fileLimit = 8 << 20

    /// The workflow of the line's FILE argument, when it is a regular file that parses (a
    /// FIFO or a device would block the shell; standard input is the terminal's) and is not
    /// larger than `fileLimit`. Its diagnostics do not matter here: an invalid workflow
    /// still has its names.
    private static func workflow(_ typed: ParsedArguments) -> Workflow? {
        guard let path = typed.argument("file"), path != "-" else { return nil }
        let bytes = RawArguments.bytes(of: path) ?? Array(path.utf8)
        var info = stat()
        let isRegular = (bytes + [0]).withUnsafeBufferPointer { name in
            name.baseAddress!.withMemoryRebound(to: CChar.self, capacity: name.count) { stat($0, &info) == 0 }
        } && (info.st_mode & S_IFMT) == S_IFREG
        guard isRegular, info.st_size <= Self.fileLimit else { return nil }
        return LoadedWorkflow.load(path: path, pathBytes: bytes).workflow
    }

    /// The journal's runs, newest first, after `last`: `ID\tstate · workflow · started`.
    private static func runs(stateDir: String) -> [String] {
        guard let journal = Journal.peek(stateDir: stateDir),
              let runs = try? journal.runs(limit: runLimit), !runs.isEmpty else { return [] }
        var lines = [line("last", "the newest run (\(runs[0].id))")]
        for run in runs {
            var workflow = run.workflowName
            if run.kind != "run" { workflow += " (\(run.kind) \(run.parentID ?? ""))" }
            lines.append(line(run.id, "\(run.state) · \(workflow) · \(JournalInput.localTime(run.startedAt))"))
        }
        return lines
    }

    /// The steps of run `reference` as `flow logs` takes them (their labels: the name, else
    /// `kind@path`), in the run's order: `LABEL\tstate · summary` (the summary when it is not the
    /// label: an unnamed step's command or message).
    private static func runSteps(_ reference: String, stateDir: String) -> [String] {
        guard let journal = Journal.peek(stateDir: stateDir),
              let id = try? journal.resolve(reference), let steps = try? journal.steps(id) else { return [] }
        return steps.map { step in
            line(step.label, step.summary == step.label ? step.state : "\(step.state) · \(step.summary)")
        }
    }

    /// Names with the step's `description`, where one is written.
    private static func describe(_ steps: [Step], _ body: (String, String?) -> Void) {
        for step in steps {
            if let name = step.name { body(name.value, step.description?.value) }
            describe(step.children, body)
            describe(step.finallySteps, body)
        }
    }

    /// `value`, then a tab and the description's first line when there is one; control
    /// characters (a line break would split the entry) shown escaped.
    private static func line(_ value: String, _ description: String?) -> String {
        let value = ControlEscaping.escaped(value)
        guard let description, let first = description.split(whereSeparator: \.isNewline).first else { return value }
        return value + "\t" + ControlEscaping.escaped(String(first))
    }
}
