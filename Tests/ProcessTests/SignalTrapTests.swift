#if canImport(Glibc)
import Glibc
#endif
@testable import FlowKit
import Testing

/// `SignalTrap` in a process of its own (flow-proc-bench): it handles signals for good.
@Suite struct SignalTrapTests {
    /// A signal that comes as soon as the trap is set up is not lost (libdispatch's signal
    /// sources, used before, registered later on another thread, and a Ctrl-C sent as the
    /// first step started was lost 58 times in 150 under load).
    @Test(.hangDetector)
    func aSignalRightAfterTheTrapIsSetUpCancelsTheRun() async throws {
        let bench = TestSupport.helper.replacingLastComponent(with: "flow-proc-bench")
        let spec = ChildSpec(executable: bench, arguments: ["probe-early-signal"], environment: TestSupport.environment)
        let (termination, output) = try await TestSupport.run(spec)
        #expect(termination == .exited(0), "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.contains("cancelled by \(SIGINT)"))
    }
}
