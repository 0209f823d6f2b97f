#if canImport(Glibc)
import Glibc
#endif
@testable import FlowKit
import Synchronization
import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit of the process tests: a hang detector (an `await` on a child that
    /// never resolves fails the test instead of hanging the suite), not a speed check.
    ///
    /// Why 10 minutes, when each test needs well under a second: the limit counts from the
    /// test's start, and in `swift test` the synchronous end-to-end tests hold the
    /// cooperative pool's threads (two on a 2-core machine) while they wait for `flow`, so
    /// a test's `await` can resume only after most of the rest of the suite has run. Under
    /// load the 1-minute limit fired (with the test's child long finished) in a run of the
    /// racy suites that took 91 s; the full suite takes up to about 3 minutes on a loaded
    /// 2-core machine. 10 minutes is above that, and still ends a hang.
    static var hangDetector: Self { .timeLimit(.minutes(10)) }
}

/// Helpers shared by the process tests: the helper child's path, output collection with a
/// "wait until this text appears" handshake, and bounded polling of process state.
enum TestSupport {
    /// `flow-test-child`, built next to the test bundle (the test target depends on it).
    static let helper: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        precondition(n > 0)
        let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let dir = exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return dir + "/flow-test-child"
    }()

    static let environment = ["PATH": "/usr/bin:/bin"]

    /// A spec running the helper child with `arguments`.
    static func helperSpec(_ arguments: [String], stdin: ChildInput = .null) -> ChildSpec {
        ChildSpec(executable: helper, arguments: arguments, environment: environment, stdin: stdin)
    }

    /// Spawns on `hub` with an `OutputCollector` attached.
    static func start(_ spec: ChildSpec, hub: ProcessHub = .shared) throws -> (ChildProcess, OutputCollector) {
        let output = OutputCollector()
        let child = try hub.spawn(spec) { channel, bytes in output.append(channel, bytes) }
        Task {
            _ = await child.termination
            output.markEnded()
        }
        return (child, output)
    }

    /// Runs a spec to completion and returns its termination and output.
    static func run(_ spec: ChildSpec, hub: ProcessHub = .shared) async throws -> (Termination, OutputCollector) {
        let (child, output) = try start(spec, hub: hub)
        return (await child.termination, output)
    }

    /// Polls `condition` every 5 ms until it holds or `seconds` pass (for kernel state
    /// that settles asynchronously, like a killed process being reaped by init).
    static func eventually(within seconds: Double = 5, _ condition: () -> Bool) async -> Bool {
        let deadline = HubEventLoop.now() + UInt64(seconds * 1e9)
        while HubEventLoop.now() < deadline {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return condition()
    }

    /// The state letter of /proc/PID/stat (R, S, T, Z...), or nil if the process is gone.
    static func processState(_ pid: pid_t) -> Character? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 512)
        let n = read(fd, &bytes, bytes.count)
        guard n > 0 else { return nil }
        let text = String(decoding: bytes[0..<n], as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(close, offsetBy: 2)...].first
    }

    /// Gone, or dead and only waiting to be reaped by whoever adopted it.
    static func isDead(_ pid: pid_t) -> Bool {
        if kill(pid, 0) != 0 && errno == ESRCH { return true }
        let state = processState(pid)
        return state == nil || state == "Z" || state == "X"
    }

    /// Number after `prefix ` on a line of `text` (e.g. "grandchild 1234").
    static func number(after prefix: String, in text: String) -> pid_t? {
        for line in text.split(separator: "\n") where line.hasPrefix(prefix + " ") {
            return pid_t(line.dropFirst(prefix.count + 1))
        }
        return nil
    }
}

/// Thread-safe sink for a child's output, with a handshake: `waitFor("ready\n")` returns
/// once that text appeared on stdout (or the child ended, to never hang a failing test).
///
/// `append` runs on the hub's thread, so it only searches the bytes just added, never the whole output again: a slow callback would delay every child.
final class OutputCollector: Sendable {
    private struct Waiter {
        let pattern: [UInt8]
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var ended = false
        var waiters: [Waiter] = []
    }

    private let state = Mutex(State())

    func append(_ channel: OutputChannel, _ bytes: UnsafeRawBufferPointer) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard channel == .stdout else {
                state.stderr.append(contentsOf: bytes)
                return []
            }
            let old = state.stdout.count
            state.stdout.append(contentsOf: bytes)
            guard !state.waiters.isEmpty else { return [] }
            var satisfied: [CheckedContinuation<Void, Never>] = []
            let stdout = state.stdout
            state.waiters.removeAll { waiter in
                let from = max(0, old - waiter.pattern.count + 1)
                guard OutputCollector.contains(stdout, waiter.pattern, from: from) else { return false }
                satisfied.append(waiter.continuation)
                return true
            }
            return satisfied
        }
        for waiter in ready { waiter.resume() }
    }

    func markEnded() {
        let waiters = state.withLock { state -> [Waiter] in
            state.ended = true
            defer { state.waiters = [] }
            return state.waiters
        }
        // Every waiter stops waiting; `waitFor` then reports whether its text came.
        for waiter in waiters { waiter.continuation.resume() }
    }

    /// Waits until stdout contains `text`; returns whether it does.
    @discardableResult
    func waitFor(_ text: String) async -> Bool {
        let pattern = Array(text.utf8)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.ended || OutputCollector.contains(state.stdout, pattern, from: 0) { return true }
                state.waiters.append(Waiter(pattern: pattern, continuation: continuation))
                return false
            }
            if now { continuation.resume() }
        }
        return OutputCollector.contains(stdoutBytes, pattern, from: 0)
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8], from: Int) -> Bool {
        guard from < haystack.count else { return false }
        guard let first = needle.first else { return true }
        return haystack.withUnsafeBytes { h in
            needle.withUnsafeBytes { n in
                // memchr for the first byte, memcmp for the rest (patterns are short).
                var start = from
                while start + n.count <= h.count,
                      let hit = memchr(h.baseAddress! + start, Int32(first), h.count - start) {
                    let i = h.baseAddress!.distance(to: UnsafeRawPointer(hit))
                    if i + n.count > h.count { return false }
                    if memcmp(h.baseAddress! + i, n.baseAddress!, n.count) == 0 { return true }
                    start = i + 1
                }
                return false
            }
        }
    }

    var stdoutBytes: [UInt8] { state.withLock { $0.stdout } }
    var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    var stderr: String { state.withLock { String(decoding: $0.stderr, as: UTF8.self) } }
}
