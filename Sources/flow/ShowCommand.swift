import FlowCommandLine
import FlowJournal
import FlowKit

/// `flow show RUN`: one run's tree with each step's state, attempts, exit code, duration.
struct ShowCommand: Command {
    static let spec = CommandSpec(
        name: "show",
        abstract: "Show one run: every step with its state, attempts, exit code and duration.",
        discussion: """
            RUN is a run id, a unique prefix of one, or `last`.

            Examples:
              flow show last                  # the newest run's tree
              flow show 6b0729 --json | jq -r '.steps[] | select(.state == "failed") | .label'
            """,
        arguments: [JournalOptions.runArgument],
        options: JournalOptions.options + [.flag("json", help: "Print the run as JSON.")]
    )

    var runID: String
    var journal: JournalOptions
    var json: Bool

    init(_ arguments: ParsedArguments) {
        runID = arguments.argument("run-id") ?? ""
        journal = JournalOptions(arguments)
        json = arguments.flag("json")
    }

    func run() async throws {
        let (journal, record) = try JournalInput.run(self.journal, runID, readOnly: true)
        let id = record.id
        let steps = try JournalInput.attempt { () throws(JournalError) in try journal.steps(id) }.map { $0.shown(inRun: record.state) }
        // Where a resume's reused steps came from: their rows alone read as run now, in no time.
        // Followed back to the run that ran them: a resume recorded before resumes said so
        // named the run it resumed, which may only have reused the result in turn.
        let reused = record.kind == "resume"
            ? try JournalInput.attempt { () throws(JournalError) in try journal.producers(journal.reusedSources(id)) } : [:]
        // The resumes and undos that carried it on, oldest first: where its story goes on
        // (its steps' states are its own; a resume's decide what a next resume reuses).
        let later = try JournalInput.attempt { () throws(JournalError) in try journal.laterRuns(of: id) }.reversed()
        if json {
            // What `runs --json` says of the run (the text's start, duration, parent and
            // counts were missing), then where it ran and its steps.
            let options = record.args.options
            let value = JSONValue.object(RunsCommand.members(record) + [
                ("host", .string(record.host)), ("pid", .int(record.pid)),
                // Only when true: the arguments and options below were read as none.
            ] + (record.argsDamaged ? [("arguments_damaged", JSONValue.bool(true))] : []) + [
                // How it ran and failed: what a resume or undo of it carries on (null: not given).
                ("options", .object([
                    ("rollback", .bool(options.rollback ?? true)),
                    ("max_parallel", options.maxParallel.map(JSONValue.int) ?? .null),
                    ("grace", options.grace.map(JSONValue.string) ?? .null),
                ])),
                ("later_runs", .array(later.map { run in
                    .object([("id", .string(run.id)), ("kind", .string(run.kind)), ("state", .string(run.state))])
                })),
                ("steps", .array(steps.map { step -> JSONValue in
                    var members: [(String, JSONValue)] = [
                        ("path", .string(step.path)), ("name", step.name.map(JSONValue.string) ?? .null),
                        ("label", .string(step.label)),
                        ("kind", .string(step.kind)), ("state", .string(step.state)), ("attempts", .int(step.attempts)),
                        ("exit_code", step.exitCode.map(JSONValue.int) ?? .null),
                        ("signal", step.signal.map(JSONValue.int) ?? .null),
                        ("duration_seconds", Self.duration(step).map(JSONValue.double) ?? .null),
                        ("reused_from", reused[step.path].map(JSONValue.string) ?? .null),
                        ("outputs", .object(step.outputs.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
                    ]
                    // As the step's event has it (events.md), after its state: only when true.
                    if step.allowedFailure { members.insert(("allowed_failure", .bool(true)), at: 5) }
                    return .object(members)
                })),
            ])
            Console.stdout(value.rendered(pretty: true) + "\n")
            return
        }
        // Names from the file (its name, its workflow name) are shown with control
        // characters escaped: a terminal must not act on them.
        // `cproj · action release (flow.yaml)`, as `flow plan` heads an action's plan.
        let action = record.args.action.map { " · action \(ControlEscaping.escaped($0))" } ?? ""
        var header = "run \(record.id) · \(ControlEscaping.escaped(record.workflowName))\(action) (\(ControlEscaping.escaped(record.workflowDisplayPath))) · \(record.state)"
        if let exit = record.exitStatus { header += " (exit \(exit))" }
        if let ended = record.endedAt { header += " · \(formatElapsed(ended - record.startedAt))" }
        Console.stdout(header + "\n")
        var second = "started \(JournalInput.localTime(record.startedAt)) on \(record.host) (pid \(record.pid))"
        if record.kind != "run", let parent = record.parentID { second += " · \(record.kind) of \(parent)" }
        Console.stdout(second + "\n")
        if !later.isEmpty {
            Console.stdout("carried on: " + later.map { run in
                "\(run.kind == "undo" ? "undone by" : "resumed as") run \(run.id) (\(run.state))"
            }.joined(separator: "; ") + "\n")
        }
        // What it was run with: its vars, params and selection decided what ran.
        let arguments = record.args.commandLine
        if record.argsDamaged {
            // Read as none, which are not what it ran with: saying nothing read as "no arguments".
            Console.stdout("arguments: damaged (the journal's `args` for this run is not what flow writes); resume and undo refuse it\n")
        } else if !arguments.isEmpty {
            Console.stdout("arguments: \(ControlEscaping.escaped(arguments))\n")
        }
        // How it ran and failed, which its resume or undo carries on: why a resume did not roll back.
        let options = record.args.options.commandLine
        if !options.isEmpty { Console.stdout("options: \(ControlEscaping.escaped(options))\n") }
        // The steps whose undo steps never run for this run: in an undo, those it left alone
        // (`skipped` there); in any run, those that ended without ever succeeding in it
        // (skipped, failed: a rollback, and any `flow undo` of the run, reverses only
        // successes). Their undo steps, recorded `pending`, read as work left to do
        // (`· undo shell@3.u1 [pending]` under `○ c [skipped]`): they are not listed, as the
        // rollback never had them. `--json` lists them as the journal has them. Not in a
        // resume: a step it was cancelled before (`skipped` there) is held as the run it
        // resumed left it, and a `flow undo` of the resume reverses it if it succeeded there.
        let neverUndone = record.kind == "resume" ? [] : Set(steps.filter {
            !$0.path.contains("u") && $0.completedSeq == nil && Self.endedUnsucceeded.contains($0.state)
        }.map(\.path))
        for step in steps {
            if !neverUndone.isEmpty, step.state == "pending", let owner = Self.undoneStep(of: step.path), neverUndone.contains(owner) {
                continue
            }
            var line = String(repeating: "  ", count: step.depth) + JournalInput.stateSymbol(step.state) + " "
            line += step.path.contains("u") ? "undo " : ""
            // A `finally` step runs after its group's steps whatever they did: after a failure
            // it follows a row of skipped steps, and read as one of them it looked misplaced.
            // Marked as `plan` heads the list, on each step of it (not on the steps inside one).
            if step.path.split(separator: ".").last?.first == "f" { line += "finally " }
            // An unnamed step's command or message is the file's text: escaped too.
            line += ControlEscaping.escaped(step.label + (Self.detail(step).map { ": " + $0 } ?? ""))
            // An undo runs no group, only undo steps inside them: its groups stay `pending`,
            // which as a state would say they were left to run. They are the tree's frame.
            if record.kind == "undo", step.state == "pending", !step.isLeaf {
                Console.stdout(line + "\n")
                continue
            }
            // As the live output marks it (`✗ soft exit 3 (allowed to fail)`), on the state it qualifies.
            var facts = [step.allowedFailure ? "\(step.state) (\(StepTransition.allowedFailureMark))" : step.state]
            // An undo's only skips are the steps it left alone (nothing to undo, or they did
            // not succeed in the run): said so, as its counts leave them out, rather than
            // `skipped`, which read as steps the undo should have reversed and did not.
            if record.kind == "undo", step.state == "skipped", !step.path.contains("u") { facts[0] = "left alone" }
            // As the live output says it; its exit code is the earlier run's, and it took no time now.
            let source = reused[step.path]
            if let source { facts.append("reused from run \(source)") }
            if step.attempts > 1 { facts.append("\(step.attempts) attempts") }
            // As the live output says it: a step that failed killed by a signal did not exit
            // 128 + it, though its `exit_code` is that (one flow stopped, timed out or
            // cancelled, is said to be that: its state says it).
            if let signal = step.signal {
                if step.state == "failed" { facts.append("signal \(signal)") }
            } else if let code = step.exitCode, step.kind == "shell" {
                facts.append("exit \(code)")
            }
            if source == nil, let duration = Self.duration(step) { facts.append(formatElapsed(duration)) }
            if !step.outputs.isEmpty { facts.append("outputs " + step.outputs.keys.sorted().joined(separator: ",")) }
            Console.stdout(line + "  [" + facts.joined(separator: " · ") + "]\n")
        }
        Console.stdout("steps: \(record.countsSummary)\n")
    }

    /// The states of a step that ended without succeeding: a rollback reverses none of them.
    static let endedUnsucceeded: Set<String> = ["skipped", "failed", "timed_out", "cancelled"]

    /// The step whose `undo` block holds the undo step at `path` (`3` for `3.u1`, `2.1` for
    /// `2.1.u2.1`); nil for a step outside any `undo` block.
    static func undoneStep(of path: String) -> String? {
        let parts = path.split(separator: ".")
        guard let u = parts.firstIndex(where: { $0.first == "u" }) else { return nil }
        return parts[..<u].joined(separator: ".")
    }

    /// What an unnamed step does (its command, message, duration or action), without the
    /// kind its label already has (`print@f1: bye`, not `print: print bye`). Named steps
    /// have none: the name stands for the step, as in the live output.
    static func detail(_ step: StepRecord) -> String? {
        guard step.name == nil, step.summary != step.kind else { return nil }
        let prefix = step.kind + " "
        return step.summary.hasPrefix(prefix) && step.kind != "shell" ? String(step.summary.dropFirst(prefix.count)) : step.summary
    }

    /// The step's own run time, first start to last end (a rollback later is not part of it).
    static func duration(_ step: StepRecord) -> Double? {
        guard let start = step.startedAt, let end = step.endedAt else { return nil }
        return end - start
    }
}
