import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Cancellation through the binary: flow is signalled only after its children said
/// `ready` (their handlers are in place), and every test checks flow's exit status and
/// that no process of the run is left.
@Suite struct SignalTests {
    static func count(_ text: String, _ line: String) -> Int {
        text.split(separator: "\n").filter { LiveFlow.squeeze(String($0)) == line }.count
    }

    static let twoTrappers = """
        steps:
          - name: pair
            concurrent:
              - name: w1
                shell: $CHILD --trap SIG:0 --stderr ready --sleep 30
              - name: w2
                shell: $CHILD --trap SIG:0 --stderr ready --sleep 30
        """

    /// Starts the two-child workflow trapping `sig`, waits for both `ready` lines.
    static func startPair(_ box: RunSandbox, trapping sig: String, ownGroup: Bool = false, launcher: String = "$CHILD",
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> LiveFlow {
        try box.write("wf.yaml", twoTrappers.replacingOccurrences(of: "SIG", with: sig).replacingOccurrences(of: "$CHILD", with: launcher))
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "3s"], ownGroup: ownGroup)
        let ready = flow.waitForLine("w1 | ready") && flow.waitForLine("w2 | ready")
        #expect(ready, "children never said ready:\n\(flow.stdout)\n\(flow.stderr)", sourceLocation: sourceLocation)
        return flow
    }

    /// SIGINT and SIGHUP (the terminal went away) stop the run: each step gets the same
    /// signal once, the run is `cancelled`, and flow exits 128 + the signal.
    @Test(arguments: [(SIGINT, "INT"), (SIGHUP, "HUP")])
    func aSignalReachesChildrenOnceAndSetsTheExitStatus(_ signal: Int32, _ name: String) throws {
        let box = try RunSandbox()
        let flow = try Self.startPair(box, trapping: name)
        flow.signal(signal)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 128 + signal, "\(r)")
        #expect(Self.count(r.stdout, "w1 | got SIG\(name)") == 1, "\(r)")
        #expect(Self.count(r.stdout, "w2 | got SIG\(name)") == 1, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.first?["state"] as? String == "cancelled", "\(runs)")
        #expect(runs.first?["exit_status"] as? Int == Int(128 + signal), "\(runs)")
    }

    /// The note that flow heard the signal comes before anything that follows from it: the
    /// steps it stopped, and the `finally` steps after them. The signal's handlers run on
    /// another thread than the steps; the steps were stopped by the handler before the
    /// note's, and in about one run in ten (a delay, stopped at once) the `⊘` lines, and
    /// sometimes the whole `finally`, came first. Repeated, since it was a race.
    @Test func theSignalsNoteComesBeforeWhatItStopped() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - shell: echo ready; exec sleep 30
                  - shell: echo ready; exec sleep 30
                  - delay: 30s
                finally:
                  - print: group-cleanup
            finally:
              - print: cleanup
            """)
        for round in 1...20 {
            let flow = try box.start(["run", "wf.yaml", "--output", "json", "--no-journal"])
            #expect(flow.waitFor { out, _ in out.components(separatedBy: #""line":"ready""#).count == 3 }, "\(flow.stdout)")
            flow.signal(SIGINT)
            let r = try flow.finish(timeout: 20)
            #expect(r.status == 130, "\(r)")
            let events = r.stdout.split(separator: "\n").map(String.init)
            let note = events.firstIndex { $0.contains(#""event":"note""#) && $0.contains("SIGINT: stopping") }
            let stopped = events.firstIndex { $0.contains(#""to":"cancelled""#) || $0.contains(#""line":"cleanup""#) || $0.contains("group-cleanup") }
            #expect(note != nil && stopped != nil && note! < stopped!, "round \(round):\n\(r.stdout)")
            if note == nil || stopped == nil || note! > stopped! { break }
        }
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// The second signal's note ("second signal; killed every step") comes before the ends
    /// of the steps it killed: they were killed first, and told of their ends before flow
    /// took the bus to say why, in a quarter of runs. Repeated, since it was a race.
    @Test func theSecondSignalsNoteComesBeforeTheStepsItKilled() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - shell: trap '' INT; echo ready; sleep 30
                  - shell: trap '' INT; echo ready; sleep 30
                  - delay: 30s
            """)
        for round in 1...20 {
            let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--no-journal"])
            #expect(flow.waitFor { out, _ in out.components(separatedBy: "| ready").count == 3 }, "\(flow.stdout)")
            flow.signal(SIGINT)
            #expect(flow.waitFor { _, err in err.contains("SIGINT: stopping") }, "\(flow.stderr)")
            flow.signal(SIGINT)
            let r = try flow.finish(timeout: 20)
            #expect(r.status == 130, "\(r)")
            let lines = r.stderrLines
            let note = lines.firstIndex(of: "flow: second signal; killed every step")
            let killed = lines.firstIndex { $0.hasPrefix("⊘ shell@") }
            #expect(note != nil && killed != nil && note! < killed!, "round \(round):\n\(r.stderr)")
            if note == nil || killed == nil || note! > killed! { break }
        }
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// Two signals read together (a Ctrl-C and a SIGTERM both pending while flow was not
    /// scheduled): the first one's note still comes, before the second's. The second
    /// killed everything and closed the output before the first one's handlers, started on
    /// another thread, had put the note there: it was lost in 4 runs of 20 (documented as
    /// about 1 in 20). flow is stopped while both are sent, so that it reads them at once.
    @Test func aFirstSignalReadWithTheSecondIsStillSaid() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - shell: trap '' INT; echo ready; sleep 30
                  - shell: trap '' INT; echo ready; sleep 30
            """)
        for round in 1...20 {
            let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--no-journal"])
            #expect(flow.waitFor { out, _ in out.components(separatedBy: "| ready").count == 3 }, "\(flow.stdout)")
            flow.signal(SIGSTOP)
            let deadline = Date().addingTimeInterval(10)
            while RunSandbox.status(of: flow.pid)?.state != "T", Date() < deadline { usleep(1_000) }
            flow.signal(SIGINT)
            flow.signal(SIGTERM)
            flow.signal(SIGCONT)
            let r = try flow.finish(timeout: 20)
            #expect(r.status == 130, "\(r)")
            let lines = r.stderrLines
            let first = lines.firstIndex { $0.hasPrefix("SIGINT: stopping") }
            let second = lines.firstIndex(of: "flow: second signal; killed every step")
            #expect(first != nil && second != nil && first! < second!, "round \(round):\n\(r.stderr)")
            if first == nil || second == nil || first! > second! { break }
        }
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// A `finally` step runs on after Ctrl-C; when its own `timeout` passes it gets SIGTERM,
    /// as every time-out sends, not the run's SIGINT (it was sent SIGINT: a cleanup that
    /// handles SIGTERM alone was not stopped politely).
    @Test func aFinallyStepsTimeoutAfterCtrlCSendsSIGTERM() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: echo started >&2; exec sleep 30
            finally:
              - name: cleanup
                timeout: 300ms
                shell: trap 'echo INT > got; exit 0' INT; trap 'echo TERM > got; exit 0' TERM; touch cleaning; while :; do sleep 0.05; done
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("shell@1 | started"), "the step started")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 20)
        #expect(r.status == 130, "\(r)")
        #expect(box.exists("cleaning"), "\(r)")
        #expect(box.read("got") == "TERM\n", "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test(arguments: launchers)
    func sigtermExits143AndATrappingChildIsHeard(_ launcher: String) throws {
        let box = try RunSandbox()
        let flow = try Self.startPair(box, trapping: "TERM", launcher: launcher)
        flow.signal(SIGTERM)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 143, "\(r)")
        #expect(Self.count(r.stdout, "w1 | got SIGTERM") == 1, "the child's last words are in the output: \(r)")
        #expect(Self.count(r.stdout, "w2 | got SIGTERM") == 1, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// Started under nohup (SIGHUP ignored), flow keeps ignoring a hangup: the run goes on.
    /// So with SIGQUIT ignored, as a shell starts a command in the background.
    @Test(arguments: [(SIGHUP, "HUP"), (SIGQUIT, "QUIT")])
    func aFlowStartedWithASignalIgnoredKeepsIgnoringIt(_ signal: Int32, _ name: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: work
                shell: $CHILD --stderr ready --sleep 0.5 --print done
            """)
        let flow = try LiveFlow(executable: "/bin/sh",
                                arguments: ["-c", "trap '' \(name); exec \"$0\" \"$@\"", RunSandbox.flowPath,
                                            "run", "wf.yaml", "--output", "prefixed"],
                                environment: box.environment, directory: box.root.path, ownGroup: false)
        #expect(flow.waitForLine("work | ready"), "\(flow.stderr)")
        flow.signal(signal)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("work | done"), "\(r)")
    }

    /// Two signals that reach flow together are taken in the order the kernel hands them
    /// over (lowest number first): SIGINT then SIGTERM (or Ctrl-C then Ctrl-\\) ends as the
    /// SIGINT's run, 130. The handlers ran nested, the later one's first, so the run took
    /// SIGTERM (or SIGQUIT) as its first signal: 143 (131) and a SIGTERM note (found by
    /// the events audit: 8 runs in 10 of `kill -INT; kill -TERM`). flow is stopped while
    /// both are sent, so both are pending when it runs again. (The first signal's note may
    /// be missing: the second came before flow said it; docs/events.md.)
    @Test(arguments: [SIGTERM, SIGQUIT])
    func twoSignalsPendingTogetherAreTakenInTheKernelsOrder(_ second: Int32) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: wait
                shell: $CHILD --ignore TERM --ignore INT --stderr ready --sleep 30
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "json"])
        #expect(flow.waitFor { out, _ in out.contains(#""line":"ready""#) }, "\(flow.stdout)")
        flow.signal(SIGSTOP)
        // Polled: a stop writes nothing that `waitFor` could wake on.
        let deadline = Date().addingTimeInterval(20)
        while RunSandbox.status(of: flow.pid)?.state != "T", Date() < deadline { usleep(1000) }
        #expect(RunSandbox.status(of: flow.pid)?.state == "T", "flow stopped")
        flow.signal(SIGINT)
        flow.signal(second)
        flow.signal(SIGCONT)
        let r = try flow.finish(timeout: 20)
        #expect(r.status == 130, "\(r)")
        #expect(r.jsonEvents.last?["exit_code"] as? Int == 130, "\(r)")
        // A note, if written, is the SIGINT's.
        #expect(!r.stdout.contains(#""message":"SIGTERM: "#), "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func sigquitKillsEverythingAtOnce() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: stubborn
                shell: $CHILD --ignore TERM --ignore INT --stderr ready --sleep 30
            finally:
              - name: cleanup
                print: cleaned
            """)
        // No grace period: with an hour of it, flow ends at all within the test's 15 s.
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "1h"])
        #expect(flow.waitForLine("stubborn | ready"), "\(flow.stderr)")
        flow.signal(SIGQUIT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 131, "\(r)")
        #expect(!r.stdout.contains("cleaned"), "\(r)")
        #expect(r.stderr.contains("flow: SIGQUIT; killed every step"), "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.first?["state"] as? String == "cancelled", "\(runs)")
        #expect(runs.first?["exit_status"] as? Int == 131, "\(runs)")
        let show = try box.run(["show", "last", "--json"])
        let steps = (try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])?["steps"] as? [[String: Any]]
        let stubborn = steps?.first { $0["name"] as? String == "stubborn" }
        #expect(stubborn?["state"] as? String == "cancelled", "\(show)")
    }

    /// A concurrent group whose steps SIGQUIT killed ends `cancelled` with them: after a
    /// quit no task is cancelled, and a group whose list ended before flow's exit counted
    /// its killed steps as failures (`✗ concurrent@2` above three `⊘` steps; found by the
    /// tty audit in 2 runs of 20). The race is narrow, so the run is tried many times;
    /// without the fix 3 runs of the test in 4 failed at 40 tries; it makes 100.
    @Test func aGroupSIGQUITKilledEndsCancelledWithItsSteps() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true" }
              - concurrent:
                  - { name: long0, shell: $CHILD --stderr ready --sleep 30 }
                  - { name: long1, shell: $CHILD --stderr ready --sleep 30 }
                  - { name: long2, shell: $CHILD --stderr ready --sleep 30 }
            """)
        for trial in 0..<100 {
            let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--no-journal"])
            #expect(flow.waitFor { _, err in err.components(separatedBy: "| ready").count == 4 }, "\(flow.stderr)")
            flow.signal(SIGQUIT)
            let r = try flow.finish(timeout: 15)
            #expect(r.status == 131, "\(r)")
            #expect(!r.stderr.contains("✗ concurrent@2"), "trial \(trial): \(r)")
            if r.stderr.contains("✗ concurrent@2") { break }
        }
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// The steps SIGQUIT (or a second signal) leaves unreached stay `pending` in the
    /// journal, and the run's summary counts them so: `run_finished` left them out
    /// (`1 cancelled` where `flow runs` and `flow show` said `1 cancelled, 2 pending`).
    @Test(arguments: ["json", "prefixed"])
    func stepsLeftUnreachedAreCountedPendingInTheSummary(_ mode: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: first
                shell: $CHILD --stderr ready --sleep 30
              - name: second
                shell: echo second
            finally:
              - name: cleanup
                print: cleaned
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", mode])
        let ready = mode == "json" ? flow.waitFor { out, _ in out.contains("\"line\":\"ready\"") } : flow.waitForLine("first | ready")
        #expect(ready, "\(flow.stdout)\n\(flow.stderr)")
        flow.signal(SIGQUIT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 131, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
        let runs = try JournalEndToEndTests.runs(box)
        let journal = runs.first?["counts"] as? [String: Int]
        #expect(journal == ["cancelled": 1, "pending": 2], "\(runs)")
        if mode == "json" {
            let finished = r.jsonEvents.last { $0["event"] as? String == "run_finished" }
            #expect(finished?["counts"] as? [String: Int] == journal, "\(r)")
        } else {
            #expect(r.stderrLines.contains { $0.hasPrefix("⊘ cancelled: 1 cancelled, 2 pending in ") }, "\(r)")
        }
    }

    /// A group whose undo SIGQUIT (or a second signal) cut short is counted `undo_failed` in
    /// the run's summary, as `flow runs` and `flow show` count it: `run_finished` counted
    /// only leaf steps then (`1 succeeded, 1 failed`: a rollback left incomplete that the
    /// summary did not name).
    @Test func aGroupsUndoKilledBySIGQUITIsCountedInTheSummary() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: deploy
                sequential:
                  - shell: "true"
                undo:
                  - name: slow-undo
                    shell: $CHILD --stderr ready --sleep 30
              - name: boom
                shell: exit 1
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "json"])
        #expect(flow.waitFor { out, _ in out.contains("\"line\":\"ready\"") }, "\(flow.stdout)")
        flow.signal(SIGQUIT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 131, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
        let runs = try JournalEndToEndTests.runs(box)
        let journal = runs.first?["counts"] as? [String: Int]
        #expect(journal == ["succeeded": 1, "failed": 1, "undo_failed": 1], "\(runs)")
        let finished = r.jsonEvents.last { $0["event"] as? String == "run_finished" }
        #expect(finished?["counts"] as? [String: Int] == journal, "\(r)")
    }

    /// A signal that comes once the run has ended (its summary written) changes nothing and
    /// says nothing: flow wrote `SIGINT: cancelling: … what is left of `finally` and
    /// rollback runs` after `run_finished`, and then exited 0 with nothing cancelled.
    /// Here flow is held at the run's end by its JUnit report, a FIFO nobody reads yet.
    @Test func aSignalAfterTheRunEndedAddsNoEvent() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - print: hi
            """)
        let fifo = box.path("report.xml")
        #expect(mkfifo(fifo, 0o600) == 0)
        let flow = try box.start(["run", "wf.yaml", "--output", "json", "--junit", "report.xml"])
        #expect(flow.waitFor { out, _ in out.contains("\"event\":\"run_finished\"") }, "\(flow.stdout)")
        flow.signal(SIGINT)
        // Time for the signal's handler to reach the event bus, which the report holds (with
        // the fix nothing it does shows, so this cannot make the test fail; without it, the
        // note follows `run_finished` once the report is read).
        usleep(300_000)
        let reader = open(fifo, O_RDONLY)
        #expect(reader >= 0)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while reader >= 0, read(reader, &buffer, buffer.count) > 0 {}
        if reader >= 0 { close(reader) }
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 0, "\(r)")
        #expect(r.jsonEvents.last?["event"] as? String == "run_finished", "\(r)")
        #expect(!r.all.contains("SIGINT"), "\(r)")
        #expect(try JournalEndToEndTests.runs(box).first?["state"] as? String == "succeeded")
    }

    /// A Ctrl-\ while flow is still reading the workflow (here a FIFO it is blocked on)
    /// quits it: the Swift runtime's crash handler took it, printed "Program crashed" and
    /// let flow go on to run the workflow.
    @Test func sigquitBeforeTheRunStartsQuits() throws {
        let box = try RunSandbox()
        let fifo = box.root.appendingPathComponent("wf.yaml").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        // Opening the FIFO for writing succeeds once flow has it open for reading.
        var writer: Int32 = -1
        let deadline = Date().addingTimeInterval(15)
        while writer < 0, Date() < deadline {
            writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer < 0 { usleep(2_000) }
        }
        #expect(writer >= 0, "flow never opened the workflow")
        flow.signal(SIGQUIT)
        // The FIFO stays open (nothing written) until flow has gone: it ends blocked on it,
        // by the signal alone. (Closing it at once raced the signal under load: flow read
        // the end of an empty workflow first, on another thread than the handler's.)
        let r = try flow.finish(timeout: 15)
        if writer >= 0 { close(writer) }
        #expect(r.status == 131, "\(r)")
        #expect(!r.stderr.contains("crashed"), "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// Ctrl-\\ during `finally` of a run to roll back: nothing is undone, nor recorded as
    /// undone (the killed `finally` was reaped, the rollback began and found its undo
    /// steps skipped, which counted as success: `a` was recorded `undone`).
    @Test func sigquitDuringFinallyUndoesNothing() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            rollback: true
            steps:
              - name: a
                shell: "true"
                undo:
                  - shell: echo undone > undone.txt
              - name: fails
                shell: exit 1
            finally:
              - name: slowfin
                shell: $CHILD --stderr ready --sleep 30
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("slowfin | ready"), "\(flow.stderr)")
        flow.signal(SIGQUIT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 131, "\(r)")
        #expect(!box.exists("undone.txt"), "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
        let show = try box.run(["show", "last", "--json"])
        let steps = (try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])?["steps"] as? [[String: Any]]
        #expect(steps?.first { $0["name"] as? String == "a" }?["state"] as? String == "succeeded", "\(show)")
        #expect(steps?.first { $0["name"] as? String == "slowfin" }?["state"] as? String == "cancelled", "\(show)")
    }

    /// After a first Ctrl-C, SIGQUIT is the second signal: the exit status stays Ctrl-C's.
    @Test func sigquitAfterCtrlCIsTheSecondSignal() throws {
        let box = try RunSandbox()
        let flow = try Self.startPair(box, trapping: "INT")
        flow.signal(SIGINT)
        #expect(flow.waitForLine("w1 | got SIGINT"), "\(flow.stdout)")
        flow.signal(SIGQUIT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func ctrlCToTheForegroundGroupReachesChildrenOnce() throws {
        let box = try RunSandbox()
        let flow = try Self.startPair(box, trapping: "INT", ownGroup: true)
        // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group.
        // The children are in groups of their own, so only flow's forwarding reaches them.
        flow.signalGroup(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(Self.count(r.stdout, "w1 | got SIGINT") == 1, "\(r)")
        #expect(Self.count(r.stdout, "w2 | got SIGINT") == 1, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// How the step starts the child: `$CHILD …` goes through `sh -c` (the shell leads the
    /// process group), an absolute path is executed directly.
    static let launchers: [String] = ["$CHILD", RunSandbox.childPath]

    @Test(arguments: launchers)
    func childIgnoringTermIsKilledAfterGrace(_ launcher: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: stubborn
                shell: \(launcher) --ignore TERM --stderr ready --sleep 60
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "300ms"])
        #expect(flow.waitForLine("stubborn | ready"), "\(flow.stderr)")
        let signalled = Date()
        flow.signal(SIGTERM)
        let r = try flow.finish(timeout: 15)
        let took = Date().timeIntervalSince(signalled)
        #expect(r.status == 143, "\(r)")
        #expect(took >= 0.25, "SIGKILL only after the grace period: \(took)")
        // A bound, as the property is one: the grace given, not the default 5 s. 3 s is ten
        // times the grace, and still short of the default.
        #expect(took < 3, "SIGKILL right after the 300ms grace period: \(took)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test(arguments: launchers)
    func childFinishingWithinGraceIsNotKilled(_ launcher: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: tidy
                shell: \(launcher) --ignore TERM --stderr ready --sleep 0.7 --stderr cleaned-up
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "5s"])
        #expect(flow.waitForLine("tidy | ready"), "\(flow.stderr)")
        flow.signal(SIGTERM)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 143, "\(r)")
        #expect(RunTests.hasLine(r.stderr, "tidy | cleaned-up"), "the child used its grace period: \(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func backgroundGrandchildDoesNotSurviveACancel() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: parent
                shell: $CHILD --spawn-grandchild --stderr ready --sleep 30
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "2s"])
        #expect(flow.waitForLine("parent | ready"), "\(flow.stderr)")
        #expect(RunSandbox.processes(withMarker: box.marker).count >= 3, "flow, the child and its grandchild")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// SIGKILL cannot be caught or passed on. The kernel kills a step's own process with
    /// flow (its parent-death signal); flow's guard (`ProcessGuard`) sees flow's end and
    /// kills the rest of every running step's group: what `sh -c` started, and a background
    /// grandchild. The guard itself carries flow's environment (and the sandbox's marker),
    /// so it must be gone as well. Killing flow's whole process group (`kill -9 -- -PGID`,
    /// as a supervisor or CI runner may) must not kill the guard with it: it has a group of
    /// its own.
    @Test(arguments: [false, true])
    func aSigkilledFlowTakesEveryStepsProcessesWithIt(_ wholeGroup: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - name: direct
                    shell: \(RunSandbox.childPath) --stderr ready --sleep 60
                  - name: viashell
                    shell: $CHILD --stderr ready --sleep 61; echo after
                  - name: background
                    shell: $CHILD --spawn-grandchild --stderr ready --sleep 62
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--no-journal"], ownGroup: wholeGroup)
        for name in ["direct", "viashell", "background"] {
            #expect(flow.waitForLine("\(name) | ready"), "\(flow.stderr)")
        }
        #expect(RunSandbox.processes(withMarker: box.marker).count >= 6, "flow, its guard, the steps and a grandchild")
        if wholeGroup { flow.signalGroup(SIGKILL) } else { flow.signal(SIGKILL) }
        #expect(flow.waitExit(timeout: 10) == 128 + SIGKILL)
        let left = box.leftoverProcesses(within: 5)
        #expect(left.isEmpty, "every step's process group died with flow: \(left)")
        box.killLeftovers()
    }

    /// A run that ends normally reaps its guard before it exits: nothing outlives flow, not
    /// even for a moment.
    @Test func theGuardEndsWithTheRun() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: first
                shell: $CHILD --stderr ready --sleep 1
              - shell: $CHILD --print two
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--no-journal"])
        // The guard shares flow's memory, so its command line is flow's: it is told apart
        // by its name.
        let guards = {
            RunSandbox.processes(withMarker: box.marker).filter { other in
                other != flow.pid && (try? String(contentsOfFile: "/proc/\(other)/comm", encoding: .utf8)) == "flow-guard\n"
            }
        }
        #expect(flow.waitForLine("first | ready"), "\(flow.stderr)")
        #expect(guards().count == 1, "one guard while steps run")
        #expect(flow.waitExit(timeout: 20) == 0)
        #expect(guards().isEmpty, "the guard outlived flow")
    }

    /// Under a container's pid 1 (here: as a child subreaper, which is the same to the
    /// kernel), what a step left behind and the sweep killed becomes flow's child once its
    /// own parent is gone; flow reaps it rather than keep its zombie for the whole run.
    @Test func orphansLeftByAStepAreReapedWhenFlowIsTheirReaper() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: leave
                shell: $CHILD --spawn-grandchild --print left
              - name: check
                shell: $CHILD --stderr ready --sleep 30
            """)
        let flow = try Self.runAsSubreaper(box)
        defer { box.killLeftovers() }
        #expect(flow.waitForLine("check | ready"), "\(flow.stderr)")
        #expect(Self.zombiesReaped(of: flow.pid), "zombies of flow: \(Self.zombies(of: flow.pid))")
        flow.signal(SIGINT)
        #expect(flow.waitExit(timeout: 15) == 130)
    }

    /// `flow run wf.yaml --output prefixed` in `box`, as a child subreaper (what a
    /// container's pid 1 is to the kernel).
    static func runAsSubreaper(_ box: RunSandbox) throws -> LiveFlow {
        try LiveFlow(executable: RunSandbox.childPath,
                     arguments: ["--subreaper-exec", RunSandbox.flowPath, "run", "wf.yaml", "--output", "prefixed"],
                     environment: box.environment, directory: box.root.path, ownGroup: false)
    }

    /// The zombies whose parent is `pid`.
    static func zombies(of pid: pid_t) -> [pid_t] {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { entry -> pid_t? in
            guard let child = pid_t(entry), let status = RunSandbox.status(of: child) else { return nil }
            return status.state == "Z" && status.parent == pid ? child : nil
        } ?? []
    }

    /// Whether `pid` has no zombie child left within 5 s (flow reaps them as they come).
    static func zombiesReaped(of pid: pid_t) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while !zombies(of: pid).isEmpty && Date() < deadline { usleep(20_000) }
        return zombies(of: pid).isEmpty
    }

    /// The same after someone killed flow's guard: its zombie (first among flow's exited
    /// children, which the kernel shows one at a time) stopped flow reaping any orphan, and
    /// they piled up for the rest of the run. The guard is reaped and flow goes on.
    @Test func orphansAreReapedAfterTheGuardWasKilled() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: unguard
                shell: |
                  for t in /proc/$PPID/task/*/children; do for c in $(cat $t); do
                    if [ "$(cat /proc/$c/comm)" = flow-guard ]; then kill -9 $c && echo killed; fi
                  done; done
              - name: leave
                shell: $CHILD --spawn-grandchild --print left
              - name: leave_more
                shell: $CHILD --spawn-grandchild --print left
              - name: check
                shell: $CHILD --stderr ready --sleep 30
            """)
        let flow = try Self.runAsSubreaper(box)
        defer { box.killLeftovers() }
        #expect(flow.waitForLine("check | ready"), "\(flow.stderr)")
        #expect(flow.stdout.contains("| killed"), "the guard was not found: \(flow.stdout)")
        #expect(Self.zombiesReaped(of: flow.pid), "zombies of flow: \(Self.zombies(of: flow.pid))")
        flow.signal(SIGINT)
        #expect(flow.waitExit(timeout: 15) == 130)
    }

    @Test func backgroundGrandchildDoesNotSurviveASuccess() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: parent
                shell: $CHILD --spawn-grandchild --print done
              - name: next
                print: next
            """)
        // The grandchild holds the step's pipes and sleeps 1,000 s: that the run ends within
        // its 20 s, and the grandchild is gone, shows it was killed, not waited for.
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"], timeout: 20)
        #expect(r.status == 0, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func secondSigintDuringFinallyKillsEverything() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: work
                shell: $CHILD --trap INT:0 --stderr ready --sleep 30
            finally:
              - name: slowfin
                shell: $CHILD --stderr ready --sleep 30
            """)
        // The second signal does not wait for the grace period: with an hour of it (and the
        // `finally` step's 30 s), flow ends at all within the test's 15 s.
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "1h"])
        #expect(flow.waitForLine("work | ready"), "\(flow.stderr)")
        flow.signal(SIGINT)
        #expect(flow.waitForLine("slowfin | ready"), "finally runs after the first SIGINT: \(flow.stdout)\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
        // The journal has the run's end: cancelled with 130, the killed step cancelled.
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.first?["state"] as? String == "cancelled", "\(runs)")
        #expect(runs.first?["exit_status"] as? Int == 130, "\(runs)")
        let show = try box.run(["show", "last", "--json"])
        let steps = (try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])?["steps"] as? [[String: Any]]
        #expect(steps?.first { $0["name"] as? String == "slowfin" }?["state"] as? String == "cancelled", "\(show)")
        // The run still ends as runs do: the killed step, then the summary, last.
        // …and the hint: the run is resumable after the second signal too.
        #expect(r.resumeHint != nil, "\(r)")
        let lines = r.stderrLinesBeforeHint.filter { !$0.isEmpty }
        #expect(lines.last?.hasPrefix("⊘ cancelled: 2 cancelled in ") == true, "\(r)")
        #expect(lines.contains { $0.hasPrefix("⊘ slowfin cancelled") }, "\(r)")
    }

    /// `--output json` after a second signal: every step under way gets its `cancelled`
    /// event and the stream ends with `run_finished`, as every run's does.
    @Test func secondSigintEndsTheJSONStreamWithRunFinished() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - name: stubborn
                    shell: $CHILD --ignore INT --ignore TERM --stderr ready --sleep 30
                  - name: obeys
                    shell: $CHILD --sleep 30
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "json", "--grace", "10s"])
        #expect(flow.waitFor { stdout, _ in stdout.contains("\"line\":\"ready\"") }, "\(flow.stdout)")
        flow.signal(SIGINT)
        #expect(flow.waitFor { stdout, _ in stdout.contains("\"to\":\"cancelled\"") }, "obeys ends at the first: \(flow.stdout)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        let events = r.jsonEvents
        let ends = events.filter { $0["event"] as? String == "step_state" && $0["to"] as? String == "cancelled" }
        #expect(Set(ends.compactMap { $0["step"] as? String }) == ["1", "1.1", "1.2"], "\(r)")
        let last = events.last
        #expect(last?["event"] as? String == "run_finished", "\(r)")
        #expect(last?["status"] as? String == "cancelled", "\(r)")
        #expect(last?["exit_code"] as? Int == 130, "\(r)")
        #expect((last?["counts"] as? [String: Any])?["cancelled"] as? Int == 2, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// A step waiting in `retrying` (for a --max-parallel slot) when the second signal
    /// comes ends through `running`, as the state table allows; every transition in the
    /// stream is legal, and a killed step's unfinished last line is still written.
    @Test func secondSigintEndsEveryStepThroughLegalTransitions() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: first, shell: "true" }
            finally:
              - concurrent:
                  - name: flaky
                    shell: exit 3
                    retry: { limit: 5 }
                  - name: long
                    shell: trap '' INT; printf 'ready\\npartial-no-newline'; exec sleep 30
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "json", "--max-parallel", "1"])
        #expect(flow.waitFor { stdout, _ in stdout.contains("\"line\":\"ready\"") }, "\(flow.stdout)")
        #expect(flow.waitFor { stdout, _ in stdout.contains("\"to\":\"retrying\"") }, "\(flow.stdout)")
        flow.signal(SIGINT)
        // The first one taken (two signals sent at once may arrive as one).
        // (In `finally` the note says the steps have ended and nothing is interrupted.)
        #expect(flow.waitFor { stdout, _ in stdout.contains("SIGINT: cancelling") }, "\(flow.stdout)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        let legal: Set<String> = ["pending>running", "pending>skipped", "running>succeeded", "running>failed",
                                  "running>timed_out", "running>cancelled", "failed>retrying", "timed_out>retrying",
                                  "retrying>running", "succeeded>undoing", "undoing>undone", "undoing>undo_failed"]
        let moves = r.jsonEvents.filter { $0["event"] as? String == "step_state" }
            .map { "\($0["from"] as? String ?? "?")>\($0["to"] as? String ?? "?")" }
        #expect(moves.allSatisfy(legal.contains), "\(moves)")
        #expect(r.jsonEvents.contains { $0["line"] as? String == "partial-no-newline" }, "\(r)")
        #expect(r.jsonEvents.last?["event"] as? String == "run_finished", "\(r)")
        #expect(r.jsonEvents.filter { $0["event"] as? String == "run_finished" }.count == 1, "\(r)")
    }

    /// After Ctrl-C, `finally` sees the run as GitHub Actions shows a cancelled job:
    /// `cancelled()` true, `failure()` false (no step failed: it used to be true, so
    /// "build failed" alerts fired on every Ctrl-C), and `run.status` `cancelled` from then
    /// on even in a run that had failed before (it stayed `failed`).
    @Test func finallySeesACancelledRunAsCancelledNotFailed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: work
                shell: $CHILD --stderr ready --sleep 30
            finally:
              - { name: failed, if: failure(), shell: echo failure >> log }
              - { name: cancel, if: cancelled(), shell: echo cancelled >> log }
              - { name: status, shell: "echo status ${{ run.status }} >> log" }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("work | ready"), "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.lines("log") == ["cancelled", "status cancelled"], "\(r)")

        let failedFirst = try RunSandbox()
        try failedFirst.write("wf.yaml", """
            steps:
              - { name: boom, shell: exit 1 }
            finally:
              - { name: wait, shell: $CHILD --stderr ready --sleep 1 }
              - { name: failed, if: failure(), shell: echo failure >> log }
              - { name: status, shell: "echo status ${{ run.status }} >> log" }
            """)
        let second = try failedFirst.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(second.waitForLine("wait | ready"), "\(second.stderr)")
        second.signal(SIGINT)
        let r2 = try second.finish(timeout: 15)
        #expect(r2.status == 130, "\(r2)")
        #expect(failedFirst.lines("log") == ["failure", "status cancelled"], "a step did fail: \(r2)")
    }

    /// A step that failed inside a group before Ctrl-C stopped the rest of it is a failure
    /// `failure()` in `finally` sees, as it is outside a group: the group ends `cancelled`,
    /// and its failure was lost (a sequential group whose `if: failure()` step was running,
    /// a concurrent one with `fail_fast: false`, a group's own `finally` after both).
    @Test(arguments: ["sequential", "concurrent"])
    func aFailureInsideAGroupStoppedByCtrlCIsSeenByFinally(_ kind: String) throws {
        let box = try RunSandbox()
        // Sequential: the step after the failure runs because its `if` says so. Concurrent:
        // `fail_fast: false` lets the sibling run on.
        let notify = kind == "sequential" ? "if: failure(), " : ""
        let options = kind == "sequential" ? "" : "fail_fast: false"
        try box.write("wf.yaml", """
            steps:
              - name: outer
                sequential:
                  - name: g
                    \(options)
                    \(kind):
                      - { name: boom, shell: exit 1 }
                      - { name: notify, \(notify)shell: "$CHILD --stderr ready --sleep 30" }
                finally:
                  - { name: outer_failed, if: failure(), shell: echo outer failure >> log }
            finally:
              - { name: failed, if: failure(), shell: echo failure >> log }
              - { name: cancel, if: cancelled(), shell: echo cancelled >> log }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("notify | ready"), "\(flow.stderr)")
        // The failure is recorded before the signal comes.
        #expect(flow.waitFor { _, err in err.contains("✗ boom exit 1") }, "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.lines("log") == ["outer failure", "failure", "cancelled"], "\(r)")
    }

    /// The undo steps of the rollback of a run where a step failed before Ctrl-C see the
    /// run as its top-level `finally` does: `failure()` and `cancelled()` both true. Before,
    /// `finally` saw the failure and the undo steps did not (they looked only at the run's
    /// status, `cancelled`).
    @Test func undoStepsSeeAFailureBeforeCtrlCAsFinallyDoes() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: prep
                shell: "true"
                undo:
                  - { name: undo_failed, if: failure(), shell: echo undo failure >> log }
                  - { name: undo_cancelled, if: cancelled(), shell: echo undo cancelled >> log }
                  - { name: undo_plain, shell: "echo undo ${{ run.status }} >> log" }
              - name: pair
                fail_fast: false
                concurrent:
                  - { name: boom, shell: exit 1 }
                  - { name: wait, shell: "$CHILD --stderr ready --sleep 30" }
            finally:
              - { name: failed, if: failure(), shell: echo failure >> log }
              - { name: cancel, if: cancelled(), shell: echo cancelled >> log }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("wait | ready"), "\(flow.stderr)")
        // The failure is recorded before the signal comes.
        #expect(flow.waitFor { _, err in err.contains("✗ boom exit 1") }, "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.lines("log") == ["failure", "cancelled", "undo failure", "undo cancelled", "undo cancelled"], "\(r)")
    }

    /// A run that a second signal or SIGQUIT ends removes its scratch directory (where the
    /// `FLOW_OUTPUT` files are) as every run does: flow's exit from the signal's handler
    /// skipped it, and each such run left a directory in /dev/shm for a later run's sweep.
    @Test(arguments: [[SIGINT, SIGINT], [SIGQUIT]])
    func aRunEndedBySignalsRemovesItsScratchDirectory(_ signals: [Int32]) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: stubborn
                shell: $CHILD --ignore INT --stderr ready --sleep 30
            """)
        try FileManager.default.createDirectory(atPath: box.path("tmp"), withIntermediateDirectories: false)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "60s"], env: ["TMPDIR": box.path("tmp")])
        #expect(flow.waitForLine("stubborn | ready"), "\(flow.stderr)")
        for (index, signal) in signals.enumerated() {
            flow.signal(signal)
            // The second signal once flow took the first: two sent at once may arrive as one.
            if index + 1 < signals.count {
                #expect(flow.waitFor { _, err in err.contains("SIGINT: stopping") }, "\(flow.stderr)")
            }
        }
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 128 + signals.last!, "\(r)")
        #expect(r.stderr.contains("killed every step"), "\(r)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: box.path("tmp"))) == [], "left behind")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// A SIGINT or SIGTERM that comes as soon as the run's scratch directory exists is the
    /// run's: flow exits 130 or 143 (not killed by it) and leaves no directory. flow made
    /// the directory before it installed its handlers, and a signal between the two killed
    /// it with the directory left for a later run's sweep. The directory's creation is
    /// watched (inotify), so the signal follows it as closely as the test can; rounds, as
    /// the window was a fraction of a millisecond.
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalAsSoonAsTheScratchDirectoryExistsLeavesNone(_ signal: Int32) throws {
        let box = try RunSandbox()
        // The child is run directly, not through `sh -c`: dash catches a SIGINT that comes
        // before it has started its command, and waits for the command instead (which
        // never gets it: it is killed after the grace period).
        try box.write("wf.yaml", """
            steps:
              - name: work
                shell: \(RunSandbox.childPath) --stderr ready --sleep 30
            """)
        let tmp = box.path("tmp")
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: false)
        let watch = inotify_init1(Int32(IN_CLOEXEC))
        try #require(watch >= 0, "inotify_init1: errno \(errno)")
        defer { close(watch) }
        try #require(inotify_add_watch(watch, tmp, UInt32(IN_CREATE)) >= 0, "inotify_add_watch: errno \(errno)")
        var events = [UInt8](repeating: 0, count: 4096)
        for round in 0..<25 {
            let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--no-journal"], env: ["TMPDIR": tmp])
            var ready = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
            let created = poll(&ready, 1, 20_000) == 1
            flow.signal(signal)
            #expect(created, "round \(round): no scratch directory was made")
            _ = events.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
            let r = try flow.finish(timeout: 20)
            #expect(r.status == 128 + signal && flow.killedBy == nil,
                    "round \(round): flow was killed by signal \(flow.killedBy ?? 0), not ended by it: \(r)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []
            #expect(left.isEmpty, "round \(round): left behind \(left)")
            for name in left { try? FileManager.default.removeItem(atPath: tmp + "/" + name) }
            #expect(box.leftoverProcesses().isEmpty)
        }
    }

    /// With its output blocked (a reader that stopped reading: `flow run … | less`), the
    /// second signal still ends flow: it waited for the reader, whatever the signals said
    /// (the first signal's note waited for the output, and held up the second signal).
    @Test func theSecondSignalEndsFlowWhileItsOutputIsBlocked() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-blocked-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = #"""
            # The command is spelt apart here and matched with a bracket below, so that
            # pgrep does not find this script's own command line.
            w=blocked
            printf 'steps:\n  - name: spam\n    shell: yes spam-%s\n' "$w" > wf.yaml
            mkfifo out
            mkdir tmp
            # A reader that never reads: flow's writes block once the pipe is full.
            sleep 60 < out &
            reader=$!
            TMPDIR="$PWD/tmp" "$0" run wf.yaml --no-journal --output prefixed > out 2>err &
            pid=$!
            # The first signal once the step runs (flow's handlers are in place by then),
            # the second once the first reached the step (`yes` died of it): two signals
            # sent at once may arrive as one. The loops only bound a hang.
            i=0; until grep -q spam err || [ $i -ge 400 ]; do sleep 0.05; i=$((i+1)); done
            kill -INT "$pid"
            i=0; while pgrep -f "yes spam-blocke[d]" >/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
            kill -INT "$pid"
            i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done
            if kill -0 "$pid" 2>/dev/null; then echo "still running"; kill -9 "$pid"; else echo "ended"; fi
            wait "$pid"; echo "status $?"
            kill "$reader"; wait "$reader" 2>/dev/null
            pgrep -f "yes spam-blocke[d]" >/dev/null && echo "left over" || echo "none left"
            # The run's scratch directory goes as at every run's end: flow's exit skipped it.
            ls -A tmp
            """#
        let result = try FlowBinary.run([], in: directory, shellScript: script)
        #expect(result.stdout == "ended\nstatus 130\nnone left\n", "\(result)")
    }

    /// With its output blocked, the first signal still reaches the steps: the note that
    /// flow heard it, which must come before what the steps say, waited for the reader,
    /// and the steps were stopped only after it (`yes` ran on until the second signal).
    @Test func theFirstSignalStopsTheStepsWhileTheOutputIsBlocked() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-blocked-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = #"""
            # Spelt apart, and matched with a bracket, so that pgrep does not find this script.
            w=first
            printf 'steps:\n  - name: spam\n    shell: yes spam-%s\n' "$w" > wf.yaml
            mkfifo out
            # A reader that never reads: flow's writes block once the pipe is full.
            sleep 60 < out &
            reader=$!
            "$0" run wf.yaml --no-journal --output prefixed > out 2>err &
            pid=$!
            i=0; until grep -q spam err || [ $i -ge 400 ]; do sleep 0.05; i=$((i+1)); done
            kill -INT "$pid"
            # The loop only bounds a hang: `yes` dies of the signal at once.
            i=0; while pgrep -f "yes spam-firs[t]" >/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
            pgrep -f "yes spam-firs[t]" >/dev/null && echo "not stopped" || echo "stopped"
            kill -INT "$pid"
            i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done
            if kill -0 "$pid" 2>/dev/null; then echo "still running"; kill -9 "$pid"; else echo "ended"; fi
            wait "$pid"; echo "status $?"
            kill "$reader"; wait "$reader" 2>/dev/null
            left=$(pgrep -f "yes spam-firs[t]")
            if [ -n "$left" ]; then echo "left over"; kill $left; else echo "none left"; fi
            """#
        let result = try FlowBinary.run([], in: directory, shellScript: script)
        #expect(result.stdout == "stopped\nended\nstatus 130\nnone left\n", "\(result)")
    }

    @Test func firstSigintDoesNotCancelFinally() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: work
                shell: $CHILD --stderr ready --sleep 30
            finally:
              - name: fin
                shell: $CHILD --trap INT:9 --trap TERM:9 --stderr ready --sleep 0.5 --print fin-done
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "2s"])
        #expect(flow.waitForLine("work | ready"), "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(RunTests.hasLine(r.stdout, "fin | fin-done"), "\(r)")
        #expect(!r.stdout.contains("got SIG"), "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func delayIsCancelledAtOnce() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: hello
                print: waiting now
              - name: wait
                delay: 1h
              - name: after
                shell: touch after
            """)
        // At once: with an hour's delay and an hour's grace, flow ends at all within the
        // test's 15 s, and the delay says it was cancelled.
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "1h"])
        #expect(flow.waitFor { _, err in err.split(separator: "\n").contains { $0.hasPrefix("▶ wait") } }, "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("⊘ wait cancelled") }, "\(r)")
        #expect(!box.exists("after"))
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func finallyAndRollbackRunAfterSigint() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: prepared
                shell: echo prepared >> log
                undo:
                  shell: echo undo-prepared >> log
              - name: work
                shell: $CHILD --stderr ready --sleep 30
                undo:
                  shell: echo undo-work >> log
              - name: later
                shell: echo later >> log
            finally:
              - name: fin
                shell: echo "finally ${{ run.status }}" >> log
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "2s"])
        #expect(flow.waitForLine("work | ready"), "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.lines("log") == ["prepared", "finally cancelled", "undo-prepared"], "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
        // The journal saw the same: work cancelled, later skipped, prepared rolled back.
        let show = try box.run(["show", "last", "--json"])
        #expect(show.status == 0, "\(show)")
        let run = try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any]
        let steps = (run?["steps"] as? [[String: Any]]) ?? []
        let state = { (name: String) in steps.first { $0["name"] as? String == name }?["state"] as? String }
        #expect(run?["state"] as? String == "cancelled", "\(show)")
        #expect(state("work") == "cancelled", "\(show)")
        #expect(state("later") == "skipped", "\(show)")
        #expect(state("prepared") == "undone", "\(show)")
    }

    /// A signal to `flow undo` ends the undo run `cancelled` but changes nothing of the run
    /// it rolls back, which ended before: the undo steps after the signal still see how
    /// that run ended (`run.status`, `success()`, `cancelled()`), so the rollback goes on
    /// as it would have. `run.status` said `cancelled` for a run that had succeeded, and an
    /// undo step whose `if` read it, or `success()`, was skipped: the rollback stopped
    /// halfway, which a signal to `flow undo` must not do.
    @Test func aSignalToFlowUndoLeavesTheUndoneRunsStatusAlone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  - { name: una, if: "success() && !cancelled()", shell: 'echo "una ${{ run.status }}" >> log' }
              - name: b
                shell: "true"
                undo:
                  - { name: unb, shell: 'echo "unb ${{ run.status }}" >> log; echo ready; while [ ! -f go ]; do sleep 0.01; done' }
            """)
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let flow = try box.start(["undo", "last", "--output", "prefixed"])
        #expect(flow.waitForLine("unb | ready"), "\(flow.stderr)")
        flow.signal(SIGINT)
        #expect(flow.waitFor { _, err in err.contains("SIGINT: the rollback goes on") }, "\(flow.stderr)")
        try box.write("go", "")
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.lines("log") == ["unb succeeded", "una succeeded"], "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func sigtermDuringRetryDelayIsNotRetried() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: flaky
                retry: { limit: 5, delay: 1h }
                shell: echo attempt >> count; echo failing-now; exit 1
            """)
        // The retry's delay is an hour: flow ending at all within the test's 15 s shows the
        // signal ended it.
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        let failedOnce = flow.waitFor { _, err in err.contains("retrying") || err.contains("✗ flaky") }
        flow.signal(SIGTERM)
        let r = try flow.finish(timeout: 15)
        #expect(failedOnce, "\(r)")
        #expect(r.status == 143, "\(r)")
        #expect(box.lines("count").count == 1)
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// A flow started with signals ignored (nohup, a CI runner's trap) does not pass them
    /// on: ignored dispositions survive exec, so each child resets them. So do flow's own
    /// (SIGINT, SIGTERM and SIGPIPE, which flow ignores while it runs).
    @Test func stepsStartWithNoSignalIgnored() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: state
                shell: $CHILD --print-signal-state
            """)
        let flow = try LiveFlow(executable: "/bin/sh",
                                arguments: ["-c", "trap '' HUP QUIT USR2; exec \"$0\" \"$@\"", RunSandbox.flowPath,
                                            "run", "wf.yaml", "--output", "prefixed"],
                                environment: box.environment, directory: box.root.path, ownGroup: false)
        let r = try flow.finish(timeout: 30)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("state | ignored: \n"), "\(r)")
        #expect(r.stdout.contains("state | blocked: \n"), "\(r)")
    }

    /// A signal to flow's process group (a terminal's Ctrl-C) reaches flow alone, also when
    /// it comes while a step is being started: the new process was still in flow's group
    /// then, kept the signal pending and died of it once it unblocked signals, so a Ctrl-C
    /// at the moment a `finally` step started failed that step (`killed by signal 2`), and
    /// its fail-fast cancelled its siblings. Here flow ignores SIGHUP (started by `nohup`, it
    /// keeps ignoring it) and the test sends it to flow's group again and again while flow
    /// starts 300 steps, one after another: none may die of it.
    @Test func aSignalToFlowsGroupWhileAStepStartsDoesNotReachTheStep() throws {
        let box = try RunSandbox()
        let steps = (0..<300).map { "  - { name: s\($0), shell: /bin/true }" }.joined(separator: "\n")
        try box.write("wf.yaml", "steps:\n\(steps)\n")
        let flow = try LiveFlow(executable: "/bin/sh",
                                arguments: ["-c", "trap '' HUP; exec \"$0\" \"$@\"", RunSandbox.flowPath,
                                            "run", "wf.yaml", "--output", "prefixed"],
                                environment: box.environment, directory: box.root.path, ownGroup: true)
        // Once flow runs (its shell's `trap` is behind it), one step after another starts.
        #expect(flow.waitFor { _, err in err.contains("▶ s0") }, "\(flow.stderr)")
        var sent = 0
        while flow.waitExit(timeout: 0) == nil {
            flow.signalGroup(SIGHUP)
            sent += 1
            usleep(20)
        }
        let r = try flow.finish(timeout: 30)
        #expect(r.status == 0, "\(sent) signals sent: \(r)")
        #expect(!r.stderr.contains("signal 1"), "\(r)")
        #expect(r.stderr.contains("✓ succeeded: 300 succeeded in "), "\(r)")
    }

    /// `steps.X.exit_code` after a signal is 128 + N (a shell's `$?`) whoever sent it: it
    /// was 143 for a step that killed itself but `null` for one its time-out or the run's
    /// cancellation stopped. `flow show --json` records the same, with the signal beside it.
    @Test func exitCodeAfterASignalIs128PlusItWhoeverSentIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - { name: itself, shell: kill -TERM $$ }
                  - { name: slow, shell: exec sleep 30, timeout: 200ms }
                fail_fast: false
                continue_on_error: true
              - { name: stopped, shell: echo started; exec sleep 30 }
            finally:
              - shell: echo "${{ steps.itself.exit_code }} ${{ steps.slow.exit_code }} ${{ steps.stopped.exit_code }}" > codes
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--state-dir", box.path("state")])
        #expect(flow.waitForLine("stopped | started"), "\(flow.stdout)\(flow.stderr)")
        flow.signal(SIGTERM)
        let r = try flow.finish(timeout: 20)
        #expect(r.status == 143, "\(r)")
        #expect(box.lines("codes") == ["143 143 143"], "\(r)")
        let show = try box.run(["show", "last", "--json", "--state-dir", box.path("state")])
        let steps = (try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])?["steps"] as? [[String: Any]] ?? []
        for name in ["itself", "slow", "stopped"] {
            let step = steps.first { $0["name"] as? String == name }
            #expect(step?["exit_code"] as? Int == 143 && step?["signal"] as? Int == 15, "\(name): \(show)")
        }
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// flow started with SIGCHLD ignored (bash's `trap '' CHLD` in the shell that starts it, or a
    /// parent's `signal(SIGCHLD, SIG_IGN)`: kept across exec) runs its steps and reports
    /// their statuses. Found by the hostile-environment audit: the kernel reaped every
    /// child itself, flow got ECHILD and every step failed with exit 255 (`true` too).
    @Test func aParentThatIgnoresSIGCHLDDoesNotFailEveryStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: "true"
              - concurrent:
                  - shell: exit 3
                    continue_on_error: true
                  - shell: echo ok
            """)
        // bash's `trap ''` ignores the signal itself (dash's does not, for CHLD), and exec keeps it so.
        try box.write("start.sh", "trap '' CHLD\nflow=$1\nshift\nexec \"$flow\" \"$@\"\n")
        let r = try FlowBinary.run(["run", "wf.yaml", "--output", "prefixed"], in: box.root,
                                   shellScript: "FLOW_STATE_DIR='\(box.state.path)' exec bash start.sh \"$0\" \"$@\"")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("exit 3"), "\(r.stderr)")
        #expect(!r.stderr.contains("exit 255"), "\(r.stderr)")
        #expect(r.stdout.contains("| ok"), "\(r.stdout)")
    }
}
