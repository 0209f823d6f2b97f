#if canImport(Glibc)
import Glibc
#endif
import CFlowSys
import FlowCommandLine
import FlowKit

// Before the runtime makes its threads: room for a workflow nested as deep as the limit
// allows, whatever `ulimit -s` says (see `cflow_ensure_thread_stack`).
_ = cflow_ensure_thread_stack(8 << 20)
// Before anything opens a file: a closed stdout must not be taken by one.
StandardDescriptors.reserve()
// Before anything else of flow runs (see `inheritedAtStart`).
_ = OpenFileLimit.inheritedAtStart
// Before any step: a SIGCHLD ignored by the parent would reap them all behind flow's back.
SignalDisposition.restoreChildReaping()
// Ctrl-\ quits flow from the start, not only once a run traps it (see `quitOnSIGQUIT`).
SignalDisposition.quitOnSIGQUIT()
// Before the first task: without a /proc of its own, libdispatch kills flow now and then
// (see `DispatchPool`).
if !DispatchPool.isWatchable { cflow_keep_jobs_off_watched_pool() }

// Usage errors exit with 2 (the contract); help, --version and completion scripts exit 0.
do {
    RawArguments.load()
    switch try CommandLineParser.parse(RawArguments.strings, root: FlowCommand.spec) {
    case .help(let path):
        Console.stdout(HelpFormatter.help(path))
    case .version(let version):
        Console.stdout(version + "\n")
    case .completionScript(let shell):
        Console.stdout(CompletionScript.script(for: shell, root: FlowCommand.spec) ?? "")
    case .completionValues(let query, let current, let typed):
        let lines = CompletionValues.lines(query, current: current, typed: typed)
        Console.stdout(lines.map { $0 + "\n" }.joined())
    case .command(let arguments):
        // Before the first hop to the runtime's threads: refused one, it waits for ever.
        if let (limit, used) = ProcessLimit.shortage() {
            Console.stderr("error: this user may have only \(limit) processes and threads at once (ulimit -u) and has "
                           + "\(used); flow needs at least \(ProcessLimit.minimumFree) more (its own threads and the steps): "
                           + "raise the limit (e.g. `ulimit -u 4096`) or end some of them\n")
            exitNow(2)
        }
        // The command runs on a task of the pool (as the rest of an `async` main did) and
        // exits flow itself; the main thread parks as `dispatch_main` would have left it,
        // without its `pthread_exit` (see `cflow_park_main_thread`).
        // Handed to the task, which alone uses it from then on (commands are not Sendable).
        nonisolated(unsafe) let command = try FlowCommand.command(arguments)
        // A command that only reads a workflow and prints (100,000 steps: ~170 MB of
        // allocations) does it on a thread of the pool, whose own malloc arena grows a page
        // at a time, an `mprotect` each (22,000 for `plan` of 100,000 steps); the main
        // arena grows by `brk` with room to spare (700 calls). Set before the pool's
        // threads exist, this keeps them on the main arena: `validate` and `plan` of
        // 100,000 steps 8–9 % quicker. Not for runs: their threads allocate at once.
        if command.onlyReads { _ = cflow_malloc_one_arena() }
        Task.detached {
            do {
                try await command.run()
            } catch {
                exitOnError(error)
            }
            exitNow(0)
        }
        cflow_park_main_thread()
    }
    exitNow(0)
} catch {
    exitOnError(error)
}

/// Exits with the status `error` calls for, after saying why on stderr.
func exitOnError(_ error: any Error) -> Never {
    switch error {
    case var error as UsageError:
        // No FILE given (`flow run`, as `task` or `just` alone would run the default file):
        // which files there are to give.
        if error.message.hasPrefix("Missing expected argument"), ["<file>", "<files>"].contains(error.subject?.label),
           let listing = WorkflowDirectory.listing(in: []) {
            error.note = "The workflow files here are \(listing)."
        }
        // A usage error quotes what was typed: control characters escaped, line breaks kept.
        Console.stderr(ControlEscaping.escaped(HelpFormatter.error(error), except: ["\n"]))
        Glibc.exit(2)
    case let exit as ExitCode:
        Glibc.exit(exit.rawValue)
    default:
        Console.stderr("error: \(error)\n")
        Glibc.exit(1)
    }
}
