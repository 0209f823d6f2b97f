import FlowKit

/// Loading a workflow for commands that need a valid one (`plan`, `run`, `graph`).
enum WorkflowInput {
    /// Loads `path`; on errors prints every diagnostic to stderr and exits 2 (nothing runs).
    /// Loaded files stay alive until exit (see `exitNow`).
    nonisolated(unsafe) static var kept: [LoadedWorkflow] = []
    /// What the last refusal said (its last line, and the diagnostics or help before it),
    /// for a report of the refused run (`--junit`).
    nonisolated(unsafe) static var refusal: (message: String, details: String)?

    /// `options` are those the workflow will be planned with: validation leaves the
    /// variables they override to the planner. `running` is false for the commands that
    /// never run anything (`plan`, `graph`, `run --dry-run`), whose refusal does not say
    /// "nothing was run".
    /// `annotate`: the diagnostics are also written as GitHub Actions workflow commands
    /// (`::error file=…,line=…::…`), which GitHub shows on the file in the pull request, as
    /// it shows a failed step's under `--output grouped`.
    static func loadValid(_ path: String, options: PlanOptions, noColor: Bool, running: Bool = true,
                          annotate: Bool = false) throws -> Workflow {
        var loaded = LoadedWorkflow.load(path: path, pathBytes: RawArguments.bytes(of: path),
                                         overriddenVars: Set(options.vars.map(\.name)))
        loaded.dropSyntaxTree()
        kept.append(loaded)
        return try accept(loaded, name: path.isEmpty ? "''" : ControlEscaping.escaped(loaded.file.path),
                          noColor: noColor, running: running, annotate: annotate)
    }

    /// Writes `loaded`'s diagnostics on stderr (and as GitHub Actions commands with
    /// `annotate`), and returns its workflow; refuses one that is not valid (exit 2), saying
    /// so as the last line, which `refusal` keeps for a JUnit report. `name` is the file as
    /// the message names it. `flow run` and the recorded workflow of `resume` and `undo`.
    static func accept(_ loaded: LoadedWorkflow, name: String, noColor: Bool, running: Bool, annotate: Bool) throws -> Workflow {
        let renderer = DiagnosticRenderer(useColor: Console.useColor(fd: 2, disabled: noColor))
        if !loaded.diagnostics.isEmpty {
            Console.stderr(renderer.text(loaded.diagnostics))
            if annotate { Console.stderr(renderer.github(loaded.diagnostics)) }
        }
        guard loaded.isValid, let workflow = loaded.workflow else {
            let count = loaded.errorCount
            // A file that could not be read is not "invalid": there was nothing to judge.
            let unread = loaded.diagnostics.contains { $0.code == .fileUnreadable }
            let consequence = running ? "; nothing was run" : ""
            let message = unread ? "\(name) cannot be read\(consequence)"
                : "\(name) is invalid (\(count) error\(count == 1 ? "" : "s"))\(consequence)"
            Console.stderr("error: \(message)\n")
            refusal = (message, DiagnosticRenderer(useColor: false).text(loaded.diagnostics))
            throw ExitCode(2)
        }
        return workflow
    }

    /// Writes the JUnit report of a refusal (`refusal`, set by `accept` or `plan`) to
    /// `junit` when one was asked for: a CI job's report step finds a report, not none.
    static func reportRefusal(junit: String?, workflow name: String) {
        guard let junit, let refusal else { return }
        if let failure = JUnitReport.writeRefusal(to: junit, workflow: name, message: refusal.message, details: refusal.details) {
            Console.stderr("error: \(failure)\n")
        }
    }

    /// Warns on stderr about selected steps that read a step the selection leaves out
    /// (`unselected-reference`): the run goes on, with the values of a skipped step.
    /// `annotate`: as GitHub Actions commands too, as `loadValid` writes the file's own.
    static func warnUnselectedReferences(_ plan: Plan, noColor: Bool, annotate: Bool = false) {
        let warnings = UnselectedReferences.diagnostics(in: plan)
        guard !warnings.isEmpty else { return }
        let renderer = DiagnosticRenderer(useColor: Console.useColor(fd: 2, disabled: noColor))
        Console.stderr(renderer.text(warnings))
        if annotate { Console.stderr(renderer.github(warnings)) }
    }

    /// Warns on stderr when `--only`, `--tags` and `--skip-tags` each name something there
    /// but together leave no step. `run` says it before running nothing, and `plan` and
    /// `run --dry-run` say it too: a dry run is where a user checks what the run would do.
    static func warnEmptySelection(_ plan: Plan, selection: SelectionOptions) {
        guard plan.selectsNoStep, selection.only != nil || !SelectionOptions.list(selection.tags + selection.skipTags).isEmpty else { return }
        // The run would succeed having run nothing, which a typo-free command line rarely
        // means (`go test -run` says "no tests to run" too).
        Console.stderr("warning: \(selection.described) select no step: nothing will run\n")
    }

    /// Plans `workflow`; a command-line choice that does not fit it is a usage error (exit 2).
    /// `forRunning: false` for a plan that is only printed.
    static func plan(_ workflow: Workflow, options: PlanOptions, forRunning: Bool = true) throws -> Plan {
        do {
            return try Planner.plan(workflow, options: options, forRunning: forRunning)
        } catch {
            // The message may quote a --var or --with value: control characters escaped.
            Console.stderr("error: \(ControlEscaping.escaped(error.message))\n")
            if let help = error.help { Console.stderr("help: \(ControlEscaping.escaped(help))\n") }
            refusal = (ControlEscaping.escaped(error.message), error.help.map { "help: " + ControlEscaping.escaped($0) } ?? "")
            throw ExitCode(2)
        }
    }
}
