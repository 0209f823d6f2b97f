#if canImport(Glibc)
import Glibc
#endif
import Dispatch
@testable import FlowKit
import Synchronization
import Testing

/// `ProcessHub.killEverything` (a second Ctrl-C, SIGQUIT) leaves no step's process group
/// behind, those being spawned on another thread at that moment too, and starts no more.
@Suite(.hangDetector)
struct KillEverythingTests {
    /// One thread spawns steps that leave a background `sleep` in their group, back to
    /// back, each slowed down by a large environment (the exec copies it), so that most of
    /// the time a spawn is under way; after a few it wakes another thread, which kills
    /// everything meanwhile. `signalAll` alone missed the child being spawned (registered
    /// only after its exec), and its group lived on (`sleep 30`).
    @Test func noGroupOutlivesItAndNothingStartsAfter() async throws {
        let hub = ProcessHub()
        // 1 MB in all (one string may hold at most 128 KiB). Output passed through, not
        // captured: no pipes, so no descriptors held per child beside its pidfd.
        var environment = ["PATH": "/usr/bin:/bin"]
        for i in 0..<10 { environment["PAD\(i)"] = String(repeating: "x", count: 100_000) }
        let spec = ChildSpec(executable: "/bin/sh", arguments: ["-c", "sleep 30 & wait"], environment: environment,
                             stdin: .null, output: .inherit)
        let spawned = Mutex<[pid_t]>([])
        let outcome = Mutex<String?>(nil)
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // Bounded: without the flag it would never be refused.
            for n in 1...200 {
                do throws(SpawnError) {
                    let child = try hub.spawn(spec)
                    spawned.withLock { $0.append(child.pid) }
                    if n == 3 { started.signal() }
                } catch {
                    outcome.withLock { $0 = "\(error)" }
                    break
                }
            }
            finished.signal()
        }
        started.wait()
        hub.killEverything()
        finished.wait()
        let pids = spawned.withLock { $0 }
        defer { for pid in pids { _ = kill(-pid, SIGKILL) } }
        let refusal = outcome.withLock { $0 }
        #expect(refusal == SpawnError.stopping.description, "a spawn after killEverything is refused")
        #expect(await TestSupport.eventually { Self.liveGroups(among: Set(pids)).isEmpty },
                "groups outlived killEverything: \(Self.liveGroups(among: Set(pids)))")
    }

    /// The processes (`PID (COMM) STATE`) of the groups `groups` that are not dead: a zombie
    /// left to whoever adopted it (slow under load) is, though `kill(-group, 0)` counts it.
    static func liveGroups(among groups: Set<pid_t>) -> [String] {
        guard let dir = opendir("/proc") else { return [] }
        defer { closedir(dir) }
        var found: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name) else { continue }
            let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var bytes = [UInt8](repeating: 0, count: 512)
            let n = read(fd, &bytes, bytes.count)
            close(fd)
            guard n > 0 else { continue }
            let text = String(decoding: bytes[0..<n], as: UTF8.self)
            // `PID (COMM) STATE PPID PGRP …`: COMM may hold spaces and parentheses.
            guard let close = text.lastIndex(of: ")") else { continue }
            let fields = text[text.index(after: close)...].split(separator: " ")
            guard fields.count > 2, let group = pid_t(fields[2]), groups.contains(group), fields[0] != "Z", fields[0] != "X"
            else { continue }
            found.append(String(text[...close]) + " " + fields[0])
        }
        return found
    }
}
