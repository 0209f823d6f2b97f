import FlowKit

/// Loading a workflow for commands that need a valid one (`plan`, `run`, `graph`).
enum WorkflowInput {
    /// Loads `path`; on errors prints every diagnostic to stderr and exits 2 (nothing runs).
    /// Loaded files stay alive until exit (see `exitNow`).
    nonisolated(unsafe) static var kept: [LoadedWorkflow] = []

    /// `options` are those the workflow will be planned with: validation leaves the
    /// variables they override to the planner.
    static func loadValid(_ path: String, options: PlanOptions, noColor: Bool) throws -> Workflow {
        var loaded = LoadedWorkflow.load(path: path, pathBytes: RawArguments.bytes(of: path),
                                         overriddenVars: Set(options.vars.map(\.name)))
        loaded.dropSyntaxTree()
        kept.append(loaded)
        let renderer = DiagnosticRenderer(useColor: Console.useColor(fd: 2, disabled: noColor))
        if !loaded.diagnostics.isEmpty {
            Console.stderr(renderer.text(loaded.diagnostics))
        }
        guard loaded.isValid, let workflow = loaded.workflow else {
            let count = loaded.errorCount
            let name = path.isEmpty ? "''" : ControlEscaping.escaped(loaded.file.path)
            Console.stderr("error: \(name) is invalid (\(count) error\(count == 1 ? "" : "s")); nothing was run\n")
            throw ExitCode(2)
        }
        return workflow
    }

    /// Plans `workflow`; a command-line choice that does not fit it is a usage error (exit 2).
    static func plan(_ workflow: Workflow, options: PlanOptions) throws -> Plan {
        do {
            return try Planner.plan(workflow, options: options)
        } catch {
            // The message may quote a --var or --with value: control characters escaped.
            Console.stderr("error: \(ControlEscaping.escaped(error.message))\n")
            if let help = error.help { Console.stderr("help: \(ControlEscaping.escaped(help))\n") }
            throw ExitCode(2)
        }
    }
}
