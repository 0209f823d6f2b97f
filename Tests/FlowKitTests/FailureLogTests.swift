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

    /// One line longer than the window: its end, after `…`, cut between characters (it
    /// showed nothing: the window held no line start).
    @Test func aLineLongerThanTheWindowKeepsItsEnd() throws {
        let step = try Self.step()
        var log = FailureLog()
        Self.feed(&log, step, "first\n")
        // Three-byte characters, so most cuts land inside one.
        let long = String(repeating: "€", count: 40_000) + " the end"
        for start in stride(from: 0, to: long.utf8.count, by: 1000) {
            let piece = Array(long.utf8)[start..<min(start + 1000, long.utf8.count)]
            piece.withUnsafeBytes { log.record(step, lines: $0) }
        }
        Self.feed(&log, step, "\n")
        let bytes = log.kept(step.path)
        let kept = try #require(String(validating: bytes, as: UTF8.self), "valid UTF-8")
        #expect(kept.hasPrefix("…€"))
        #expect(kept.hasSuffix("€ the end\n"))
        #expect(bytes.count <= FailureLog.maxBytes + 3)
        #expect(bytes.count > FailureLog.maxBytes - 10)
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
