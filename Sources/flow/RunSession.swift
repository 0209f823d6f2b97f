#if canImport(Glibc)
import Glibc
#endif
import FlowKit

/// Wires a run together: reporters, signals, the executor. Returns the exit status.
struct RunSession {
    let plan: Plan
    let command: RunCommand

    func run() async -> Int32 {
        _ = OpenFileLimit.raiseToHardLimit()
        // A closed stdout must not kill flow mid-run (children still get default SIGPIPE).
        signal(SIGPIPE, SIG_IGN)
        let color = Console.useColor(fd: 2, disabled: command.noColor)
        var mode = command.output
        if mode == .auto {
            let term = getenv("TERM").map { String(cString: $0) } ?? ""
            mode = isatty(2) == 1 && term != "dumb" && !command.quiet ? .tty : .prefixed
        }
        let bus = EventBus()
        switch mode {
        case .tty: bus.add(TTYReporter(plan: plan, color: color))
        case .prefixed, .auto:
            let width = plan.steps.compactMap { $0.name?.count }.max() ?? 0
            bus.add(PrefixedReporter(color: color, quiet: command.quiet, labelWidth: width))
        case .grouped:
            bus.add(GroupedReporter(color: color, github: getenv("GITHUB_ACTIONS").map { String(cString: $0) } == "true"))
        case .raw: bus.add(RawReporter(color: color))
        case .json: bus.add(JSONReporter())
        }
        let junit = command.junit.map(JUnitReport.init(path:))
        if let junit { bus.add(junit) }

        var options = RunOptions(runID: ProcessEnvironment.newRunID(), environment: ProcessEnvironment.current())
        options.grace = command.grace.value
        options.maxParallel = command.maxParallel
        options.rollback = !command.noRollback
        options.passThroughOutput = mode == .raw
        let cancellation = RunCancellation()
        let trap = SignalTrap(cancellation: cancellation) { signal in
            Console.stderr("\nflow: second signal; killed every step\n")
            _exit(signal == SIGINT ? 130 : 143)
        }
        let executor: Executor
        do {
            executor = try Executor(plan: plan, options: options, bus: bus, cancellation: cancellation)
        } catch {
            Console.stderr("error: \(error)\n")
            return 1
        }
        let outcome = await executor.run()
        withExtendedLifetime(trap) {}
        if let failure = junit?.failure {
            Console.stderr("error: \(failure)\n")
        }
        return outcome.exitCode
    }
}
