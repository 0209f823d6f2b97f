#if canImport(Glibc)
import Glibc
#endif
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

    /// Feeds 20,000 numbered lines (about 470 KiB), one record each, and returns them.
    static func feedLines(_ log: inout FailureLog, _ step: StepRef) -> String {
        var all = ""
        for i in 0..<20_000 {
            let line = "line \(i) of the output\n"
            all += line
            feed(&log, step, line)
        }
        return all
    }

    @Test func shortOutputIsKeptWhole() throws {
        let step = try Self.step()
        var log = FailureLog()
        Self.feed(&log, step, "one\n")
        Array("two".utf8).withUnsafeBytes { log.record(step, OutputChannel.stdout, $0) }
        #expect(String(decoding: log.kept(step.path), as: UTF8.self) == "one\ntwo\n")
    }

    @Test func longOutputKeepsItsTailFromALineStart() throws {
        let step = try Self.step()
        var log = FailureLog()
        let all = Self.feedLines(&log, step)
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
        log.observe(StepTransition(step: step, from: .running, to: .succeeded, attempt: 1, time: .now()))
        #expect(log.kept(step.path).isEmpty)
        #expect(log.failed.isEmpty)
    }

    /// What `replay` writes for the failed `step`, through a file.
    static func replayed(_ log: FailureLog, _ step: StepRef) throws -> String {
        var template = Array("/tmp/flow-failure-log-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(fd >= 0)
        defer { close(fd); template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) } }
        log.replay(to: OutputWriter(fd: fd), style: ReporterStyle(color: false))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, $0.count, off_t(bytes.count)) }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func fail(_ log: inout FailureLog, _ step: StepRef) {
        log.observe(StepTransition(step: step, from: .running, to: .failed, attempt: 1, time: .now()))
    }

    /// With a spill (`tty`), the replay is the failed step's whole output, however long:
    /// what left memory is read back from the file, in order, and nothing is said missing.
    @Test func withASpillTheReplayIsTheWholeOutput() throws {
        let step = try Self.step()
        var log = FailureLog(spill: OutputSpill())
        let all = Self.feedLines(&log, step)
        Self.fail(&log, step)
        #expect(try Self.replayed(log, step) == "── output of \(step.label) ──\n" + all)
    }

    /// A spill that cannot be written (a full disk) keeps what it took and drops the rest,
    /// as without one, and the replay says how much and why, between the two.
    @Test func aSpillThatCannotBeWrittenSaysWhatItLeftOut() throws {
        let step = try Self.step()
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(full >= 0)
        var log = FailureLog(spill: OutputSpill(fd: full))
        let all = Self.feedLines(&log, step)
        Self.fail(&log, step)
        let lines = try Self.replayed(log, step).split(separator: "\n", omittingEmptySubsequences: false)
        let marker = try #require(lines[1].wholeMatch(of: /… \(([0-9]+) bytes of earlier output left out: cannot write to a temporary file in descriptor [0-9]+ \((.+)\)\)/),
                                  "\(lines[1])")
        #expect(marker.2.lowercased().contains("no space"), "\(marker.2)")
        let kept = lines[2...].joined(separator: "\n")
        #expect(kept.hasPrefix("line ") && all.hasSuffix(kept))
        #expect(Int(marker.1)! + kept.utf8.count == all.utf8.count)
    }
}

extension FailureLogTests {
    /// A spill that fills up part way (the disk became full) keeps what it took and says
    /// what it left out after it on a line of its own: the spilled part can end inside a
    /// line (a line and its `\n` are recorded apart), and the note was glued to that line's
    /// start (`line 12 xxx…… (N bytes of later output left out: …)`).
    @Test func aSpillThatFillsUpPartWaySaysWhatItLeftOutOnALineOfItsOwn() throws {
        let step = try Self.step()
        // A file the spill writes until its descriptor is made read-only (as a full disk
        // would stop it): what it wrote is still read back.
        var template = Array("/tmp/flow-failure-log-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(fd >= 0)
        let readOnly = template.withUnsafeBufferPointer { open($0.baseAddress!, O_RDONLY | O_CLOEXEC) }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        try #require(readOnly >= 0)
        var log = FailureLog(spill: OutputSpill(fd: fd))
        // Each line as long as a chunk: every chunk holds a line without its `\n`.
        let text = String(repeating: "x", count: FailureLog.chunkBytes)
        for i in 0..<8 { Array("\(i)\(text.dropFirst())".utf8).withUnsafeBytes { log.record(step, OutputChannel.stdout, $0) } }
        #expect(dup2(readOnly, fd) == fd)
        close(readOnly)
        for i in 8..<16 { Array("\(i)\(text.dropFirst(2))".utf8).withUnsafeBytes { log.record(step, OutputChannel.stdout, $0) } }
        Self.fail(&log, step)
        let lines = try Self.replayed(log, step).split(separator: "\n", omittingEmptySubsequences: false)
        let notes = lines.filter { $0.contains("left out") }
        #expect(notes.count == 1 && notes[0].hasPrefix("… ("), "\(notes.map { $0.suffix(120) })")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("… (") || $0.utf8.count <= text.utf8.count }, "a note glued to a line")
    }

    /// An extent that cannot be read back after one that could is said on a line of its
    /// own, too.
    @Test func anExtentThatCannotBeReadBackIsSaidOnALineOfItsOwn() throws {
        let step = try Self.step()
        var template = Array("/tmp/flow-failure-log-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(fd >= 0)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        var log = FailureLog(spill: OutputSpill(fd: fd))
        let text = String(repeating: "x", count: FailureLog.chunkBytes)
        for _ in 0..<8 { Array(text.utf8).withUnsafeBytes { log.record(step, OutputChannel.stdout, $0) } }
        // The first extent (a line without its `\n`) is still there, the rest is gone.
        #expect(ftruncate(fd, off_t(FailureLog.chunkBytes)) == 0)
        Self.fail(&log, step)
        let lines = try Self.replayed(log, step).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.contains { $0.hasPrefix("… (") && $0.contains("could not be read back") })
        #expect(!lines.contains { $0.hasPrefix("x") && $0.contains("… (") }, "a note glued to a line")
    }
}
