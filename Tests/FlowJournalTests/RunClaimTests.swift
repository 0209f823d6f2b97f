#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import FlowJournal

/// Taking the claim of a run a `resume` or `undo` carries on (`RunClaim`).
@Suite struct RunClaimTests {
    /// A scratch state dir with its `locks/`.
    static func stateDir() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flow-claim-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/locks", withIntermediateDirectories: true)
        return dir
    }

    /// A claim another holder keeps is refused (`held`), and taken once it is let go.
    @Test func aHeldClaimIsRefusedAndTakenOnceLetGo() throws {
        let dir = try Self.stateDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let holder = open(RunClaim.path(stateDir: dir, runID: "r1"), O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        #expect(flock(holder, LOCK_EX) == 0)
        guard case .held = RunClaim.take(stateDir: dir, runID: "r1", busyTries: 3) else {
            Issue.record("a held claim was not refused")
            return
        }
        close(holder)
        guard case .taken = RunClaim.take(stateDir: dir, runID: "r1") else {
            Issue.record("a claim let go was not taken")
            return
        }
    }

    /// Another flow's clean-up of a free claim file (`removeIfFree`: lock, unlink, let go)
    /// under way as a resume takes the claim does not refuse the resume: the clean-up's
    /// lock was read as a resume or undo going on ("is being resumed, undone or pruned by
    /// another flow now"), left open by the shared-journal audit.
    @Test func aCleanUpHoldingAFreeClaimForAMomentDoesNotRefuseIt() throws {
        let dir = try Self.stateDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = RunClaim.path(stateDir: dir, runID: "r2")
        let cleaner = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        #expect(flock(cleaner, LOCK_EX | LOCK_NB) == 0)
        // The lock is held when `take` starts; the clean-up lets go 20 ms later (a real
        // one takes microseconds), well inside the 5 s the taker is given here.
        let thread = Thread {
            usleep(20_000)
            unlink(path)
            flock(cleaner, LOCK_UN)
            close(cleaner)
        }
        thread.start()
        let outcome = RunClaim.take(stateDir: dir, runID: "r2", busyTries: 5_000)
        guard case .taken = outcome else {
            Issue.record("the claim was refused while a clean-up held it for a moment: \(outcome)")
            return
        }
    }
}
