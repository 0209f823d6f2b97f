#if canImport(Glibc)
import Glibc
#endif
@testable import FlowKit
import Testing

/// Standard streams, environment and working directory of children.
@Suite(.hangDetector)
struct InputOutputTests {
    @Test func stdinBytesAreFed() async throws {
        let (termination, output) = try await TestSupport.run(TestSupport.helperSpec(["--echo-stdin"], stdin: .string("hello\nworld\n")))
        #expect(termination == .exited(0))
        #expect(output.stdout == "hello\nworld\n")
    }

    @Test func largeStdinIsFedThroughTheLoop() async throws {
        let input = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let (termination, output) = try await TestSupport.run(TestSupport.helperSpec(["--echo-stdin"], stdin: .bytes(input)))
        #expect(termination == .exited(0))
        #expect(output.stdoutBytes == input)
    }

    @Test func unreadStdinNeitherBlocksNorFails() async throws {
        let input = [UInt8](repeating: 65, count: 2_000_000)
        let (termination, _) = try await TestSupport.run(TestSupport.helperSpec(["--exit", "0"], stdin: .bytes(input)))
        #expect(termination == .exited(0))
    }

    @Test func stdinDefaultsToDevNull() async throws {
        let (termination, output) = try await TestSupport.run(TestSupport.helperSpec(["--echo-stdin", "--print", "eof"]))
        #expect(termination == .exited(0))
        #expect(output.stdout == "eof\n")
    }

    @Test func stdoutAndStderrAreSeparate() async throws {
        let (_, output) = try await TestSupport.run(TestSupport.helperSpec(["--print", "out", "--stderr", "err"]))
        #expect(output.stdout == "out\n")
        #expect(output.stderr == "err\n")
    }

    @Test func largeOutputArrivesComplete() async throws {
        let (termination, output) = try await TestSupport.run(TestSupport.helperSpec(["--print-bytes", "20000000"]))
        #expect(termination == .exited(0))
        #expect(output.stdoutBytes.count == 20_000_000)
    }

    /// While few children run, flow holds its own copies of their pipes' write ends until
    /// each exits (one wake-up per exit instead of two): they must go at the exit, or no
    /// capture would end before the drain deadline.
    @Test func heldWriteEndsAreReleasedWhenEachChildExits() async throws {
        for i in 0..<20 {
            let (child, output) = try TestSupport.start(TestSupport.helperSpec(["--print", "line \(i)", "--stderr", "err \(i)"]))
            #expect(await child.termination == .exited(0))
            #expect(!child.outputDrainTimedOut)
            #expect(output.stdout == "line \(i)\n")
            #expect(output.stderr == "err \(i)\n")
        }
    }

    @Test func outputOfAKilledChildIsKeptToTheLastByte() async throws {
        let (child, output) = try TestSupport.start(TestSupport.helperSpec(["--print-bytes", "3000000", "ready", "--sleep", "30"]))
        #expect(await output.waitFor("ready\n"), "\(String(describing: child.currentTermination)) \(output.stderr)")
        child.kill()
        #expect(await child.termination == .signaled(SIGKILL))
        #expect(output.stdoutBytes.count == 3_000_000 + 6)
    }

    @Test func inheritedOutputIsNotCaptured() async throws {
        let spec = ChildSpec(executable: TestSupport.helper, arguments: ["--exit", "4"], environment: TestSupport.environment, output: .inherit)
        let (termination, output) = try await TestSupport.run(spec)
        #expect(termination == .exited(4))
        #expect(output.stdout.isEmpty)
    }

    @Test func environmentIsExactlyTheGivenOne() async throws {
        let spec = ChildSpec(executable: "env", environment: ["PATH": "/usr/bin:/bin", "FLOW_X": "a b=c"])
        let (termination, output) = try await TestSupport.run(spec)
        #expect(termination == .exited(0))
        #expect(Set(output.stdout.split(separator: "\n")) == ["PATH=/usr/bin:/bin", "FLOW_X=a b=c"])
    }

