#if canImport(Glibc)
import Glibc
#endif
@testable import FlowKit
import Testing

/// How `--output grouped` holds a step's output: in memory up to a limit, the rest in a
/// temporary file, replayed in order and byte for byte.
struct GroupedSpillTests {
    /// A known pattern of runs on both streams, lines and unfinished pieces, some `\r\n`.
    static func pattern() -> [(OutputChannel, [UInt8])] {
        var runs: [(OutputChannel, [UInt8])] = []
        for i in 0..<400 {
            let stream: OutputChannel = i % 3 == 0 ? .stderr : .stdout
            runs.append((stream, Array("run \(i) \(String(repeating: "x", count: i % 97))\(i % 5 == 0 ? "\r\n" : "\n")".utf8)))
        }
        return runs
    }

    /// Consecutive runs on one stream joined, as a block writes them.
    static func joined(_ runs: [(OutputChannel, [UInt8])]) -> [(OutputChannel, [UInt8])] {
        var out: [(OutputChannel, [UInt8])] = []
        for (stream, bytes) in runs {
            if out.last?.0 == stream { out[out.count - 1].1 += bytes } else { out.append((stream, bytes)) }
        }
        return out
    }

    static func replayed(_ held: HeldOutput, _ spill: OutputSpill) -> [(OutputChannel, [UInt8])] {
        var runs: [(OutputChannel, [UInt8])] = []
        let lost = held.replay(from: spill) { stream, bytes in runs.append((stream, Array(bytes))) }
        #expect(lost == nil)
        return joined(runs)
    }

