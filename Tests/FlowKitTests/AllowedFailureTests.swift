@testable import FlowKit
import Testing

/// Which failures `continue_on_error` allows, and how the text reporters say it.
struct AllowedFailureTests {
    /// A step is covered by its own `continue_on_error`, by `defaults`' (shell steps), or
    /// by a group's around it (its `finally` too); an `undo` block starts afresh.
    @Test func theNodesWhoseFailureIsAllowed() throws {
        let plan = try PlannerTests.plan("""
            version: 1
            name: t
            defaults:
              continue_on_error: true
            steps:
              - { name: bydefault, shell: exit 1 }
              - { name: strict, shell: exit 1, continue_on_error: false, undo: { name: u, shell: exit 1, continue_on_error: false } }
              - name: grp
                continue_on_error: true
                sequential:
                  - { name: inner, shell: exit 1, continue_on_error: false }
                finally:
                  - { name: fin, shell: exit 1, continue_on_error: false }
                undo:
                  - { name: ungrp, shell: exit 1, continue_on_error: false }
            """)
        let allowed = Executor.failureAllowedNodes(plan.root)
        var names: [String] = []
        func visit(_ node: PlanNode) {
            if let name = node.name, allowed.contains(ObjectIdentifier(node)) { names.append(name) }
            for child in node.children + node.finally + node.undo { visit(child) }
        }
        visit(plan.root)
        #expect(names == ["bydefault", "grp", "inner", "fin"])
    }

    static func transition(_ to: StepState, allowed: Bool, exitCode: Int32? = 3) throws -> StepTransition {
        let plan = try PlannerTests.plan("version: 1\nname: t\nsteps:\n  - { name: s, shell: exit 3 }\n")
        let step = StepRef(node: plan.root.children[0], failureAllowed: allowed)
        return StepTransition(step: step, from: .running, to: to, attempt: 1, exitCode: exitCode, reason: to == .timedOut ? "timed out after 1s" : nil,
                              time: .now(), elapsed: 0.5)
    }

    /// The end line says it after the reason, before the time; only on `failed` and
    /// `timed_out`, and only for a step it covers.
    @Test func theEndLineSaysAnAllowedFailureWasAllowed() throws {
        #expect(ReporterStyle.detail(try Self.transition(.failed, allowed: true)) == "exit 3 (allowed to fail) 0.5s")
        #expect(ReporterStyle.detail(try Self.transition(.timedOut, allowed: true)) == "timed out after 1s (allowed to fail) 0.5s")
        #expect(ReporterStyle.detail(try Self.transition(.failed, allowed: false)) == "exit 3 0.5s")
        #expect(ReporterStyle.detail(try Self.transition(.succeeded, allowed: true, exitCode: 0)) == "0.5s")
        #expect(ReporterStyle.detail(try Self.transition(.cancelled, allowed: true)) == "cancelled 0.5s")
        #expect(ReporterStyle.detail(try Self.transition(.failed, allowed: true), markAllowed: false) == "exit 3 0.5s")
    }

    /// The summary counts per final state and says how many of a count were allowed:
    /// `(N allowed)`, or `(allowed)` when all were.
    @Test func theSummarySaysHowManyFailuresWereAllowed() {
        let style = ReporterStyle(color: false)
        var outcome = RunOutcome(status: .failed, exitCode: 1, counts: [.succeeded: 1, .failed: 2, .timedOut: 1, .skipped: 1],
                                 elapsed: 0.4, time: .now(), allowedFailures: [.failed: 1, .timedOut: 1])
        #expect(style.summary(outcome) == "✗ failed: 1 succeeded, 2 failed (1 allowed), 1 timed_out (allowed), 1 skipped in 0.4s")
        outcome.allowedFailures = [:]
        #expect(style.summary(outcome) == "✗ failed: 1 succeeded, 2 failed, 1 timed_out, 1 skipped in 0.4s")
    }
}