    @Test func workingDirectoryIsSet() async throws {
        var spec = TestSupport.helperSpec(["--print-cwd"])
        spec.directory = "/usr/lib"
        let (_, output) = try await TestSupport.run(spec)
        #expect(output.stdout == "/usr/lib\n")
    }

    @Test func onlyStandardDescriptorsReachTheChild() async throws {
        // Some other child is running (its pipes and pidfd are open in this process).
        let (other, otherOutput) = try TestSupport.start(TestSupport.helperSpec(["ready", "--sleep", "30"]))
        #expect(await otherOutput.waitFor("ready\n"))
        let spec = ChildSpec(executable: "ls", arguments: ["/proc/self/fd"], environment: TestSupport.environment)
        let (_, output) = try await TestSupport.run(spec)
        other.kill()
        _ = await other.termination
        // 0, 1, 2 and the descriptor ls opened to read the directory.
        #expect(output.stdout.split(separator: "\n").count == 4, "\(output.stdout)")
    }

    /// A descriptor flow got without close-on-exec (a test runner's, a jobserver's) is not
    /// passed on either.
    @Test func inheritedDescriptorsWithoutCloseOnExecDoNotReachTheChild() async throws {
        let leaked = open("/dev/null", O_RDONLY)  // no O_CLOEXEC
        #expect(leaked > 2)
        defer { close(leaked) }
        let spec = ChildSpec(executable: "ls", arguments: ["/proc/self/fd"], environment: TestSupport.environment)
        let (_, output) = try await TestSupport.run(spec)
        #expect(!output.stdout.split(separator: "\n").contains(Substring(String(leaked))), "\(output.stdout)")
        #expect(output.stdout.split(separator: "\n").count == 4, "\(output.stdout)")
    }

    /// With many children running, a spawn shares flow's descriptor table until the child
    /// has copied only its first few descriptors: the child still gets exactly its stdin,
    /// stdout and stderr, nothing else, and its pipes reach EOF when it exits.
    @Test func aChildSpawnedBesideManyOthersGetsOnlyItsOwnDescriptors() async throws {
        var others: [ChildProcess] = []
        for _ in 0..<(ProcessHub.sharedTableThreshold + 4) {
            others.append(try TestSupport.start(TestSupport.helperSpec(["--sleep", "30"])).0)
        }
        defer { for other in others { other.kill() } }
        let leaked = open("/dev/null", O_RDONLY)  // no O_CLOEXEC
        defer { close(leaked) }

        let listing = ChildSpec(executable: "ls", arguments: ["/proc/self/fd"], environment: TestSupport.environment)
        let (_, list) = try await TestSupport.run(listing)
        #expect(list.stdout.split(separator: "\n").count == 4, "\(list.stdout)")

        let echo = TestSupport.helperSpec(["--echo-stdin", "--stderr", "done"], stdin: .string("through the slot\n"))
        let (termination, output) = try await TestSupport.run(echo)
        #expect(termination == .exited(0))
        #expect(output.stdout == "through the slot\n")
        #expect(output.stderr == "done\n")
        for other in others { other.kill(); _ = await other.termination }
    }

    /// Under a pseudo-terminal made by `script`, through flow-proc-bench (a test process
    /// cannot take a controlling terminal itself).
    @Test func interactiveChildOwnsTheTerminalWhileItRuns() async throws {
        let bench = TestSupport.helper.replacingLastComponent(with: "flow-proc-bench")
        guard let script = ExecutableLookup.resolve("script", environment: TestSupport.environment) else { return }
        let spec = ChildSpec(executable: script, arguments: ["-qec", "\(bench) probe-interactive \(TestSupport.helper)", "/dev/null"],
                             environment: TestSupport.environment)
        let (termination, output) = try await TestSupport.run(spec)
        let lines = output.stdout.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }).map(String.init)
        #expect(termination == .exited(0), "\(output.stdout)")
        #expect(lines == ["before: foreground", "foreground yes", "child: exited with status 0", "after: foreground"])
    }
}
