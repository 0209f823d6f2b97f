@testable import FlowKit
import Testing

/// What the reporters keep of a step's output for the replay of failed steps.
struct FailureLogTests {
    static func step() throws -> StepRef {
        let plan = try PlannerTests.plan("version: 1\nname: t\nsteps:\n  - shell: exit 1\n")
        return StepRef(node: plan.root.children[0])
    }

    static func feed(_ log: inout FailureLog, _ step: StepRef, _ text: String) {
        Array(text.utf8).withUnsafeBytes { log.record(step, lines: $0) }
    }

    @Test func shortOutputIsKeptWhole() throws {
        let step = try Self.step()
        var log = FailureLog()
        Self.feed(&log, step, "one\n")
        Array("two".utf8).withUnsafeBytes { log.record(step, .stdout, $0) }
        #expect(String(decoding: log.kept(step.path), as: UTF8.self) == "one\ntwo\n")
    }

    @Test func longOutputKeepsItsTailFromALineStart() throws {
        let step = try Self.step()
        var log = FailureLog()
        var all = ""
        for i in 0..<20_000 {
            let line = "line \(i) of the output\n"
            all += line
            Self.feed(&log, step, line)
        }
        let kept = String(decoding: log.kept(step.path), as: UTF8.self)
        #expect(kept.utf8.count <= FailureLog.maxBytes)
        #expect(kept.utf8.count > FailureLog.maxBytes - 100)
        #expect(kept.hasPrefix("line "), "cut at a line start")
        #expect(all.hasSuffix(kept), "the most recent bytes, in order")
    }

    @Test func aSucceededStepIsForgotten() throws {
        let step = try Self.step()
        var log = FailureLog()
        Self.feed(&log, step, "x\n")
        log.finished(StepTransition(step: step, from: .running, to: .succeeded, attempt: 1, time: .now()))
        #expect(log.kept(step.path).isEmpty)
        #expect(log.failed.isEmpty)
    }
}
