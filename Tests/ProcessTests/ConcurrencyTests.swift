#if canImport(Glibc)
import Glibc
#endif
@testable import FlowKit
import Synchronization
import Testing

/// Many children at once, the SIGCHLD fallback, and the admission limiter.
@Suite(.hangDetector)
struct ConcurrencyTests {
    @Test func thousandConcurrentSleepsComplete() async throws {
        OpenFileLimit.raiseToHardLimit()
        let count = 1000
        let spec = ChildSpec(executable: "sleep", arguments: ["1"], environment: TestSupport.environment)
        let children = try (0..<count).map { _ in try ProcessHub.shared.spawn(spec) }
        let results = await withTaskGroup(of: Termination.self) { group in
            for child in children { group.addTask { await child.termination } }
            return await group.reduce(into: [Termination]()) { $0.append($1) }
        }
        #expect(results.count == count)
        #expect(results.allSatisfy { $0 == .exited(0) })
    }

    /// The SIGCHLD + waitid path used when pidfd_open is missing.
    @Test func fallbackWithoutPidfds() async throws {
        let hub = ProcessHub(useProcessDescriptors: false, drainMilliseconds: 200)
        #expect(!hub.usesPidfd)
        let (t1, out1) = try await TestSupport.run(TestSupport.helperSpec(["--print", "x", "--exit", "3"]), hub: hub)
        #expect(t1 == .exited(3))
        #expect(out1.stdout == "x\n")

        let (leader, output) = try TestSupport.start(TestSupport.helperSpec(["--spawn-grandchild", "--exit", "0"]), hub: hub)
        #expect(await leader.termination == .exited(0))
        let grandchild = try #require(TestSupport.number(after: "grandchild", in: output.stdout))
        #expect(await TestSupport.eventually { TestSupport.isDead(grandchild) })

        let spec = TestSupport.helperSpec(["--exit", "0"])
        let children = try (0..<100).map { _ in try hub.spawn(spec) }
        for child in children { #expect(await child.termination == .exited(0)) }
        #expect(hub.activeChildren == 0)
    }

    /// Tasks that prefer the hub's executor run on the loop thread itself; spawning,
    /// the ready handshake and awaiting must all work from there without deadlock.
    @Test func tasksCanRunOnTheHubExecutor() async throws {
        let hub = ProcessHub.shared
        try await withTaskExecutorPreference(hub.executor) {
            for code in Int32(0)..<20 {
                let (termination, _) = try await TestSupport.run(TestSupport.helperSpec(["--exit", "\(code)"]))
                #expect(termination == .exited(code))
            }
            let (child, output) = try TestSupport.start(TestSupport.helperSpec(["--trap", "TERM", "ready", "--sleep", "30"]))
            #expect(await output.waitFor("ready\n"))
            #expect(pthread_self() == hub.executor.loopThread.load(ordering: .relaxed))
            child.signalGroup(SIGTERM)
            #expect(await child.termination == .exited(0))
            #expect(output.stdout.hasSuffix("got SIGTERM\n"))
        }
    }

    @Test func limiterBoundsConcurrency() async throws {
        let limiter = AdmissionLimiter(permits: 3)
        let inside = Occupancy()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await limiter.withPermit {
                        inside.enter()
                        try await Task.sleep(nanoseconds: 2_000_000)
                        inside.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(inside.peak == 3)
        #expect(limiter.availablePermits == 3)
    }

    @Test func limiterWaitIsCancellable() async throws {
        let limiter = AdmissionLimiter(permits: 1)
        try await limiter.acquire()
        let waiter = Task { try await limiter.acquire() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        limiter.release()
        #expect(limiter.tryAcquire())
        #expect(!limiter.tryAcquire())
    }
}

/// Counts tasks inside a region and remembers the most at once.
private final class Occupancy: Sendable {
    private let state = Mutex((now: 0, peak: 0))
    func enter() { state.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) } }
    func leave() { state.withLock { $0.now -= 1 } }
    var peak: Int { state.withLock { $0.peak } }
}
