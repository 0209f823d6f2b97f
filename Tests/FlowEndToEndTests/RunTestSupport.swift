import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A scratch directory for one run test: the workflow files, a state dir, and a marker
/// that every process of the run inherits (in its environment), so that processes left
/// behind can be found in /proc afterwards.
///
/// flow is started through `posix_spawn` (not Foundation's `Process`) so that a test can
/// put it in its own process group and signal that group, as a terminal's Ctrl-C does.
final class RunSandbox: @unchecked Sendable {
    let root: URL
    let state: URL
    let marker: String

    /// The `flow` executable (located by `FlowBinary`) and the test child built beside it.
    static var flowPath: String { FlowBinary.url.path }
    static var childPath: String { FlowBinary.url.deletingLastPathComponent().appendingPathComponent("flow-test-child").path }

    init() throws {
        marker = "FLOWTEST-\(UUID().uuidString)"
        root = FileManager.default.temporaryDirectory.appendingPathComponent("flow-run-\(UUID().uuidString)")
        state = root.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    deinit {
        // A failed test must not leave processes behind for the next ones.
        for pid in Self.processes(withMarker: marker) { Glibc.kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(at: root)
    }

    /// Absolute path of `name` inside the sandbox.
    func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    /// Writes `text` to `name` (a workflow, usually) and returns its path.
    ///
    /// The file is opened with O_CLOEXEC (Foundation's `Data.write` opens it without): tests
    /// run in parallel, and a `flow` another test spawned while this file was open for
    /// writing kept the descriptor for its whole life, so a script written here failed to
    /// run with "Text file busy" (ETXTBSY).
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let url = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LiveFlow.SpawnFailure(message: "open \(url.path): errno \(errno)") }
        defer { close(fd) }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw LiveFlow.SpawnFailure(message: "write \(url.path): errno \(errno)") }
            bytes = bytes.dropFirst(written)
        }
        return url.path
    }

    func read(_ name: String) -> String? {
        (try? Data(contentsOf: root.appendingPathComponent(name))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Lines of a file that the steps append to (empty when missing).
    func lines(_ name: String) -> [String] {
        (read(name) ?? "").split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    /// The environment flow starts with: NO_COLOR, the state dir, `CHILD` (the path of
    /// flow-test-child, for workflows to call as `$CHILD`), `SANDBOX`, and the marker.
    var environment: [String: String] {
        [
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": root.path,
            "NO_COLOR": "1",
            "LANG": "C.UTF-8",
            "FLOW_STATE_DIR": state.path,
            "CHILD": Self.childPath,
            "SANDBOX": root.path,
            "FLOW_TEST_MARKER": marker,
        ]
    }

    /// Starts `flow arguments…` in the sandbox (or in its subdirectory `directory`). An empty
    /// value in `extra` removes the variable.
    func start(_ arguments: [String], env extra: [String: String] = [:], ownGroup: Bool = false,
               in directory: String? = nil) throws -> LiveFlow {
        var env = environment
        for (key, value) in extra { env[key] = value.isEmpty ? nil : value }
        return try LiveFlow(executable: Self.flowPath, arguments: arguments, environment: env,
                            directory: directory.map(path) ?? root.path, ownGroup: ownGroup)
    }

    /// Runs `flow arguments…` to the end (killing it after `timeout`, which fails the test).
    func run(_ arguments: [String], env extra: [String: String] = [:], timeout: Double = 60, in directory: String? = nil,
             sourceLocation: SourceLocation = #_sourceLocation) throws -> FlowOutcome {
        let flow = try start(arguments, env: extra, in: directory)
        return try flow.finish(timeout: timeout, sourceLocation: sourceLocation)
    }

    // MARK: processes left behind

    /// Every live process (not a zombie) whose environment or command line holds `marker`.
    static func processes(withMarker marker: String) -> [pid_t] {
        let me = getpid()
        let needle = Data(marker.utf8)
        var found: [pid_t] = []
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        for entry in entries {
            guard let pid = pid_t(entry), pid != me else { continue }
            for file in ["environ", "cmdline"] {
                if let data = FileManager.default.contents(atPath: "/proc/\(entry)/\(file)"),
                   data.range(of: needle) != nil {
                    found.append(pid)
                    break
                }
            }
        }
        return found
    }

    /// The state letter (`T` stopped, `S` sleeping, `Z` zombie…) and the parent of `pid`,
    /// from /proc, or nil when it is gone.
    static func status(of pid: pid_t) -> (state: Character, parent: pid_t)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After the name (which may hold spaces): state, then the parent's pid.
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        guard fields.count > 1, let state = fields[0].first, let parent = pid_t(fields[1]) else { return nil }
        return (state, parent)
    }

    /// Processes of this sandbox still alive after polling for up to `within` seconds (the
    /// kernel needs a moment to reap what was just killed). Empty is the good answer.
    func leftoverProcesses(within seconds: Double = 2) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let pids = Self.processes(withMarker: marker)
            if pids.isEmpty { return [] }
            if Date() >= deadline {
                return pids.map { pid in
                    let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
                    let text = String(decoding: cmdline.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
                    return "\(pid): \(text)"
                }
            }
            usleep(20_000)
        }
    }

    /// Kills (SIGKILL) every process of the sandbox, e.g. children orphaned by a SIGKILLed flow.
    func killLeftovers() {
        for pid in Self.processes(withMarker: marker) { Glibc.kill(pid, SIGKILL) }
        _ = leftoverProcesses(within: 2)
    }
}

