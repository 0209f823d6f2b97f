import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
@testable import FlowJournal

/// Claims of runs (`flow resume`, `flow undo`) against the tidying every other `flow` does
/// when it opens the journal.
@Suite struct RunClaimTests {
    /// A claim nobody holds is taken, even while another `flow` tidies claim files: the
    /// tidying locks a file for a moment to see whether it is free, and a `take` that came
    /// in that moment said "held", so `flow resume` or `flow undo` refused with "is being
    /// resumed, undone or pruned by another flow now" when no one was (found by reading
    /// RunClaim.take against Journal.recover). The remover runs in a loop on another thread;
    /// every one of the takes must succeed.
    @Test func aFreeClaimIsTakenWhileAnotherFlowTidiesClaims() throws {
        let stateDir = "/tmp/flow-claim-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkdir(stateDir, 0o755) == 0 && mkdir(stateDir + "/locks", 0o755) == 0)
        // Not `system("rm -rf …")`: glibc's `system` ignores SIGINT and SIGQUIT in the whole
        // process while it waits, and a test spawning meanwhile passed SIGINT ignored to its
        // child (`childrenStartWithDefaultSignalsAndEmptyMask` failed once so).
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let path = RunClaim.path(stateDir: stateDir, runID: "r")
        let stop = Atomic<Bool>(false)
        let tidies = Atomic<Int>(0)
        let remover = Thread {
            while !stop.load(ordering: .relaxed) {
                RunClaim.removeIfFree(path)
                tidies.add(1, ordering: .relaxed)
            }
        }
        remover.start()
        var refused = 0, unclaimed = 0
        for _ in 0..<4_000 {
            // An old free claim file at the path, as a finished resume leaves one: the
            // tidier may lock and remove it under the take (a fresh one it leaves alone).
            let old = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            var times = [timespec(tv_sec: time(nil) - 60, tv_nsec: 0), timespec(tv_sec: time(nil) - 60, tv_nsec: 0)]
            if old >= 0 { _ = futimens(old, &times); close(old) }
            switch RunClaim.take(stateDir: stateDir, runID: "r") {
            case .taken(let claim): claim.release(stateDir: stateDir, runID: "r")
            case .held: refused += 1
            case .unavailable: unclaimed += 1
            }
        }
        stop.store(true, ordering: .relaxed)
        remover.join()
        #expect(tidies.load(ordering: .relaxed) > 0)
        #expect(refused == 0, "refused \(refused) times with no one holding the claim")
        #expect(unclaimed == 0, "gave up \(unclaimed) times (the run then goes on unclaimed)")
    }

    /// A claim another process holds is still refused, after the short wait `take` gives
    /// a tidying flow.
    @Test func aHeldClaimIsRefused() throws {
        let stateDir = "/tmp/flow-claim-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkdir(stateDir, 0o755) == 0 && mkdir(stateDir + "/locks", 0o755) == 0)
        // Not `system("rm -rf …")`: glibc's `system` ignores SIGINT and SIGQUIT in the whole
        // process while it waits, and a test spawning meanwhile passed SIGINT ignored to its
        // child (`childrenStartWithDefaultSignalsAndEmptyMask` failed once so).
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        guard case .taken(let claim) = RunClaim.take(stateDir: stateDir, runID: "r") else {
            Issue.record("the first take failed")
            return
        }
        // flock locks belong to the open file: a second open in this process conflicts
        // as another process's would.
        guard case .held = RunClaim.take(stateDir: stateDir, runID: "r") else {
            Issue.record("a held claim was taken again")
            return
        }
        claim.release(stateDir: stateDir, runID: "r")
        if case .taken(let again) = RunClaim.take(stateDir: stateDir, runID: "r") {
            again.release(stateDir: stateDir, runID: "r")
        } else {
            Issue.record("a released claim was not taken")
        }
    }
}

/// A thread that can be waited for (Foundation's `Thread` cannot be joined).
private final class Thread: @unchecked Sendable {
    private var handle = pthread_t()
    private let body: () -> Void

    init(_ body: @escaping () -> Void) {
        self.body = body
    }

    func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&handle, nil, { raw in
            let me = Unmanaged<Thread>.fromOpaque(raw!).takeRetainedValue()
            me.body()
            return nil
        }, box)
    }

    func join() {
        pthread_join(handle, nil)
    }
}