    static func same(_ a: [(OutputChannel, [UInt8])], _ b: [(OutputChannel, [UInt8])]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    @Test func outputPastTheLimitIsSpilledAndReplayedInOrder() throws {
        let spill = OutputSpill(directory: "/tmp")
        var held = HeldOutput()
        let runs = Self.pattern()
        for (stream, bytes) in runs {
            bytes.withUnsafeBytes { held.append($0, stream, endingLine: false, spill: spill, memoryLimit: 1000) }
        }
        #expect(held.extents.count > 10, "spilled")
        #expect(held.heldInMemory < 1200)
        #expect(Self.same(Self.replayed(held, spill), Self.joined(runs)))
    }

    @Test func aLineFromPrintGetsItsLineBreak() throws {
        let spill = OutputSpill(directory: "/tmp")
        var held = HeldOutput()
        Array("one".utf8).withUnsafeBytes { held.append($0, .stdout, endingLine: true, spill: spill, memoryLimit: 2) }
        Array("two".utf8).withUnsafeBytes { held.append($0, .stdout, endingLine: true, spill: spill, memoryLimit: 2) }
        #expect(Self.same(Self.replayed(held, spill), [(.stdout, Array("one\ntwo\n".utf8))]))
    }

    /// A full disk: spilling stops, says why, and the output stays in memory, whole.
    @Test func aFullDiskKeepsTheOutputInMemory() throws {
        let full = open("/dev/full", O_RDWR | O_CLOEXEC)
        try #require(full >= 0)
        let spill = OutputSpill(fd: full)
        var held = HeldOutput()
        let runs = Self.pattern()
        for (stream, bytes) in runs {
            bytes.withUnsafeBytes { held.append($0, stream, endingLine: false, spill: spill, memoryLimit: 1000) }
        }
        #expect(spill.failure?.contains("no space left on device") == true, "\(spill.failure ?? "nil")")
        #expect(held.extents.isEmpty)
        #expect(Self.same(Self.replayed(held, spill), Self.joined(runs)))
    }

    @Test func anUnwritableDirectoryIsSaidOnce() throws {
        let spill = OutputSpill(directory: "/nonexistent-flow-spill-dir")
        var held = HeldOutput()
        Array(repeating: UInt8(ascii: "a"), count: 3000).withUnsafeBytes {
            held.append($0, .stdout, endingLine: false, spill: spill, memoryLimit: 1000)
        }
        #expect(spill.failure?.contains("/nonexistent-flow-spill-dir") == true)
        #expect(held.heldInMemory > 3000)
    }

    /// The reporter, spilling to a full disk: one warning, and the block is written whole.
    /// Each step's own limit (1 MiB) did not bound the run: 1,000 concurrent steps each
    /// printing just under it held about a gigabyte. Past the overall limit the block being
    /// added to is spilled, whatever its size; every block still replays whole.
    @Test func allBlocksTogetherStayUnderTheOverallLimit() throws {
        let spill = OutputSpill(directory: "/tmp")
        let reporter = GroupedReporter(color: false, github: false, quiet: false, stdout: -1, stderr: -1, spill: spill)
        let plan = try PlannerTests.plan("version: 1\nname: t\nsteps:\n  - concurrent:\n"
            + (0..<40).map { "      - shell: echo \($0)\n" }.joined())
        let steps = plan.root.children[0].children.map { StepRef(node: $0) }
        let limit = 256 << 10
        let line = Array(String(repeating: "z", count: 511).utf8) + [0x0A]
        var peak = 0
        for round in 0..<64 {  // 32 KiB a step, 1.25 MiB in all: five times the limit
            for (i, step) in steps.enumerated() {
                let text = line.map { $0 == UInt8(ascii: "z") ? UInt8(ascii: "a") + UInt8((i + round) % 26) : $0 }
                text.withUnsafeBytes { reporter.hold(step, $0, i % 3 == 0 ? .stderr : .stdout, endingLine: false, limit: limit) }
                peak = max(peak, reporter.heldTotal)
            }
        }
        #expect(peak <= limit + line.count)
        #expect(reporter.heldTotal == reporter.buffers.values.reduce(0) { $0 + $1.heldInMemory })
        for (i, step) in steps.enumerated() {
            let held = try #require(reporter.buffers[step.path])
            var expected: [UInt8] = []
            for round in 0..<64 { expected += line.map { $0 == UInt8(ascii: "z") ? UInt8(ascii: "a") + UInt8((i + round) % 26) : $0 } }
            let replayed = Self.replayed(held, spill)
            #expect(replayed.count == 1 && replayed[0].0 == (i % 3 == 0 ? .stderr : .stdout) && replayed[0].1 == expected)
        }
    }

    @Test func theReporterWarnsOnceAndWritesTheBlockWhole() throws {
        let full = open("/dev/full", O_RDWR | O_CLOEXEC)
        try #require(full >= 0)
        var outName = Array("/tmp/flow-spill-test-out-XXXXXX".utf8CString)
        var errName = Array("/tmp/flow-spill-test-err-XXXXXX".utf8CString)
        let outFD = outName.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let errFD = errName.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        defer {
            outName.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            errName.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            close(outFD)
            close(errFD)
        }
        let reporter = GroupedReporter(color: false, github: false, quiet: false, stdout: outFD, stderr: errFD,
                                       spill: OutputSpill(fd: full))
        let step = try FailureLogTests.step()
        let line = Array(String(repeating: "y", count: 1023).utf8) + [0x0A]
        var expected: [UInt8] = []
        for _ in 0..<3000 {  // ~3 MiB: past the limit three times
            line.withUnsafeBytes { reporter.outputLines(step, .stdout, lines: $0) }
            expected += line
        }
        reporter.abandon(exitStatus: 130)
        func contents(_ fd: Int32) -> [UInt8] {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            var at: off_t = 0
            while true {
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, at) }
                if n <= 0 { break }
                bytes += buffer[0..<n]
                at += off_t(n)
            }
            return bytes
        }
        #expect(contents(outFD) == expected)
        let err = String(decoding: contents(errFD), as: UTF8.self)
        #expect(err.components(separatedBy: "warning: --output grouped: cannot write to a temporary file").count == 2, "\(err)")
        #expect(err.contains("held in memory"), "\(err)")
    }

    /// Part of a `--quiet` block that cannot be read back from the spill file (here a
    /// write-only descriptor: every read fails) is named by the step's label, as a block
    /// written at once is, not by its path (`1`).
    @Test func aBlockThatCannotBeReadBackIsNamedByItsLabel() throws {
        var spillName = Array("/tmp/flow-spill-test-wo-XXXXXX".utf8CString)
        var errName = Array("/tmp/flow-spill-test-err-XXXXXX".utf8CString)
        let made = spillName.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let errFD = errName.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        let writeOnly = spillName.withUnsafeBufferPointer { open($0.baseAddress!, O_WRONLY | O_CLOEXEC) }
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer {
            spillName.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            errName.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            close(made)
            close(errFD)
            close(devNull)
        }
        try #require(made >= 0 && errFD >= 0 && writeOnly >= 0 && devNull >= 0)
        let plan = try PlannerTests.plan("version: 1\nname: t\nsteps:\n  - name: build\n    shell: exit 1\n")
        let step = StepRef(node: plan.root.children[0])
        let reporter = GroupedReporter(color: false, github: false, quiet: true, stdout: devNull, stderr: errFD,
                                       spill: OutputSpill(fd: writeOnly))
        let line = Array(String(repeating: "y", count: 1023).utf8) + [0x0A]
        for _ in 0..<100 {  // 100 KiB: a kept block spills from 64 KiB
            line.withUnsafeBytes { reporter.outputLines(step, .stdout, lines: $0) }
        }
        reporter.handle(.stepState(StepTransition(step: step, from: .running, to: .failed, attempt: 1, time: .now())))
        reporter.handle(.runFinished(RunOutcome(status: .failed, exitCode: 1, counts: [.failed: 1], elapsed: 0, time: .now())))
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { pread(errFD, $0.baseAddress, $0.count, 0) }
        let err = String(decoding: buffer[0..<max(n, 0)], as: UTF8.self)
        #expect(err.contains("warning: 102400 bytes of build's output could not be read back"), "\(err)")
    }
}