/// What a finished flow process did.
struct FlowOutcome: Sendable, CustomStringConvertible {
    /// The exit status; 128 + N when it died of signal N.
    var status: Int32
    var stdout: String
    var stderr: String
    /// Seconds from spawn to exit.
    var elapsed: Double
    /// stdout as it came, byte for byte (`stdout` has invalid UTF-8 replaced).
    var stdoutBytes: [UInt8] = []

    var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLastEmpty() }
    var stderrLines: [String] { stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLastEmpty() }
    var all: String { stdout + stderr }

    /// The start of the line a recorded run that did not succeed ends with (docs/cli.md).
    static let resumeHintPrefix = "to resume from where it stopped: "

    /// The start of the line a recorded undo that did not succeed ends with instead.
    static let undoHintPrefix = "to undo what is left: "

    /// The command of the resume hint (or an undo's), when stderr ends with one.
    var resumeHint: String? {
        guard let last = stderrLines.last else { return nil }
        for prefix in [Self.resumeHintPrefix, Self.undoHintPrefix] where last.hasPrefix(prefix) {
            return String(last.dropFirst(prefix.count))
        }
        return nil
    }

    /// How the resume hint names the flow the tests run by its path (`RunSandbox.run`,
    /// whose `PATH` has no `flow`): that path.
    static let flowInHint: String = {
        let path = RunSandbox.flowPath
        let plain = path.unicodeScalars.allSatisfy { "/._-+".unicodeScalars.contains($0)
            || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
        return plain ? path : "'" + path.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }()

    /// stderr's lines without the resume hint after the summary, if there is one.
    var stderrLinesBeforeHint: [String] { resumeHint == nil ? stderrLines : Array(stderrLines.dropLast()) }

    /// Every stdout line parsed as a JSON object (for `--output json` and `--json`).
    var jsonEvents: [[String: Any]] {
        stdoutLines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// The final state of each step (by path) from `step_state` events of `--output json`.
    var finalStates: [String: String] {
        var states: [String: String] = [:]
        for event in jsonEvents where event["event"] as? String == "step_state" {
            if let step = event["step"] as? String, let to = event["to"] as? String { states[step] = to }
        }
        return states
    }

    /// The final state of the step named `name` (json output).
    func finalState(of name: String) -> String? {
        var state: String?
        for event in jsonEvents where event["event"] as? String == "step_state" && event["name"] as? String == name {
            state = event["to"] as? String
        }
        return state
    }

    /// Every state the step named `name` went through, in order (json output).
    func states(of name: String) -> [String] {
        jsonEvents.filter { $0["event"] as? String == "step_state" && $0["name"] as? String == name }
            .compactMap { $0["to"] as? String }
    }

    var description: String { "status \(status) after \(String(format: "%.2f", elapsed))s\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

extension Array where Element == String {
    fileprivate func dropLastEmpty() -> [String] { last == "" ? Array(dropLast()) : self }
}

/// A running `flow` process with its stdout and stderr collected as they arrive, so that
/// a test can wait for a line (a child's `ready`) before it acts.
final class LiveFlow: @unchecked Sendable {
    let pid: pid_t
    let started = Date()
    private let condition = NSCondition()
    private var out = Data()
    private var err = Data()
    private var openStreams = 2
    private var exitStatus: Int32?
    /// The signal flow died of, once it has exited killed by one (`waitExit` gives 128 + it,
    /// as it gives an exit status flow chose): whether flow handled a signal or was killed.
    private(set) var killedBy: Int32?

    /// `blocked`: signals flow starts with blocked (as a parent that blocked them would pass on).
    init(executable: String, arguments: [String], environment: [String: String], directory: String,
         ownGroup: Bool, blocked: [Int32] = []) throws {
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard Self.pipe2(&outPipe, O_CLOEXEC) == 0, Self.pipe2(&errPipe, O_CLOEXEC) == 0 else {
            throw SpawnFailure(message: "pipe2: errno \(errno)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        _ = Self.addchdir(&actions, directory)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if ownGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var mask = sigset_t()
        sigemptyset(&mask)
        for sig in blocked { sigaddset(&mask, sig) }
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        close(outPipe[1])
        close(errPipe[1])
        guard code == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw SpawnFailure(message: "posix_spawn \(executable): error \(code)")
        }
        pid = child
        startReader(outPipe[0], stdout: true)
        startReader(errPipe[0], stdout: false)
    }

    // Glibc declares these only under _GNU_SOURCE, which Swift's Glibc module does not set.
    // Close-on-exec pipes matter: tests spawn processes in parallel, and a write end leaked
    // into another test's child would hold our pipe open.
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let pipe2: Pipe2 = unsafeBitCast(dlsym(nil, "pipe2")!, to: Pipe2.self)
    private static let addchdir: AddChdir = unsafeBitCast(dlsym(nil, "posix_spawn_file_actions_addchdir_np")!, to: AddChdir.self)

    deinit {
        if exitStatus == nil {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }

    private func startReader(_ fd: Int32, stdout: Bool) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                condition.lock()
                if n > 0 {
                    if stdout { out.append(contentsOf: buffer[0..<n]) } else { err.append(contentsOf: buffer[0..<n]) }
                } else {
                    openStreams -= 1
                }
                condition.broadcast()
                condition.unlock()
                if n <= 0 { break }
            }
            close(fd)
        }
        thread.start()
    }

    var stdout: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: out, as: UTF8.self)
    }

    var stderr: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: err, as: UTF8.self)
    }

    var stdoutBytes: [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        return Array(out)
    }

    /// Waits until `predicate(stdout, stderr)` holds; false after `timeout` seconds.
    /// `predicate` is checked again only when output arrives, so it must depend on the
    /// output alone (every caller's does); to wait on a file, poll it.
    func waitFor(timeout: Double = 20, _ predicate: (String, String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if predicate(String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)) { return true }
            if openStreams == 0 { return false }
            if !condition.wait(until: deadline) { return false }
        }
    }

    /// Waits until stdout (and, unless `stdoutOnly`, stderr) has `count` whole lines equal
    /// to `line` (e.g. `worker | ready`, compared with the label's padding removed).
    ///
    /// Signal tests have their children say `ready` on stderr (`--stderr ready`, printed
    /// after every handler is set): flow writes a step's stderr lines at once, while its
    /// stdout lines may wait in a buffer (see `RunTests.stdoutIsStreamedWhileAStepRuns`).
    func waitForLine(_ line: String, count: Int = 1, stdoutOnly: Bool = false, timeout: Double = 20) -> Bool {
        let wanted = Self.squeeze(line)
        return waitFor(timeout: timeout) { stdout, stderr in
            let text = stdoutOnly ? stdout : stdout + "\n" + stderr
            return text.split(separator: "\n").filter { Self.squeeze(String($0)) == wanted }.count >= count
        }
    }

    /// `a   | x` → `a | x`: the prefixed label is padded to the widest label.
    static func squeeze(_ line: String) -> String {
        guard let bar = line.range(of: " | ") else { return line }
        let label = line[..<bar.lowerBound].trimmingCharacters(in: .whitespaces)
        return label + " | " + line[bar.upperBound...]
    }

    func signal(_ sig: Int32) { Glibc.kill(pid, sig) }

    /// Signals flow's whole process group (it must have been started with `ownGroup`), as a
    /// terminal does on Ctrl-C.
    func signalGroup(_ sig: Int32) { Glibc.kill(-pid, sig) }

    /// The exit status once flow has exited (128 + N for signal N), else nil after `timeout`.
    func waitExit(timeout: Double) -> Int32? {
        if let exitStatus { return exitStatus }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                let decoded = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                if status & 0x7f != 0 { killedBy = status & 0x7f }
                exitStatus = decoded
                return decoded
            }
            if r < 0 && errno != EINTR { return nil }
            if Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Waits for the exit and for the end of the output; kills flow and records a test
    /// failure (throwing) when it takes longer than `timeout`.
    func finish(timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) throws -> FlowOutcome {
        guard let status = waitExit(timeout: timeout) else {
            Glibc.kill(pid, SIGKILL)
            _ = waitExit(timeout: 10)
            let message = "flow did not exit within \(timeout)s\n--- stdout\n\(stdout)--- stderr\n\(stderr)"
            Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
            throw SpawnFailure(message: message)
        }
        let elapsed = Date().timeIntervalSince(started)
        // flow has exited; its pipes close unless something it started still holds them.
        _ = waitFor(timeout: 3) { _, _ in false }
        let outcome = FlowOutcome(status: status, stdout: stdout, stderr: stderr, elapsed: elapsed, stdoutBytes: stdoutBytes)
        return outcome
    }

    struct SpawnFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

/// Start/end markers appended by concurrent steps to one file: the largest number of
/// steps that were running at once.
func maxConcurrency(_ lines: [String]) -> Int {
    var running = 0
    var peak = 0
    for line in lines {
        if line.hasPrefix("start") { running += 1; peak = max(peak, running) }
        if line.hasPrefix("end") { running -= 1 }
    }
    return peak
}
