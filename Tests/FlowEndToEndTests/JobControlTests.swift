import CTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Whether a pseudo-terminal can be opened here (a container without devpts cannot).
private let hasPseudoTerminals: Bool = {
    var path = [CChar](repeating: 0, count: 128)
    let master = ctest_open_pty(&path, path.count)
    if master >= 0 { close(master) }
    return master >= 0
}()

/// Ctrl-Z through a real terminal: flow runs in a pseudo-terminal under a small
/// job-control shell (`flow-test-child --job-shell`), which reports when its job stops
/// and continues it on request (SIGUSR1: `fg`). The test types into the terminal's master
/// side as a user would.
@Suite(.enabled(if: hasPseudoTerminals, "this machine gives no pseudo-terminal (/dev/ptmx)"))
struct JobControlTests {
    /// The master side of a new pseudo-terminal, and the path of its slave.
    final class Terminal {
        let master: Int32
        let slavePath: String
        private var seen = Data()

        init() throws {
            var path = [CChar](repeating: 0, count: 128)
            master = ctest_open_pty(&path, path.count)
            guard master >= 0 else { throw LiveFlow.SpawnFailure(message: "no pseudo-terminal: errno \(errno)") }
            slavePath = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        deinit { close(master) }

        /// Types `text` (control characters included: "\u{1a}" is Ctrl-Z).
        func type(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        }

        /// Waits until the terminal showed `text`; reading keeps its buffer from filling.
        func waitFor(_ text: String, timeout: Double = 10) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline {
                let n = read(master, &buffer, buffer.count)
                if n > 0 { seen.append(contentsOf: buffer[0..<n]) }
                if String(decoding: seen, as: UTF8.self).contains(text) { return true }
                if n <= 0 { usleep(10_000) }
            }
            return false
        }

        /// Reads what the terminal has shown so far, without waiting: a run that writes
        /// more than the terminal buffers would otherwise block.
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while case let n = read(master, &buffer, buffer.count), n > 0 { seen.append(contentsOf: buffer[0..<n]) }
        }

