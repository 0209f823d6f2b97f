#if canImport(Glibc)
import Glibc
#endif

/// Shell steps: the command line, its environment, the process and its cancellation.
extension Executor {
    /// The command with each `${{ expr }}` replaced by `${FLOW_EXPR_n}`, and those variables'
    /// values: expression values reach the shell only as data, never as code.
    static func substitute(_ template: Template, context: RuntimeContext) -> (command: String, env: [String: String]) {
        var command = ""
        var env: [String: String] = [:]
        var n = 0
        for part in template.parts {
            switch part {
            case .text(let text): command += text
            case .expression(let expression, _, _):
                n += 1
                let name = "FLOW_EXPR_\(n)"
                env[name] = (ExpressionEvaluator.evaluate(expression, in: context) ?? .null).description
                command += "${\(name)}"
            }
        }
        return (command, env)
    }

    /// The argv that runs `command` with `program`, as GitHub Actions runs `run:` (errexit on;
    /// pipefail for bash).
    static func shellArguments(_ program: ShellProgram, command: String) -> [String] {
        switch program.name {
        case "bash": return ["--noprofile", "--norc", "-e", "-o", "pipefail", "-c", command]
        default: return ["-e", "-c", command]
        }
    }

    @inline(never)
    /// The longest `NAME=value` string Linux passes to a new program (`MAX_ARG_STRLEN`,
    /// its NUL included).
    static let longestEnvironmentString = 131_072

    /// Why a step's environment or directory cannot reach its process, if it cannot: a
    /// value holding a NUL byte (C strings end there), or a variable longer than Linux
    /// passes. Names the expression or `env` entry the value came from.
    static func unpassable(_ environment: ChildEnvironment, directory: String?, command: Template) -> String? {
        func source(_ name: String) -> String {
            if name.hasPrefix("FLOW_EXPR_"), let n = Int(name.dropFirst(10)) {
                var seen = 0
                for part in command.parts {
                    guard case .expression(let expression, _, _) = part else { continue }
                    seen += 1
                    if seen == n { return "`${{ \(expression.text) }}`" }
                }
            }
            return "env `\(name)`"
        }
        for (name, value) in environment.overrides {
            if value.containsNUL {
                return "the value of \(source(name)) holds a NUL byte, which no command's environment can carry"
            }
            let length = name.utf8.count + value.utf8.count + 2
            if length > longestEnvironmentString {
                return "the value of \(source(name)) is \(value.utf8.count) bytes: Linux passes at most "
                    + "\(longestEnvironmentString - name.utf8.count - 2) to a command (each value is one environment "
                    + "variable); write it to a file and pass the file's path instead"
            }
        }
        if let directory, directory.containsNUL {
            return "the working directory `dir` holds a NUL byte"
        }
        return nil
    }

    /// Why the kernel refused the command with E2BIG ("argument list too long"), in the
    /// workflow's terms: the command is one argument of the shell, and one argument may
    /// hold at most `MAX_ARG_STRLEN` bytes; otherwise the command and the environment
    /// together passed `ARG_MAX`. Said after the refusal, not guessed before it, so that no
    /// command the kernel would take is turned away.
    static func argumentListTooLong(arguments: [String], environment: ChildEnvironment) -> String {
        let longest = longestEnvironmentString - 1
        if let command = arguments.last, command.utf8.count > longest {
            return "the command is \(command.utf8.count) bytes: Linux passes at most "
                + "\(longest) bytes as one argument, and the shell gets the whole command as one; put the command "
                + "in a script file and run that"
        }
        var total = 0
        var largest: (name: String, size: Int)?
        for argument in arguments { total += argument.utf8.count + 1 + MemoryLayout<UnsafeRawPointer>.size }
        for (name, value) in environment.values {
            let size = name.utf8.count + value.utf8.count + 2
            total += size + MemoryLayout<UnsafeRawPointer>.size
            if size > largest?.size ?? 0 { largest = (name, size) }
        }
        var reason = "the command and its environment come to about \(total) bytes, more than Linux passes to a command "
            + "(`getconf ARG_MAX`: \(sysconf(Int32(_SC_ARG_MAX))))"
        if let largest { reason += "; the largest variable is `\(largest.name)` (\(largest.size) bytes)" }
        return reason + "; pass large values in files instead"
    }

