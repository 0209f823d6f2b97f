#if canImport(Glibc)
import Glibc
#endif
@testable import FlowKit
import Testing

/// Spawning, exit statuses, signals and process groups, through real processes.
@Suite(.hangDetector)
struct LifecycleTests {
    @Test(arguments: [Int32(0), 1, 3, 255])
    func exitCodeIsReported(code: Int32) async throws {
        let (termination, _) = try await TestSupport.run(TestSupport.helperSpec(["--exit", "\(code)"]))
        #expect(termination == .exited(code))
    }

    @Test func shellCommandExitCode() async throws {
        let spec = ChildSpec(executable: "sh", arguments: ["-c", "echo hi; exit 42"], environment: TestSupport.environment)
        let (termination, output) = try await TestSupport.run(spec)
        #expect(termination == .exited(42))
        #expect(output.stdout == "hi\n")
    }

    @Test(arguments: [SIGTERM, SIGINT, SIGKILL, SIGSEGV])
    func signaledTerminationIsReported(signal: Int32) async throws {
        let (termination, _) = try await TestSupport.run(TestSupport.helperSpec(["--kill-self", "\(signal)"]))
        #expect(termination == .signaled(signal))
        #expect(termination.shellStatus == 128 + signal)
    }

    @Test func childLeadsItsOwnProcessGroup() async throws {
        let (child, output) = try TestSupport.start(TestSupport.helperSpec(["ready", "--sleep", "30"]))
        #expect(await output.waitFor("ready\n"))
        #expect(getpgid(child.pid) == child.pid)
        #expect(getpgid(child.pid) != getpgrp())
        child.kill()
        #expect(await child.termination == .signaled(SIGKILL))
    }

    @Test func grandchildIsSweptWhenTheLeaderExits() async throws {
        let (child, output) = try TestSupport.start(TestSupport.helperSpec(["--spawn-grandchild", "--exit", "0"]))
        #expect(await child.termination == .exited(0))
        // The grandchild held stdout open; EOF came only because the sweep killed it.
        #expect(!child.outputDrainTimedOut)
        let grandchild = try #require(TestSupport.number(after: "grandchild", in: output.stdout))
        // Killed already; being reaped by its adopter happens asynchronously.
        #expect(await TestSupport.eventually { TestSupport.isDead(grandchild) })
    }

    @Test func trappedTermHandlerOutputIsReceived() async throws {
        let (child, output) = try TestSupport.start(TestSupport.helperSpec(["--trap", "TERM:7", "ready", "--sleep", "30"]))
        #expect(await output.waitFor("ready\n"))
        child.signalGroup(SIGTERM)
        #expect(await child.termination == .exited(7))
        #expect(output.stdout == "ready\ngot SIGTERM\n")
    }

    @Test func trappedIntHandlerOutputIsReceived() async throws {
        let (child, output) = try TestSupport.start(TestSupport.helperSpec(["--trap", "INT", "ready", "--sleep", "30"]))
        #expect(await output.waitFor("ready\n"))
        child.signalGroup(SIGINT)
        #expect(await child.termination == .exited(0))
        #expect(output.stdout.hasSuffix("got SIGINT\n"))
    }

    @Test func stoppedChildStillActsOnTerm() async throws {
        let (child, output) = try TestSupport.start(TestSupport.helperSpec(["--trap", "TERM", "ready", "--sleep", "30"]))
        #expect(await output.waitFor("ready\n"))
        kill(child.pid, SIGSTOP)
        #expect(await TestSupport.eventually { TestSupport.processState(child.pid) == "T" })
        // Without the SIGCONT that signalGroup adds, TERM would wait for the grace period.
        child.signalGroup(SIGTERM)
        #expect(await child.termination == .exited(0))
        #expect(output.stdout.hasSuffix("got SIGTERM\n"))
    }

    @Test func ignoringChildIsKilled() async throws {
        let (child, output) = try TestSupport.start(TestSupport.helperSpec(["--ignore", "TERM", "ready", "--sleep", "30"]))
        #expect(await output.waitFor("ready\n"))
        child.signalGroup(SIGTERM)  // discarded: ignored signals are not even queued
        child.kill()
        #expect(await child.termination == .signaled(SIGKILL))
    }

    @Test func signallingAfterExitIsANoOp() async throws {
        let (child, _) = try TestSupport.start(TestSupport.helperSpec(["--exit", "0"]))
        #expect(await child.termination == .exited(0))
        child.signalGroup(SIGTERM)
        child.kill()
        #expect(child.currentTermination == .exited(0))
    }

    @Test func childrenStartWithDefaultSignalsAndEmptyMask() async throws {
        // As if flow ignored a signal of its own after its first spawn (the ones it found
        // ignored then are the end-to-end test's), with another blocked in the spawning
        // thread.
        var previousAction = sigaction()
        sigaction(SIGHUP, nil, &previousAction)
        SignalDisposition.ignore(SIGHUP)
        var block = sigset_t()
        var old = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGUSR1)
        sigaddset(&block, SIGINT)
        pthread_sigmask(SIG_BLOCK, &block, &old)
        let started = Result { () throws -> (ChildProcess, OutputCollector) in
            try TestSupport.start(TestSupport.helperSpec(["--print-signal-state"]))
        }
        pthread_sigmask(SIG_SETMASK, &old, nil)
        sigaction(SIGHUP, &previousAction, nil)

        let (child, output) = try started.get()
        #expect(await child.termination == .exited(0))
        #expect(output.stdout == "ignored: \nblocked: \n")
    }

    /// A process that left the group and holds the pipe does not hold the child's end: the
    /// drain is cut short while the escapee still lives. Checked by cause, not by the
    /// clock: the time from spawn to the `await`'s return includes however long the test
    /// waited for a thread of the pool (84 s once under load, which failed a 30 s bound).
    @Test func escapedProcessEndsTheDrainOnTime() async throws {
        let (child, output) = try TestSupport.start(TestSupport.helperSpec(["--spawn-escapee", "600", "--print", "leader done", "--exit", "0"]))
        #expect(await child.termination == .exited(0))
        let escapee = TestSupport.number(after: "escapee", in: output.stdout)
        defer { if let escapee { kill(escapee, SIGKILL) } }
        #expect(child.outputDrainTimedOut, "\(output.stdout)")
        #expect(output.stdout.hasSuffix("leader done\n"))
        // A drain that waited for end-of-file would have waited for the escapee's exit
        // (600 s: longer than the test can wait for a thread, and than the time limit).
        let holder = try #require(escapee, "\(output.stdout)")
        #expect(!TestSupport.isDead(holder), "the drain ended before the escapee did")
    }
}