        var text: String { String(decoding: seen, as: UTF8.self) }
    }

    /// A directory in `box` reached through a chain of 20 symlinks, each a walk down 800
    /// directories and back up: resolving it (a `chdir` to it) takes milliseconds rather
    /// than microseconds, which widens the moment of a step's start where it is done.
    /// 20, half the kernel's limit of 40 links in one lookup: a lookup whose lock-free walk
    /// is disturbed (a rename anywhere: the `..`s check the rename sequence) starts again
    /// with the links it already followed still counted, so at 30 a step's `chdir` failed
    /// now and then with "too many levels of symbolic links" under the full suite (at 40,
    /// more often), which the step reported as `cannot run`, failing the run.
    static func slowDirectory(in box: RunSandbox) throws -> String {
        let base = box.path("slow")
        let depth = 800
        let down = Array(repeating: "a", count: depth).joined(separator: "/")
        let up = Array(repeating: "..", count: depth).joined(separator: "/")
        try FileManager.default.createDirectory(atPath: base + "/" + down, withIntermediateDirectories: true)
        for link in 0..<19 {
            #expect(symlink("\(down)/\(up)/L\(link + 1)", "\(base)/L\(link)") == 0, "symlink: errno \(errno)")
        }
        #expect(symlink(".", "\(base)/L19") == 0)
        return base + "/L0"
    }


    /// The sandbox's step processes (flow-test-child running a step, not the job shell).
    static func steps(in box: RunSandbox, shell: pid_t) -> [pid_t] {
        RunSandbox.processes(withMarker: box.marker).filter { pid in
            guard pid != shell, let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: cmdline, as: UTF8.self).contains("flow-test-child\u{0}ready")
        }
    }

    /// Waits until every process in `pids` is in `state`.
    static func waitUntil(_ pids: [pid_t], are state: Character, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !pids.isEmpty, pids.allSatisfy({ RunSandbox.status(of: $0)?.state == state }) { return true }
            usleep(10_000)
        }
        return false
    }

    /// `flow run wf.yaml --output prefixed ARGS` in `box`, under the job shell on a new
    /// terminal: the terminal, and the shell (which reports the job's stops and exit).
    static func startUnderJobShell(_ box: RunSandbox, _ extra: [String] = []) throws -> (Terminal, LiveFlow) {
        let terminal = try Terminal()
        let shell = try LiveFlow(executable: RunSandbox.childPath,
                                 arguments: ["--job-shell", terminal.slavePath, RunSandbox.flowPath, "run", "wf.yaml",
                                             "--output", "prefixed"] + extra,
                                 environment: box.environment, directory: box.root.path, ownGroup: false)
        return (terminal, shell)
    }

    /// A run of `workflow` under the job shell, typed Ctrl-Z once `ready` showed on the
    /// terminal and reported stopped. Its processes are killed when it goes (when an
    /// expectation failed midway).
    final class StoppedRun {
        let box: RunSandbox
        let terminal: Terminal
        let shell: LiveFlow

        init(_ workflow: String, ready: String) throws {
            box = try RunSandbox()
            try box.write("wf.yaml", workflow)
            (terminal, shell) = try JobControlTests.startUnderJobShell(box, ["--no-journal"])
            #expect(terminal.waitFor(ready), "\(terminal.text)")
            terminal.type("\u{1a}")
            #expect(shell.waitForLine("job stopped \(SIGTSTP)"), "\(shell.stdout)\n\(terminal.text)")
        }

        deinit { box.killLeftovers() }

        /// The step processes (flow-test-child started by a step, not the job shell).
        var steps: [pid_t] { JobControlTests.steps(in: box, shell: shell.pid) }
    }

    /// Ctrl-Z with the terminal at flow: the step's group stops, then flow (as a Ctrl-Z
    /// stop, signal 20, which is what the shell reports); `fg` continues both, and the run
    /// still answers Ctrl-C.
    @Test func ctrlZStopsTheStepsWithFlowAndFgContinuesThem() throws {
        let run = try StoppedRun("""
            steps:
              - name: work
                shell: $CHILD ready --sleep 30
            """, ready: "work | ready")
        let steps = run.steps
        #expect(steps.count == 1)
        #expect(Self.waitUntil(steps, are: "T"), "the step stopped with flow")
        kill(run.shell.pid, SIGUSR1)
        #expect(run.shell.waitForLine("job continued"))
        #expect(Self.waitUntil(steps, are: "S"), "the step continued with flow")
        run.terminal.type("\u{3}")
        #expect(run.shell.waitForLine("job exit 130"), "\(run.shell.stdout)\n\(run.terminal.text)")
        #expect(run.box.leftoverProcesses().isEmpty)
    }

    /// Ctrl-Z and `fg`, over and over, while short steps start one after another. A Ctrl-Z
    /// that came while a step's process was being started (still in flow's process group)
    /// stopped that process before its exec, while flow's spawning thread waited for the
    /// exec: flow could neither stop nor go on, and the run hung for good (within the first
    /// few Ctrl-Zs, every time). Now every Ctrl-Z stops the job, every `fg` continues it,
    /// and the run ends as usual.
    @Test func ctrlZAndFgOverAndOverDuringShortStepsNeverHangTheRun() throws {
        let box = try RunSandbox()
        defer { box.killLeftovers() }
        try box.write("wf.yaml", "steps:\n  - name: first\n    shell: echo ready\n" + String(repeating: "  - shell: \"true\"\n", count: 3000))
        let (terminal, shell) = try Self.startUnderJobShell(box, ["--no-journal"])
        // Before that, the terminal may not be flow's yet.
        #expect(terminal.waitFor("| ready"), "\(terminal.text)")
        func count(_ line: String, _ text: String) -> Int { text.split(separator: "\n").filter { $0 == line }.count }
        var stops = 0
        while stops < 30 {
            terminal.drain()
            terminal.type("\u{1a}")
            // Stopped, or the run ended before the Ctrl-Z reached it.
            var ended = false
            let answered = shell.waitFor(timeout: 10) { out, _ in
                ended = out.contains("job exit")
                return ended || count("job stopped \(SIGTSTP)", out) > stops
            }
            guard answered else {
                Issue.record("no answer to Ctrl-Z number \(stops + 1): the run hung\n\(shell.stdout)")
                return
            }
            if ended { break }
            stops += 1
            kill(shell.pid, SIGUSR1)
            #expect(shell.waitFor(timeout: 10) { out, _ in count("job continued", out) >= stops })
        }
        #expect(stops >= 5, "the run ended before the test could press Ctrl-Z 5 times: \(shell.stdout)")
        #expect(terminal.waitFor("3001 succeeded", timeout: 120), "\(terminal.text.suffix(2000))")
        #expect(shell.waitForLine("job exit 0"), "\(shell.stdout)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// Ctrl-Z and `fg`, over and over, while short interactive steps start one after
    /// another. An interactive step's process takes the terminal's foreground itself,
    /// before its exec: a Ctrl-Z typed between the two stopped it there, with flow's
    /// spawning thread waiting for that exec and flow running on, never stopped: the run
    /// hung for good, and Ctrl-C could not end it (found by the randomized job-control
    /// audit). Each step's `dir` takes milliseconds to enter (the child's chdir is in that
    /// window), so most Ctrl-Zs land there; every one must stop the job. A Ctrl-Z typed as
    /// a step exits reaches nobody (the terminal's foreground group is empty then, as
    /// under a shell between two jobs): it is typed again once the run was seen going on.
    @Test func ctrlZWhileAnInteractiveStepIsStartingStopsTheJob() throws {
        let box = try RunSandbox()
        defer { box.killLeftovers() }
        let slow = try Self.slowDirectory(in: box)
        try box.write("wf.yaml", "steps:\n  - name: first\n    shell: echo ready\n"
            + String(repeating: "  - interactive: true\n    dir: \(slow)\n    shell: \"true\"\n", count: 1000))
        let (terminal, shell) = try Self.startUnderJobShell(box, ["--no-journal"])
        #expect(terminal.waitFor("| ready"), "\(terminal.text)")
        func count(_ line: String, _ text: String) -> Int { text.split(separator: "\n").filter { $0 == line }.count }
        func started() -> Int { terminal.drain(); return terminal.text.components(separatedBy: "\u{25B6} ").count - 1 }
        var stops = 0
        while stops < 10 {
            let before = started()
            terminal.type("\u{1a}")
            // Stopped; or the run ended; or it went on for 3 more steps: the Ctrl-Z was lost.
            // Polled, reading the terminal all along: a full terminal would block flow.
            var ended = false
            var lost = false
            var answered = false
            let deadline = Date().addingTimeInterval(10)
            while !answered && Date() < deadline {
                let out = shell.stdout
                ended = out.contains("job exit")
                lost = started() >= before + 3
                answered = ended || lost || count("job stopped \(SIGTSTP)", out) > stops
                if !answered { usleep(10_000) }
            }
            guard answered else {
                Issue.record("no answer to Ctrl-Z number \(stops + 1), and the run went no further: it hung\n\(shell.stdout)\n\(terminal.text.suffix(500))")
                return
            }
            if ended { break }
            if count("job stopped \(SIGTSTP)", shell.stdout) == stops { continue }  // lost
            stops += 1
            kill(shell.pid, SIGUSR1)
            #expect(shell.waitFor(timeout: 10) { out, _ in count("job continued", out) >= stops })
        }
        #expect(stops >= 5, "the run ended before the test could press Ctrl-Z 5 times: \(shell.stdout)")
        // Reading the terminal (the summary) keeps a full terminal from blocking flow.
        #expect(terminal.waitFor("1001 succeeded", timeout: 120), "\(terminal.text.suffix(2000))")
        #expect(shell.waitForLine("job exit 0"), "\(shell.stdout)\n\(terminal.text.suffix(2000))")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// Ctrl-Z with the terminal at an interactive step: the step stops (Ctrl-Z is its),
    /// flow notices, takes the terminal back and stops too; `fg` gives the terminal back
    /// to the step, which reads from it again: the run finishes normally.
    @Test func ctrlZOfAnInteractiveStepStopsFlowAndFgGivesItTheTerminalBack() throws {
        let run = try StoppedRun("""
            steps:
              - name: talk
                interactive: true
                shell: $CHILD ready --echo-stdin
              - print: after
            """, ready: "ready")
        #expect(Self.waitUntil(run.steps, are: "T"))
        kill(run.shell.pid, SIGUSR1)
        #expect(run.shell.waitForLine("job continued"))
        run.terminal.type("typed after fg\n")
        #expect(run.terminal.waitFor("typed after fg\r\ntyped after fg"), "echoed by the tty, then by the step: \(run.terminal.text)")
        run.terminal.type("\u{4}")
        #expect(run.shell.waitForLine("job exit 0"), "\(run.shell.stdout)\n\(run.terminal.text)")
        #expect(run.terminal.waitFor("after"))
    }

    /// `bg` after a Ctrl-Z of an interactive step: flow goes on in the background without
    /// taking the terminal from the shell; the step's next read of the terminal stops it
    /// (SIGTTIN), and flow with it; `fg` then gives the step the terminal.
    @Test func anInteractiveStepPutInTheBackgroundStopsAtItsNextReadAndFlowWithIt() throws {
        let run = try StoppedRun("""
            steps:
              - name: talk
                interactive: true
                shell: $CHILD ready --echo-stdin
            """, ready: "ready")
        kill(run.shell.pid, SIGUSR2)
        #expect(run.shell.waitForLine("job stopped \(SIGTSTP)", count: 2), "stopped again: \(run.shell.stdout)")
        kill(run.shell.pid, SIGUSR1)
        #expect(run.shell.waitForLine("job continued", count: 2))
        run.terminal.type("typed after fg\n\u{4}")
        #expect(run.shell.waitForLine("job exit 0"), "\(run.shell.stdout)\n\(run.terminal.text)")
        #expect(run.terminal.waitFor("typed after fg\r\ntyped after fg"), "\(run.terminal.text)")
    }

    /// Ctrl-C with the terminal at an interactive step reaches the step alone (it is the
    /// foreground group) and kills it; flow takes it as its own Ctrl-C, as a shell does:
    /// the step ends `cancelled`, the run `cancelled` with exit 130, the next step does not
    /// start, and `finally` and rollback run. (It was a step that `failed`: exit 1.) A
    /// second Ctrl-C at an interactive step of `finally` is the second signal: everything
    /// is killed at once.
    @Test(arguments: [false, true])
    func ctrlCOfAnInteractiveStepCancelsTheRun(_ twice: Bool) throws {
        let box = try RunSandbox()
        defer { box.killLeftovers() }
        try box.write("wf.yaml", """
            rollback: true
            steps:
              - name: made
                shell: echo made
                undo:
                  - shell: echo undone > undone.txt
              - name: talk
                interactive: true
                shell: $CHILD ready --echo-stdin
              - name: after
                shell: echo after > after.txt
            finally:
              - name: confirm
                interactive: true
                shell: $CHILD --print confirm? --echo-stdin
              - shell: echo finally > finally.txt
            """)
        let (terminal, shell) = try Self.startUnderJobShell(box)
        #expect(terminal.waitFor("ready"), "\(terminal.text)")
        terminal.type("\u{3}")
        #expect(terminal.waitFor("confirm?"), "\(terminal.text)")
        terminal.type(twice ? "\u{3}" : "yes\n\u{4}")
        #expect(shell.waitForLine("job exit 130"), "\(shell.stdout)\n\(terminal.text)")
        #expect(terminal.waitFor(twice ? "second signal" : "cancelled:"), "\(terminal.text)")
        #expect(terminal.text.contains("talk cancelled"), "\(terminal.text)")
        if twice {
            // The second Ctrl-C's note, then the `finally` step it ended (whose `⊘` came first).
            #expect(terminal.waitFor("confirm cancelled"), "\(terminal.text)")
            let text = terminal.text
            let noteFirst = text.range(of: "second signal; killed every step").map { note in
                text.range(of: "confirm cancelled").map { note.lowerBound < $0.lowerBound } ?? false
            }
            #expect(noteFirst == true, "\(text)")
        }
        #expect(!box.exists("after.txt"), "no step starts after the Ctrl-C")
        #expect(box.exists("finally.txt") != twice, "`finally` goes on after the first Ctrl-C only")
        #expect(box.exists("undone.txt") != twice, "the rollback runs after the first Ctrl-C only")
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.first?["state"] as? String == "cancelled", "\(runs)")
        #expect(runs.first?["exit_status"] as? Int == 130, "\(runs)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// The note that flow took a Ctrl-C an interactive step got comes before that step's
    /// end, as a signal's note does before what the signal stopped: its handler runs on
    /// another thread, and the step's `cancelled` was told first (a race: in about one
    /// run in three here, every time with the events written to a file).
    @Test func ctrlCOfAnInteractiveStepIsNotedBeforeTheStepsEnd() throws {
        let box = try RunSandbox()
        defer { box.killLeftovers() }
        try box.write("wf.yaml", """
            steps:
              - name: talk
                interactive: true
                shell: $CHILD --stderr ready --echo-stdin
            """)
        for round in 1...10 {
            let (terminal, shell) = try Self.startUnderJobShell(box, ["--output", "json", "--no-journal"])
            #expect(terminal.waitFor("ready"), "\(terminal.text)")
            terminal.type("\u{3}")
            #expect(shell.waitForLine("job exit 130"), "\(shell.stdout)\n\(terminal.text)")
            #expect(terminal.waitFor("run_finished"), "\(terminal.text)")
            let text = terminal.text
            let noteFirst = text.range(of: "SIGINT: stopping").map { note in
                text.range(of: #""to":"cancelled""#).map { note.lowerBound < $0.lowerBound } ?? false
            }
            #expect(noteFirst == true, "round \(round):\n\(text)")
            if noteFirst != true { break }
        }
    }

    /// Ctrl-\\ (SIGQUIT) at the terminal quits at once: it reaches flow (or an interactive
    /// step, the foreground group, which dies of it and flow takes it as its own), every
    /// step is killed, no `finally` or rollback, exit 131, the run recorded `cancelled`.
    @Test(arguments: [false, true])
    func ctrlBackslashQuitsAtOnce(_ interactive: Bool) throws {
        let box = try RunSandbox()
        defer { box.killLeftovers() }
        try box.write("wf.yaml", """
            steps:
              - name: talk
                interactive: \(interactive)
                shell: $CHILD --stderr ready --ignore TERM --ignore INT \(interactive ? "--echo-stdin" : "--sleep 30")
              - name: after
                shell: echo after > after.txt
            finally:
              - shell: echo finally > finally.txt
            """)
        let (terminal, shell) = try Self.startUnderJobShell(box)
        #expect(terminal.waitFor("ready"), "\(terminal.text)")
        terminal.type("\u{1C}")
        #expect(shell.waitForLine("job exit 131"), "\(shell.stdout)\n\(terminal.text)")
        #expect(terminal.waitFor("SIGQUIT; killed every step"), "\(terminal.text)")
        if interactive {
            // What flow says of it, then the step that got it (whose `⊘` came first).
            #expect(terminal.waitFor("talk cancelled"), "\(terminal.text)")
            let text = terminal.text
            let noteFirst = text.range(of: "SIGQUIT; killed every step").map { note in
                text.range(of: "talk cancelled").map { note.lowerBound < $0.lowerBound } ?? false
            }
            #expect(noteFirst == true, "\(text)")
        }
        #expect(!box.exists("after.txt"), "no step starts after Ctrl-\\")
        #expect(!box.exists("finally.txt"), "quit now: no `finally`")
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.first?["state"] as? String == "cancelled", "\(runs)")
        #expect(runs.first?["exit_status"] as? Int == 131, "\(runs)")
        #expect(box.leftoverProcesses().isEmpty)
    }
}
