// flow-proc-bench: timing measurements for the process layer (not tests), and the
// descriptor-exhaustion probe the tests run in a separate process.
//
//   flow-proc-bench seq N [shell|direct] [capture|inherit] [hub-executor]
//                                                            N sequential `true` spawns
//   flow-proc-bench concurrent N [shell|direct]              N concurrent `sleep 1`,
//                                                            spawned from one loop
//   flow-proc-bench concurrent-tasks N [shell|direct]        the same, one task per child
//                                                            (as the executor's task group)
//   flow-proc-bench probe-exhaustion                         see `probeExhaustion`
//   flow-proc-bench probe-interactive HELPER                 see `probeInteractive`
//   flow-proc-bench probe-early-signal                       see `probeEarlySignal`
#if canImport(Glibc)
import Glibc
#endif
import FlowKit

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// CPU seconds used by this process itself (all threads, not the children).
func selfCPU() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// `x` with 3 decimals (no Foundation here).
func fixed(_ x: Double) -> String {
    let scaled = Int((x * 1000).rounded())
    let fraction = String(scaled % 1000)
    return "\(scaled / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
}

let environment = ["PATH": "/usr/bin:/bin", "HOME": "/tmp"]

func spec(_ command: String, mode: String, output: ChildOutputMode = .capture) -> ChildSpec {
    let argv = mode == "shell" ? ["/bin/sh", "-c", command] : ShellCommand.argv(for: command, environment: environment)
    return ChildSpec(executable: argv[0], arguments: Array(argv.dropFirst()), environment: environment, output: output)
}

/// Lowers RLIMIT_NOFILE, fills it with children until spawn throws, checks the error is
/// the retryable one, then checks a retry succeeds once a child has finished.
func probeExhaustion() async {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = 40
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    let sleeper = ChildSpec(executable: "/bin/sleep", arguments: ["30"], environment: environment)
    var children: [ChildProcess] = []
    var failure: SpawnError?
    for _ in 0..<100 {
        do {
            children.append(try ProcessHub.shared.spawn(sleeper))
        } catch {
            failure = error
            break
        }
    }
    guard let failure else { print("never exhausted"); exit(1) }
    print("exhausted: \(failure.isRetryable ? "retryable" : "NOT retryable") after \(children.count) children (\(failure))")
    let first = children.removeFirst()
    first.kill()
    _ = await first.termination
    do {
        children.append(try ProcessHub.shared.spawn(sleeper))
        print("retry: ok")
    } catch {
        print("retry: failed (\(error))")
    }
    for child in children { child.kill() }
    for child in children { _ = await child.termination }
}

/// A SIGINT that comes the moment `SignalTrap` is set up must cancel the run, not vanish:
/// prints "cancelled by 2" (exit 0), or "lost" (exit 1) if nothing came within 5 s.
func probeEarlySignal() {
    let cancellation = RunCancellation()
    let trap = SignalTrap(cancellation: cancellation) { _, _ in }
    trap.listen()
    kill(getpid(), SIGINT)
    let deadline = now() + 5
    while !cancellation.isCancelled && now() < deadline { usleep(1_000) }
    withExtendedLifetime(trap) {}
    if let signal = cancellation.signal {
        print("cancelled by \(signal)")
        exit(0)
    }
    print("lost")
    exit(1)
}

/// Run under a terminal (e.g. `script -qec "..." /dev/null`): an interactive child must be
/// the terminal's foreground group while it runs, and flow must be again afterwards.
func probeInteractive(helper: String) async {
    let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
    guard tty >= 0 else { print("no terminal"); exit(1) }
    print("before: \(tcgetpgrp(tty) == getpgrp() ? "foreground" : "background")")
    let spec = ChildSpec(executable: helper, arguments: ["--print-foreground"], environment: environment, stdin: .terminal)
    do {
        let child = try ProcessHub.shared.spawn(spec)
        print("child: \(await child.termination)")
    } catch {
        print("spawn failed: \(error)")
    }
    print("after: \(tcgetpgrp(tty) == getpgrp() ? "foreground" : "background")")
}

let args = Array(CommandLine.arguments.dropFirst())
switch args.first {
case "seq":
    let n = args.count > 1 ? Int(args[1]) ?? 1000 : 1000
    let mode = args.count > 2 ? args[2] : "shell"
    let output: ChildOutputMode = args.count > 3 && args[3] == "inherit" ? .inherit : .capture
    let s = spec("true", mode: mode, output: output)
    // Off the main actor, as in the executor (top-level code here is main-actor isolated,
    // and hopping back to the main thread costs more than the spawn bookkeeping).
    let onHub = args.count > 4 && args[4] == "hub-executor"
    let t = try await Task.detached {
        let loop = { () async throws -> Double in
            let start = now()
            for _ in 0..<n {
                let child = try ProcessHub.shared.spawn(s)
                _ = await child.termination
            }
            return now() - start
        }
        return onHub ? try await withTaskExecutorPreference(ProcessHub.shared.executor, operation: loop) : try await loop()
    }.value
    print("seq \(n) \(mode) \(output == .capture ? "capture" : "inherit")\(onHub ? " hub-executor" : ""): \(fixed(t)) s (\(fixed(t * 1000 / Double(n))) ms/spawn, own CPU \(fixed(selfCPU())) s)")
case "concurrent":
    OpenFileLimit.raiseToHardLimit()
    let n = args.count > 1 ? Int(args[1]) ?? 1000 : 1000
    let mode = args.count > 2 ? args[2] : "direct"
    let s = spec("sleep 1", mode: mode)
    let start = now()
    let children = try (0..<n).map { _ in try ProcessHub.shared.spawn(s) }
    let spawned = now() - start
    var failures = 0
    for child in children where await child.termination != .exited(0) { failures += 1 }
    let t = now() - start
    print("concurrent \(n) sleep 1 (\(mode)): \(fixed(t)) s (all spawned after \(fixed(spawned)) s), \(failures) failures")
case "concurrent-tasks":
    OpenFileLimit.raiseToHardLimit()
    let n = args.count > 1 ? Int(args[1]) ?? 1000 : 1000
    let mode = args.count > 2 ? args[2] : "direct"
    let s = spec("sleep 1", mode: mode)
    let start = now()
    let failures = await withTaskGroup(of: Int.self) { group in
        for _ in 0..<n {
            group.addTask {
                guard let child = try? ProcessHub.shared.spawn(s) else { return 1 }
                return await child.termination == .exited(0) ? 0 : 1
            }
        }
        var failed = 0
        for await result in group { failed += result }
        return failed
    }
    let t = now() - start
    print("concurrent-tasks \(n) sleep 1 (\(mode)): \(fixed(t)) s, \(failures) failures")
case "probe-exhaustion":
    await probeExhaustion()
case "probe-interactive":
    await probeInteractive(helper: args.count > 1 ? args[1] : "flow-test-child")
case "probe-early-signal":
    probeEarlySignal()
default:
    print("usage: flow-proc-bench seq N [shell|direct] [capture|inherit] | concurrent N [shell|direct] | probe-exhaustion")
    exit(2)
}
