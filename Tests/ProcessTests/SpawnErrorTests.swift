import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import FlowKit
import Testing

/// Spawn failures are thrown as clear errors, never crashes.
struct SpawnErrorTests {
    @Test func missingDirectoryIsNamed() throws {
        for executable in ["true", "/bin/true", "./relative"] {
            let spec = ChildSpec(executable: executable, environment: TestSupport.environment, directory: "/nonexistent/dir")
            #expect(throws: SpawnError.directoryNotFound("/nonexistent/dir")) {
                try ProcessHub.shared.spawn(spec)
            }
        }
        let error = SpawnError.directoryNotFound("/nonexistent/dir")
        #expect(error.description == "working directory `/nonexistent/dir` does not exist")
        // A relative one says where it was looked for: where flow runs, not the workflow's
        // directory (go-task's rule, which a user coming from it expects).
        #expect(SpawnError.directoryNotFound("web").description
                == "working directory `web` does not exist (relative to \(FileManager.default.currentDirectoryPath), where flow runs)")
    }

    /// A working directory that is a file is not said to be missing.
    @Test func fileAsDirectoryIsNamed() throws {
        for executable in ["true", "/bin/true"] {
            let spec = ChildSpec(executable: executable, environment: TestSupport.environment, directory: "/etc/passwd")
            #expect(throws: SpawnError.notADirectory("/etc/passwd")) {
                try ProcessHub.shared.spawn(spec)
            }
        }
        #expect(SpawnError.notADirectory("/etc/passwd").description == "working directory `/etc/passwd` is not a directory")
    }

    @Test func missingExecutableIsNamed() throws {
        for executable in ["flow-no-such-command", "/no/such/file"] {
            let spec = ChildSpec(executable: executable, environment: TestSupport.environment)
            #expect(throws: SpawnError.executableNotFound(executable)) {
                try ProcessHub.shared.spawn(spec)
            }
        }
    }

    @Test func nonExecutableFilesFail() throws {
        var template = Array("/tmp/flow-proc-test-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        _ = "no shebang here\n".withCString { write(fd, $0, strlen($0)) }
        close(fd)
        let spec = ChildSpec(executable: path, environment: TestSupport.environment)
        chmod(path, 0o644)
        #expect(throws: SpawnError.failed(executable: path, errno: EACCES)) {
            try ProcessHub.shared.spawn(spec)
        }
        chmod(path, 0o755)
        #expect(throws: SpawnError.failed(executable: path, errno: ENOEXEC)) {
            try ProcessHub.shared.spawn(spec)
        }
    }

    @Test func lookupUsesTheChildPath() {
        #expect(ExecutableLookup.resolve("sh", environment: ["PATH": "/nonexistent:/bin"]) == "/bin/sh")
        #expect(ExecutableLookup.resolve("sh", environment: ["PATH": "/nonexistent"]) == nil)
        #expect(ExecutableLookup.resolve("lib", environment: ["PATH": "/usr"]) == nil, "directories are not executables")
        #expect(ExecutableLookup.resolve("./x", environment: [:]) == "./x")
        // A relative entry is searched in the child's directory, and the path returned is
        // relative to it: the child execs it after its chdir (from a relative `directory`,
        // "usr/bin/sh" joined to it named another file there).
        #expect(ExecutableLookup.resolve("sh", environment: ["PATH": "bin"], directory: "/") == "bin/sh")
        #expect(ExecutableLookup.resolve("sh", environment: ["PATH": "bin"], directory: "/usr") == "bin/sh")
        #expect(ExecutableLookup.resolve("sh", environment: ["PATH": "bin"], directory: "/nonexistent") == nil)
    }

    /// A program found through a relative PATH entry from a relative directory runs: the
    /// lookup joined the two ("sub/bin/tool"), which the child, already in "sub", could not
    /// find (ENOENT: "not found"). The directory is made relative without a chdir (tests
    /// run in parallel in this process): `../..` up to the root from flow's directory.
    @Test func relativeEntryFromRelativeDirectoryRuns() async throws {
        let parent = "/tmp/flow-lookup-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        #expect(mkdir(parent, 0o755) == 0 && mkdir(parent + "/sub", 0o755) == 0 && mkdir(parent + "/sub/bin", 0o755) == 0)
        // Not `system("rm -rf …")`: glibc's `system` ignores SIGINT and SIGQUIT in the whole
        // process while it waits, and a test spawning meanwhile passed SIGINT ignored to its
        // child (`childrenStartWithDefaultSignalsAndEmptyMask` failed once so).
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let tool = parent + "/sub/bin/tool"
        let fd = open(tool, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        let script = "#!/bin/sh\necho found-$PWD\n"
        #expect(write(fd, script, script.utf8.count) == script.utf8.count)
        close(fd)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let cwd = String(cString: getcwd(&buffer, buffer.count))
        let up = cwd.split(separator: "/").map { _ in ".." }.joined(separator: "/")
        let directory = (up.isEmpty ? "." : up) + parent + "/sub"
        let found = ExecutableLookup.resolve("tool", environment: ["PATH": "bin"], directory: directory)
        #expect(found == "bin/tool")
        let spec = ChildSpec(executable: try #require(found), environment: ["PATH": "/usr/bin:/bin"], directory: directory)
        let (termination, output) = try await TestSupport.run(spec)
        #expect(termination == .exited(0))
        #expect(output.stdout == "found-\(parent)/sub\n")
    }

    /// Runs in a separate process (flow-proc-bench) because it lowers RLIMIT_NOFILE.
    @Test(.hangDetector)
    func descriptorExhaustionIsARetryableError() async throws {
        let bench = TestSupport.helper.replacingLastComponent(with: "flow-proc-bench")
        let spec = ChildSpec(executable: bench, arguments: ["probe-exhaustion"], environment: TestSupport.environment)
        let (termination, output) = try await TestSupport.run(spec)
        #expect(termination == .exited(0), "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.contains("exhausted: retryable"))
        #expect(output.stdout.contains("retry: ok"))
    }

    /// A spawn that keeps failing for lack of resources waits while another child of flow
    /// runs (its end frees them) and fails after `shortageLimit` with none running.
    @Test func resourceShortageFailsOnlyWithNoChildRunning() {
        let start = ContinuousClock.now
        var since: ContinuousClock.Instant?
        #expect(!Executor.shortageOutlasted(&since, childrenRunning: false, now: start))
        #expect(!Executor.shortageOutlasted(&since, childrenRunning: false, now: start + .seconds(9)))
        #expect(Executor.shortageOutlasted(&since, childrenRunning: false, now: start + .seconds(10)))
        // A child of flow running again starts the count afresh.
        #expect(!Executor.shortageOutlasted(&since, childrenRunning: true, now: start + .seconds(11)))
        #expect(since == nil)
        #expect(!Executor.shortageOutlasted(&since, childrenRunning: true, now: start + .seconds(60)))
        #expect(!Executor.shortageOutlasted(&since, childrenRunning: false, now: start + .seconds(61)))
        #expect(!Executor.shortageOutlasted(&since, childrenRunning: false, now: start + .seconds(70)))
        #expect(Executor.shortageOutlasted(&since, childrenRunning: false, now: start + .seconds(71)))
    }
}

extension String {
    func replacingLastComponent(with name: String) -> String {
        split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/" + name
    }
}