    func runShell(_ step: StepRun) async -> AttemptResult {
        guard case .shell(let task) = step.instance.node.kind else { return AttemptResult(state: .failed) }
        let instance = step.instance, env = step.env
        let node = instance.node
        var environment = env
        let outputPath = scratch.emptyFile()
        defer { scratch.discard(outputPath) }
        environment.set("FLOW_OUTPUT", outputPath)
        // FLOW_RUN_ID is in the run's base environment; a step's `env:` may not change it.
        if env.override("FLOW_RUN_ID") != nil { environment.set("FLOW_RUN_ID", options.runID) }
        environment.set("FLOW_STEP", instance.ref.label)
        // `env.NAME` is the process's variable: the command, `dir` and `stdin` see the
        // variables flow sets for this attempt (`${{ env.FLOW_OUTPUT }}` was empty).
        var context = step.context
        context.env = environment
        let (command, exprEnv) = Self.substitute(task.command, context: context)
        for (key, value) in exprEnv { environment.set(key, value) }

        var directory: String?
        if let dir = task.dir {
            directory = context.render(dir)
            if directory == "" {
                // An empty `dir` written as such is a validation error; one an expression
                // came to is found only now. Name it (the spawn said "working directory ``
                // does not exist"). The same values would come again: no retry.
                let problem = "`dir: \(dir.raw)` came to the empty string, which names no directory"
                bus.line(instance.ref, .stderr, "flow: " + ControlEscaping.escaped(problem))
                return AttemptResult(state: .failed, reason: problem, isFinal: true)
            }
        }
        var arguments: [String]
        var executable: String
        // Looked up only when needed: a step flow execs directly has no use for the shell
        // (its lookup was an `access` call on the path to the next spawn).
        func shellExecutable() -> String {
            task.program.spec.contains("/") ? task.program.spec
                : ExecutableLookup.resolve(task.program.spec, searchPath: environment["PATH"], directory: directory)
                    ?? "/bin/\(task.program.spec)"
        }
        var direct = false
        // Through the step's `dir`, where the child execs it: a relative PATH entry (`.`)
        // means that directory, as for the shell the command would otherwise run in.
        if exprEnv.isEmpty, let argv = task.directArgv,
           let resolved = ExecutableLookup.resolve(argv[0], searchPath: environment["PATH"], directory: directory) {
            // No shell syntax: exec the program directly, as make and go-task do.
            executable = resolved
            arguments = Array(argv.dropFirst())
            direct = true
        } else {
            executable = shellExecutable()
            arguments = Self.shellArguments(task.program, command: command)
        }
        if let problem = Self.unpassable(environment, directory: directory, command: task.command) {
            // Found before the spawn, which would cut the value at the NUL without a word,
            // or fail with only "argument list too long". Certain to fail again: no retry.
            bus.line(instance.ref, .stderr, "flow: " + ControlEscaping.escaped(problem))
            return AttemptResult(state: .failed, reason: problem, isFinal: true)
        }
        let input: ChildInput
        if task.interactive {
            input = .terminal
        } else if let stdin = task.stdin {
            input = .string(context.render(stdin))
        } else {
            input = .null
        }
        var spec = ChildSpec(executable: executable, arguments: arguments, environment: environment, directory: directory,
                             stdin: input, output: Self.outputMode(interactive: task.interactive, options: options))

        // Descriptors (--max-parallel and the terminal were taken before the step started:
        // `admit`).
        if Task.isCancelled { return AttemptResult(state: .cancelled, reason: "cancelled before it started") }

        let child: ChildProcess
        let ref = instance.ref
        let bus = self.bus
        /// Since when spawns have failed for lack of descriptors or processes with none of
        /// flow's own children running (see below).
        var shortageSince: ContinuousClock.Instant?
        while true {
            do {
                try await spawnLimiter.acquire()
            } catch {
                return AttemptResult(state: .cancelled, reason: "cancelled before it started")
            }
            bus.settle()
            do {
                child = try hub.spawn(spec) { channel, chunk in bus.output(ref, channel, chunk: chunk) }
                break
            } catch {
                spawnLimiter.release()
                // A second signal or SIGQUIT came as it was about to start.
                if case .stopping = error { return AttemptResult(state: .cancelled, reason: "cancelled before it started") }
                if direct, case .failed = error {
                    // The direct exec was refused (a script without a `#!` line: ENOEXEC; a
                    // file without execute permission or a directory: EACCES). The shell the
                    // command would otherwise run in decides, as execvp and make do: it runs
                    // such a script itself, and reports the others with its status 126, so
                    // skipping the shell changes no result.
                    direct = false
                    spec.executable = shellExecutable()
                    spec.arguments = Self.shellArguments(task.program, command: command)
                    continue
                }
                if error.isRetryable, !Self.shortageOutlasted(&shortageSince, childrenRunning: hub.activeChildren > 0) {
                    // Out of descriptors or processes: wait for another step to finish, then retry.
                    do { try await DispatchPool.sleep(for: .milliseconds(20)) } catch {
                        return AttemptResult(state: .cancelled, reason: "cancelled before it started")
                    }
                    continue
                }
                if case .failed(_, let code) = error, code == E2BIG {
                    // Named in the workflow's terms (the kernel says only "argument list too
                    // long"). The same command and values would come again: no retry.
                    let reason = Self.argumentListTooLong(arguments: spec.arguments, environment: spec.environment)
                    bus.line(ref, .stderr, "flow: " + ControlEscaping.escaped(reason))
                    return AttemptResult(state: .failed, exitCode: 127, reason: reason, isFinal: true)
                }
                var reason = error.isRetryable
                    ? "\(error.description) (still after \(Self.shortageLimit.components.seconds) s, with no other step running to free any)"
                    : error.description
                var isFinal = false
                // What a shell says for a command it cannot run: 127 for one not found, 126
                // for one found that cannot be executed (bash, dash, POSIX).
                var status: Int32 = 127
                if !direct {
                    let spec = task.program.spec
                    switch error {
                    case .executableNotFound:
                        // The step's shell is not there: every attempt would look for it in the
                        // same PATH, so a retry cannot help (and only delayed the failure).
                        isFinal = true
                        if spec.contains("/") {
                            reason = "shell `\(spec)` not found"
                        } else if let file = ExecutableLookup.unexecutable(spec, searchPath: environment["PATH"], directory: directory) {
                            status = 126
                            reason = "shell `\(spec)` is not executable: \(file) has no execute permission for this user"
                        } else {
                            // Name the shell as the workflow does (`shell: ksh`), not the
                            // `/bin/ksh` tried last when the step's PATH had none.
                            reason = "shell `\(spec)` not found (not in the step's PATH, nor \(shellExecutable()))"
                        }
                    case .failed(let executable, let code) where code == EACCES || code == ENOEXEC:
                        // Found but refused by exec: as certain to be refused again.
                        isFinal = true
                        status = 126
                        let named = executable == spec ? "`\(spec)`" : "`\(spec)` (\(executable))"
                        reason = code == ENOEXEC ? "shell \(named) cannot be executed: \(SpawnError.message(code))"
                            : Self.isDirectory(executable, in: directory) ? "shell \(named) is a directory"
                            : "shell \(named) is not executable: \(SpawnError.message(code))"
                    default:
                        break
                    }
                }
                // In the step's output, but flow's words: a value they quote (a `dir` from a
                // step's output) is escaped, as flow's own text always is.
                bus.line(ref, .stderr, "flow: " + ControlEscaping.escaped(reason))
                return AttemptResult(state: .failed, exitCode: status, reason: reason, isFinal: isFinal)
            }
        }
        defer { spawnLimiter.release() }

        let grace = options.grace
        let cancellation = self.cancellation
        // A `finally` or undo step is not cancelled by the run's signal: what cancels it is
        // its own time-out (or a fail-fast inside it), which sends SIGTERM, also after Ctrl-C.
        let forwardsRunSignal = step.mode == .normal
        let termination = await withTaskCancellationHandler {
            await child.termination
        } onCancel: {
            // Forward once: the run's signal (SIGINT after Ctrl-C), SIGTERM for time-outs and
            // fail-fast; SIGKILL after the grace period.
            child.signalGroup(forwardsRunSignal ? cancellation.signal ?? SIGTERM : SIGTERM, grace: grace)
            Task.detached {
                try? await DispatchPool.sleep(for: grace)
                if child.currentTermination == nil { child.kill() }
            }
        }
        bus.flush(ref)
        // `exit_code` is what a shell's `$?` says, 128 + N after signal N, whoever sent it:
        // the step itself, its time-out, fail-fast or the run's cancellation (it was 143 for
        // a step that killed itself, `null` for one flow stopped). `signal` says which.
        let exitCode = termination.shellStatus
        let signal: Int32? = { if case .signaled(let s) = termination { return s } else { return nil } }()
        if child.heldTerminal, signal == SIGINT, !Task.isCancelled {
            // The terminal's Ctrl-C went to the foreground group: the interactive step, not
            // flow. The step died of it, so the user meant to stop: flow takes it as its own
            // Ctrl-C, as a shell does for a job killed so (bash's "wait and cooperative
            // exit"), and the run is cancelled (exit 130, `finally` and rollback run; during
            // a run already cancelled, it is the second Ctrl-C). Without this the step
            // `failed` and the run ended 1, or went on with the next step. A program that
            // handles SIGINT itself (a REPL) keeps it to itself, as it does under a shell.
            // The repeat, which ends flow, is off this thread: the hub's, which it waits for.
            cancellation.request(SIGINT, repeatOn: DispatchPool.queue("flow.repeat-signal"))
            // The note that flow took the Ctrl-C comes before the step's end: its handler runs
            // on another thread, and this step's `⊘` was told first, every time. A second
            // Ctrl-C ends flow from its handler, which says so and then ends this step.
            await cancellation.handlersFinished()
            if cancellation.killsEverything { await cancellation.awaitRepeatHandler() }
            return AttemptResult(state: .cancelled, exitCode: exitCode, signal: signal, reason: "interrupted at the terminal (Ctrl-C)")
        }
        if child.heldTerminal, signal == SIGQUIT, !Task.isCancelled {
            // The same for the terminal's Ctrl-\ (SIGQUIT): flow's own "quit now", which
            // kills every step and ends the run at once (exit 131).
            cancellation.requestNow(SIGQUIT, repeatOn: DispatchPool.queue("flow.repeat-signal"))
            // Its handler ends flow, saying so first and then ending this step (`killed by
            // SIGQUIT`, as every step under way): this step's `⊘` came before that note.
            await cancellation.awaitRepeatHandler()
            return AttemptResult(state: .cancelled, exitCode: exitCode, signal: signal, reason: "quit at the terminal (Ctrl-\\)")
        }
        // A step killed by the second Ctrl-C (a `finally` step, whose task the first one did
        // not cancel) was cancelled, not failed: its SIGKILL may be reaped before flow records
        // the run's end (see `JournalRecorder.abandon`), and must not say otherwise.
        if Task.isCancelled || cancellation.killsEverything {
            // Without a signal to flow, what stopped it is its group's `timeout` or a
            // concurrent sibling's failure (fail_fast), said as a step skipped for it is;
            // after a signal the run's cancellation says why.
            let stopped = !cancellation.isCancelled && !cancellation.killsEverything
            return AttemptResult(state: .cancelled, exitCode: exitCode, signal: signal,
                                 reason: stopped ? "its group was stopped (a timeout or fail_fast)" : nil)
        }
        guard termination.isSuccess else {
            return AttemptResult(state: .failed, exitCode: exitCode, signal: signal,
                                 reason: signal.map { "killed by signal \($0)" } ?? "exit \(exitCode)")
        }
        // Outputs: read what the step wrote to FLOW_OUTPUT.
        var outputs: [String: String] = [:]
        // Most steps write none: one stat, rather than open, fstat, read and close.
        var info = stat()
        let found = stat(outputPath, &info) == 0
        if found, let what = Self.notAFile(info.st_mode) {
            // Never opened (a FIFO's open waits for a writer, `/dev/zero` never ends), and
            // not taken as empty either: whatever the step wrote there is lost.
            return AttemptResult(state: .failed, exitCode: 0, reason: "cannot read FLOW_OUTPUT: it is \(what), not a file")
        }
        if found, info.st_size > 0 {
            // A file flow cannot read fails the step, as one it cannot parse does: taken as
            // empty (`try?`), a `FLOW_OUTPUT` over the size limit, or made a directory, let
            // the step succeed with its outputs silently gone.
            let bytes: [UInt8]
            do {
                bytes = try FileReader.read(outputPath)
            } catch {
                return AttemptResult(state: .failed, exitCode: 0, reason: "cannot read FLOW_OUTPUT: \(error.reason)")
            }
            do {
                outputs = try OutputFile.parse(String(decoding: bytes, as: UTF8.self))
            } catch {
                return AttemptResult(state: .failed, exitCode: 0, reason: error.description)
            }
        }
        if let declared = node.outputs {
            let missing = declared.filter { outputs[$0] == nil }
            if !missing.isEmpty {
                return AttemptResult(state: .failed, exitCode: 0,
                                     reason: "did not write the declared output\(missing.count == 1 ? "" : "s") "
                                        + missing.map { "`\($0)`" }.joined(separator: ", "))
            }
        }
        return AttemptResult(state: .succeeded, exitCode: 0, outputs: outputs)
    }

