import Foundation
import Testing

/// Statements of the contract (/work/shared/spec/workflow-format.md and cli.md) that the
/// audit of 2026-11-27 found unpinned, or the binary getting wrong, checked through the
/// built binary: one test per statement, named after it. Each is quick (no step sleeps
/// longer than a fraction of a second, and nothing is timed).
@Suite struct SpecConformanceTests {
    // MARK: plan

    /// "A last line gives the number of steps and the shortest possible wall time implied by
    /// delays": a step that `max_parallel` holds back starts when an earlier one ends, so a
    /// failure of it (here a time-out) comes no sooner than that. The plan said 2s for
    /// these runs of 4s, counting the held-back step as if it had started with the group.
    @Test(arguments: ["true", "false"])
    func theShortestWallTimeWaitsForAStepMaxParallelHoldsBack(failFast: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - delay: 2s
                  - delay: 3s
                    timeout: 2s
                max_parallel: 1
                fail_fast: \(failFast)
            """)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.last == "3 steps, shortest wall time 4s", "\(plan)")
    }
}