    /// Waits for what a shell step's attempt needs before it counts as running: a slot of
    /// `--max-parallel` and the terminal (all of it for an interactive step, a share
    /// otherwise). False if the wait was cancelled (nothing is held then).
    ///
    /// Why before `running`: a step queued behind others has not started; its time-out
    /// and its recorded time must not run while it waits (they did: a queued step could
    /// time out, or spend its retries, without having run).
    func admit(_ node: PlanNode) async -> Bool {
        guard let interactive = Self.interactive(node) else { return true }
        if let globalLimiter {
            do { try await globalLimiter.acquire() } catch { return false }
            // The slot may be one that a failing sibling just gave back: its fail-fast
            // cancels this task right after (the group's loop is queued on the hub's
            // executor ahead of this task's next turn), so look again after one turn.
            await Task.yield()
        }
        await terminal.acquire(exclusive: interactive)
        if Task.isCancelled {
            release(node)
            return false
        }
        return true
    }

    /// One attempt of a shell step: admitted (`admit`), then `running`, run, and what it
    /// held given back. Nil if it was cancelled while it waited (it never started).
    @inline(never)
    func admittedAttempt(_ step: StepRun) async -> AttemptResult? {
        guard await admit(step.instance.node) else { return nil }
        defer { release(step.instance.node) }
        // flow's wait for its journal before the spawn comes first: it is no step's time.
        bus.catchUp()
        step.instance.transition(to: .running)
        return await attemptWithTimeout(step)
    }

    /// A step cancelled while it waited to be admitted (fail-fast, Ctrl-C): a first attempt
    /// never started (`skipped`); a retry's ends `cancelled` (the contract's states lead
    /// from `retrying` only to `running`).
    @inline(never)
    func notAdmitted(_ instance: StepInstance, attempt: Int) -> StepState {
        let reason = "cancelled before it started"
        if attempt == 1 {
            instance.transition(to: .skipped, reason: reason)
            runState.record(instance, StepResult(state: .skipped))
            return .skipped
        }
        instance.transition(to: .running)
        instance.transition(to: .cancelled, reason: reason)
        runState.record(instance, StepResult(state: .cancelled))
        return .cancelled
    }

    /// Whether `path` (relative ones from `directory`, where the child execs it) names a
    /// directory: exec refuses one with "permission denied", which would not say why.
    static func isDirectory(_ path: String, in directory: String?) -> Bool {
        ExecutableLookup.isDirectory(!path.hasPrefix("/") && directory != nil ? directory! + "/" + path : path)
    }

    /// What a step's `FLOW_OUTPUT` became when it is neither a file nor a directory (which
    /// `FileReader` names when it reads it): "a FIFO", "a socket", "a device".
    static func notAFile(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG, S_IFDIR: return nil
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        default: return "a device"
        }
    }

    /// Whether a shell step reads the terminal; nil for other steps. Out of line: a copy of
    /// the node's `kind` would join the frames of the async functions that ask.
    @inline(never)
    /// How a shell step's output is wired: captured, unless the steps write to flow's own
    /// streams (`--output raw --no-journal`) or the step is interactive (the terminal is
    /// its own; under `--output json` on flow's stderr, as stdout carries the events).
    static func outputMode(interactive: Bool, options: RunOptions) -> ChildOutputMode {
        if interactive { return options.stdoutCarriesEvents ? .inheritOnStderr : .inherit }
        return options.passThroughOutput ? .inherit : .capture
    }

    static func interactive(_ node: PlanNode) -> Bool? {
        guard case .shell(let task) = node.kind else { return nil }
        return task.interactive
    }

    /// Gives back what `admit` took.
    func release(_ node: PlanNode) {
        guard let interactive = Self.interactive(node) else { return }
        terminal.release(exclusive: interactive)
        globalLimiter?.release()
    }

    /// How long spawns may keep failing for lack of descriptors or processes while none of
    /// flow's own children runs before the step fails.
    /// Long enough to ride out a passing shortage (a burst of processes elsewhere), short
    /// enough that a CI job fails with the reason rather than hangs until its time-out.
    static let shortageLimit = Duration.seconds(10)

    /// Whether a step whose spawn keeps failing for lack of resources should fail now
    /// rather than wait: while another child of flow runs, its end frees what it holds, so
    /// the step waits; with none, only the rest of the system can (a parent that left
    /// descriptors open, `ulimit -u`), and after `shortageLimit` the step fails instead of
    /// waiting forever.
    static func shortageOutlasted(_ since: inout ContinuousClock.Instant?, childrenRunning: Bool,
                                  now: ContinuousClock.Instant = .now) -> Bool {
        if childrenRunning {
            since = nil
            return false
        }
        guard let start = since else {
            since = now
            return false
        }
        return now - start >= shortageLimit
    }
}
