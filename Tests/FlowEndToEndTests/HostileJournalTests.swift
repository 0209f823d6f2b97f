import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import FlowJournal

/// A journal another process gets in the way of, found by the hostile-input review: flow
/// says so, goes on, and loses nothing it had recorded.
@Suite struct HostileJournalTests {
    /// Another process (here a SQLite connection of the test, as `sqlite3` holding a write
    /// transaction) keeps the database locked from the middle of a run to its end. The run
    /// ends as it would (exit 0), says the journal stopped recording, and what its lock file
    /// held is not thrown away: the next `flow` folds it in, so step `a`, whose success was
    /// only in the lock file, reads `succeeded` and a `resume` does not run it again. Its
    /// file used to be removed when the last commit failed: `a` read `interrupted` and was
    /// run again.
    @Test func aRunWhoseLastCommitsTheDatabaseRefusedKeepsWhatItsLockFileHeld() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: touch a-started; while [ ! -f locked ]; do sleep 0.01; done; echo a >> ran
              - name: b
                shell: echo b
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        let deadline = Date().addingTimeInterval(30)
        while !box.exists("a-started"), Date() < deadline { usleep(10_000) }
        #expect(box.exists("a-started"))
        // The first step starts before a new journal exists (docs/journal.md): wait for the
        // run's row read-only, creating nothing. Opened for writing sooner, the test's
        // connection could create the database file itself, or find it without its tables.
        let journal = box.state.path + "/journal.sqlite"
        func recorded() -> Bool {
            guard let reader = try? SQLiteConnection(readOnlyPath: journal, busyTimeout: 100) else { return false }
            return (try? reader.value("SELECT count(*) FROM runs") as Int?) == 1
        }
        while !recorded() {
            try #require(Date() < deadline, "the run was not recorded")
            usleep(10_000)
        }
        let db = try SQLiteConnection(path: journal)
        // The run's row first (its opening may still be under way): locked before it, the
        // run would not be recorded at all.
        while true {
            try db.execute("BEGIN IMMEDIATE")
            if try db.value("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'") as Int? == 1,
               try db.value("SELECT count(*) FROM runs") as Int? == 1 { break }
            try db.execute("ROLLBACK")
            try #require(Date() < deadline, "the run was not recorded")
            usleep(10_000)
        }
        _ = try box.write("locked", "")
        // flow gives up on the database after its busy timeout (10 s per commit); held until then.
        let r = try flow.finish(timeout: 60)
        try db.execute("ROLLBACK")
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("error: the journal stopped recording this run: "), "\(r)")
        let show = try JournalEndToEndTests.show(box)
        #expect(show["state"] as? String == "interrupted", "\(show)")
        #expect(JournalEndToEndTests.stepStates(show) == ["a": "succeeded", "b": "succeeded"], "\(show)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.state.path + "/locks").filter { $0.hasSuffix(".lock") } == [])
        let resumed = try box.run(["resume", "last"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(box.lines("ran") == ["a"], "\(resumed)")
    }

    /// Another process holding the database locked as a run starts delays the journal's
    /// record of the run, and flow waits for it before it starts the second step (the first
    /// one's end must be recorded before anything follows from it). That wait is flow's,
    /// not the step's: the second step's time starts after it, in the live output, the
    /// events, and `show`. It was in the step's time: `✓ second 10.2s` behind a lock held
    /// 10 s. Compared by cause: the step's `running` comes after the test let the lock go,
    /// and its time is no more than what was left of the run after that.
    @Test func flowsWaitForALockedJournalIsInNoStepsTime() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: first
                shell: "true"
              - name: second
                shell: "true"
            """)
        #expect(try box.run(["run", "wf.yaml"]).status == 0, "the journal exists")
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute("BEGIN IMMEDIATE")
        let flow = try box.start(["run", "wf.yaml", "--output", "json"])
        let firstEnded = flow.waitFor { out, _ in out.contains(#""name":"first","kind":"shell","from":"running","to":"succeeded""#) }
        #expect(firstEnded, "\(flow.stdout)\(flow.stderr)")
        // Held 0.3 s more: that is how long flow waits. Not a wait for something to happen:
        // the assertions below hold however long it is held; the hold gives the wait a
        // length the step's time would show if it included it (without the change, the
        // second step's `running` came right after the first's end, before the wait).
        usleep(300_000)
        let released = Date().timeIntervalSince1970
        try db.execute("ROLLBACK")
        let r = try flow.finish(timeout: 60)
        #expect(r.status == 0, "\(r)")
        let events = r.jsonEvents
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func time(_ event: [String: Any]?) -> Double? {
            (event?["time"] as? String).flatMap(format.date(from:))?.timeIntervalSince1970
        }
        // Event times are rounded down to the millisecond.
        let millisecond = 0.001
        let started = try #require(time(events.first { $0["name"] as? String == "second" && $0["to"] as? String == "running" }))
        let finished = try #require(time(events.last))
        #expect(started >= released - millisecond, "the step's clock starts after flow's wait: \(started - released)")
        let elapsed = try #require(events.first { $0["name"] as? String == "second" && $0["to"] as? String == "succeeded" }?["elapsed_seconds"] as? Double)
        #expect(elapsed <= finished - released + millisecond, "\(elapsed) s, the run's last \(finished - released) s")
        let show = try JournalEndToEndTests.show(box)
        let recorded = try #require(JournalEndToEndTests.step(named: "second", in: show)?["duration_seconds"] as? Double, "\(show)")
        #expect(recorded <= finished - released + millisecond, "`show`: \(recorded) s, the run's last \(finished - released) s")
    }

    /// The database, its `-wal` or its `-shm` is there but is a directory or a FIFO: every
    /// command names that file and says to move it away; `flow run` goes on unrecorded.
    /// SQLite says "disk I/O error" or "unable to open database file" then, and flow passed
    /// that on with "check its permissions" (for a `-wal` directory, `runs` said SQLite
    /// must write the `-shm` file): neither was what to fix.
    @Test(arguments: [("journal.sqlite", "a directory"), ("journal.sqlite", "a FIFO"), ("journal.sqlite-wal", "a directory"),
                      ("journal.sqlite-shm", "a directory")])
    func aDatabaseFileThatIsNotAFileIsNamed(_ name: String, _ what: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - shell: echo ran >> ran\n")
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let path = box.state.path + "/" + name
        for file in ["journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"] where file == name || name == "journal.sqlite" {
            unlink(box.state.path + "/" + file)
        }
        #expect(what == "a FIFO" ? mkfifo(path, 0o644) == 0 : mkdir(path, 0o755) == 0)
        let expected = "cannot open the journal \(box.state.path)/journal.sqlite: \(path) is \(what), not a file; move it away"
        let run = try box.run(["run", "wf.yaml"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("error: " + expected), "\(run)")
        #expect(run.stderr.contains("this run is not recorded"), "\(run)")
        #expect(box.lines("ran") == ["ran", "ran"], "\(run)")
        // The history commands read a journal whose `-shm` they cannot use as it is.
        guard name != "journal.sqlite-shm" else { return }
        for command in [["runs"], ["show", "last"], ["logs", "last"], ["resume", "last"], ["undo", "last"]] {
            let r = try box.run(command)
            #expect(r.status == 2, "\(command): \(r)")
            #expect(r.stderr.hasPrefix("error: " + expected), "\(command): \(r)")
        }
    }

    /// The database is a symbolic link to nothing (a journal moved, or a link into a volume
    /// not mounted): every command names the link and where it points, as for a state dir
    /// that is one. `flow run` said "unable to open database file; check its permissions",
    /// and `flow runs` "no journal in DIR/ yet: `flow run` records runs there".
    @Test func aDatabaseThatIsADanglingLinkIsNamed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - shell: echo ran >> ran\n")
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let path = box.state.path + "/journal.sqlite"
        for file in ["journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"] { unlink(box.state.path + "/" + file) }
        #expect(symlink(box.path("gone/journal.sqlite"), path) == 0)
        let expected = "cannot open the journal \(path): it is a symbolic link to \(box.path("gone/journal.sqlite")), "
            + "which does not exist; move it away"
        let run = try box.run(["run", "wf.yaml"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("error: " + expected), "\(run)")
        #expect(run.stderr.contains("this run is not recorded"), "\(run)")
        for command in [["runs"], ["show", "last"], ["logs", "last"], ["resume", "last"], ["undo", "last"]] {
            let r = try box.run(command)
            #expect(r.status == 2, "\(command): \(r)")
            #expect(r.stderr.hasPrefix("error: " + expected), "\(command): \(r)")
        }
    }

    /// What `flow logs` reads of a run's output, damaged: the run's `output/RUN.log` a FIFO,
    /// a directory or a device, or its rows pointing at a negative offset or 2^63 bytes.
    /// Each is an error naming the file (exit 2), within the time out. The FIFO hung `flow
    /// logs` for good, the device gave its bytes as the run's output, and the rows trapped
    /// (SIGILL) or aborted (out of memory) with a backtrace.
    @Test(arguments: ["fifo", "directory", "device", "negative", "huge"])
    func damagedOutputIsAnErrorNotAHangOrACrash(_ damage: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - name: a\n    shell: echo hello\n")
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let id = try #require(try JournalEndToEndTests.runs(box).first?["id"] as? String)
        let log = box.state.path + "/output/\(id).log"
        switch damage {
        case "fifo": #expect(unlink(log) == 0 && mkfifo(log, 0o644) == 0)
        case "directory": #expect(unlink(log) == 0 && mkdir(log, 0o755) == 0)
        case "device": #expect(unlink(log) == 0 && symlink("/dev/zero", log) == 0)
        default:
            let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
            try db.execute(damage == "negative" ? "UPDATE output_lines SET file_offset = -5, file_length = -1"
                                                : "UPDATE output_lines SET file_length = 9223372036854775807")
        }
        for arguments in [["logs", "last"], ["logs", "last", "a"], ["logs", "last", "--follow"]] {
            let r = try box.run(arguments, timeout: 20)
            #expect(r.status == 2, "\(arguments): \(r)")
            #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains("/output/\(id).log"), "\(arguments): \(r)")
            #expect(!r.stderr.contains("Backtrace") && !r.stderr.contains("Fatal error"), "\(arguments): \(r)")
        }
    }

    /// Rows no run could have written (a journal edited by hand, or by another tool): times
    /// past any date, a negative or huge depth, an exit code past 32 bits. `runs`, `show`,
    /// `resume` and `undo` read them as unknown (or the nearest depth a tree has) instead of
    /// trapping with a backtrace (`Double value cannot be converted to Int`, `Negative count
    /// not allowed`) or building an indentation until killed.
    @Test(arguments: [
        "UPDATE runs SET started_at = 9223372036854775807", "UPDATE runs SET ended_at = 9223372036854775807",
        "UPDATE steps SET started_at = -9223372036854775808", "UPDATE steps SET ended_at = 1e308",
        "UPDATE steps SET depth = -1", "UPDATE steps SET depth = 9223372036854775807",
        "UPDATE steps SET exit_code = 9223372036854775807", "UPDATE runs SET exit_status = 9223372036854775807",
    ])
    func implausibleRowsAreReadWithoutACrash(_ damage: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: echo hi
                undo:
                  shell: echo undone
              - name: b
                shell: exit 3
            """)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute(damage)
        for arguments in [["runs"], ["runs", "--json"], ["show", "last"], ["show", "last", "--json"], ["resume", "last", "--no-rollback"]] {
            let r = try box.run(arguments, timeout: 20)
            #expect([0, 1].contains(r.status), "\(damage): \(arguments): \(r)")
            #expect(!r.stderr.contains("Backtrace") && !r.stderr.contains("Fatal error"), "\(damage): \(arguments): \(r)")
        }
        // The resume's, by id: with the first damage `last` is still the run resumed.
        let resume = try #require(try JournalEndToEndTests.runs(box).first { $0["kind"] as? String == "resume" }?["id"] as? String)
        let undo = try box.run(["undo", resume], timeout: 20)
        #expect(undo.status == 0, "\(damage): \(undo)")
    }

    /// A `flow resume` the journal cannot record (another process holds it locked past the
    /// busy timeout) runs nothing, exit 2, as `flow undo` already did. It used to run
    /// unrecorded: its rollback reversed `a`, which the journal still held as `succeeded`,
    /// so the `flow undo` after it reversed `a` a second time.
    @Test func aResumeTheJournalCannotRecordRunsNothing() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: echo a >> ran
                undo:
                  shell: echo a >> undone
              - name: b
                shell: echo b >> ran; exit 3
            """)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        do {
            let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
            try db.execute("BEGIN IMMEDIATE")
            let r = try box.run(["resume", "last"])
            try db.execute("ROLLBACK")
            #expect(r.status == 2, "\(r)")
            #expect(r.stderr.contains("error: the resume cannot be recorded in the journal, so nothing was run"), "\(r)")
        }
        #expect(box.lines("ran") == ["a", "b"])
        #expect(box.lines("undone") == [])
        let undo = try box.run(["undo", "last"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("undone") == ["a"], "\(undo)")
    }

    /// A dead run's lock file with a line no step could have written (another tool's, or
    /// damaged): here `pending → succeeded` of step `b`, which never ran. The next `flow`
    /// folds in nothing from that line on, so `b` does not read `succeeded` and `flow
    /// resume` runs it. The line was folded in as it was: `b` read `succeeded`, and the
    /// resume skipped it.
    @Test func aLockFileLineNoStepCouldWriteIsNotFoldedIn() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: echo a >> ran
              - name: b
                shell: echo b >> ran
            """)
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let id = try #require(try JournalEndToEndTests.runs(box).first?["id"] as? String)
        // As a run killed after `a` leaves it: `running`, no lock held, `b`'s lines not yet in.
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute("""
            UPDATE runs SET state = 'running', ended_at = NULL, exit_status = NULL;
            DELETE FROM transitions WHERE path = '2';
            UPDATE steps SET state = 'pending', attempts = 0, exit_code = NULL, started_at = NULL, ended_at = NULL,
                completed_seq = NULL WHERE path = '2';
            DELETE FROM attempts WHERE path = '2';
            """)
        let seq = try #require(try db.value("SELECT MAX(seq) FROM transitions") as Int?)
        try box.write("state/locks/\(id).lock", #"{"seq":\#(seq + 1),"path":"2","from":"pending","to":"succeeded","attempt":1,"time":1}"# + "\n")
        let show = try JournalEndToEndTests.show(box)
        #expect(JournalEndToEndTests.stepStates(show) == ["a": "succeeded", "b": "pending"], "\(show)")
        let resumed = try box.run(["resume", "last"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(box.lines("ran") == ["a", "b", "b"], "\(resumed)")
    }

    /// A run whose recorded `args` cannot be read back (a row edited by hand or by another
    /// tool) is not resumed or undone (exit 2, nothing run): the arguments were taken as
    /// none, and `flow resume` ran the steps with the defaults of `vars`, not with the
    /// `--var` the run was given.
    @Test(arguments: ["{not json", "[]", #"{"vars":"x"}"#, #"{"options":{"rollback":"off"}}"#])
    func aRunWhoseRecordedArgumentsAreDamagedIsNotResumedOrUndone(_ damage: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              target: staging
            steps:
              - name: a
                shell: echo "${{ vars.target }}" >> ran
                undo:
                  shell: echo "${{ vars.target }}" >> undone
              - name: b
                shell: exit 3
            """)
        #expect(try box.run(["run", "wf.yaml", "--var", "target=prod", "--no-rollback"]).status == 1)
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute("UPDATE runs SET args = ?", [damage])
        for command in ["resume", "undo"] {
            let r = try box.run([command, "last"])
            #expect(r.status == 2, "\(command): \(r)")
            #expect(r.stderr.contains("are damaged"), "\(command): \(r)")
        }
        #expect(box.lines("ran") == ["prod"])
        #expect(box.lines("undone") == [])
        // `show` says so (it printed no `arguments:` line, as for a run given none).
        let show = try box.run(["show", "last"])
        #expect(show.status == 0)
        #expect(show.stdoutLines.contains { $0.hasPrefix("arguments: damaged") }, "\(show)")
        let json = try box.run(["show", "last", "--json"])
        #expect(json.stdout.contains(#""arguments_damaged" : true"#) || json.stdout.contains(#""arguments_damaged": true"#), "\(json.stdout.prefix(600))")
    }

    /// The workflow recorded with a run, damaged in the journal while the file is as the run
    /// read it: `flow resume` says so (exit 2) and `--force` resumes with the file. It said
    /// `changed since the run (H → H)`, one hash twice.
    @Test func aDamagedRecordedWorkflowIsSaidToBeDamaged() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - name: a\n    shell: echo a >> ran\n  - name: b\n    shell: test -f fixed\n")
        #expect(try box.run(["run", "wf.yaml"]).status == 1)
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute("UPDATE runs SET content = x'00ff3a3a'")
        let r = try box.run(["resume", "last"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.contains("error: wf.yaml is as the run read it ("), "\(r)")
        #expect(r.stderr.contains("but the workflow recorded with the run is damaged (it does not hash to that)"), "\(r)")
        _ = try box.write("fixed", "")
        let forced = try box.run(["resume", "last", "--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(box.lines("ran") == ["a"], "\(forced)")
    }

    /// A run's lock file that is not a file (a FIFO, or a link to `/dev/zero`, put there by
    /// hand) is left alone: every command that opens the journal goes on, and the run reads
    /// as one whose process died. Every such `flow` hung on the FIFO for good, and read
    /// `/dev/zero` until memory ran out (here: until `ulimit -v` stopped it).
    @Test(arguments: ["fifo", "device"])
    func aLockFileThatIsNotAFileIsLeftAlone(_ kind: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - name: a\n    shell: echo a\n  - name: b\n    shell: exit 3\n")
        #expect(try box.run(["run", "wf.yaml"]).status == 1)
        let id = try #require(try JournalEndToEndTests.runs(box).first?["id"] as? String)
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute("UPDATE runs SET state = 'running', ended_at = NULL, exit_status = NULL")
        let lock = box.state.path + "/locks/\(id).lock"
        #expect(kind == "fifo" ? mkfifo(lock, 0o644) == 0 : symlink("/dev/zero", lock) == 0)
        for arguments in [["runs"], ["show", "last"], ["logs", "last"]] {
            let r = try FlowBinary.run(arguments + ["--state-dir", box.state.path], in: box.root, timeout: 20,
                                       memoryLimitKB: 1_000_000)
            #expect(r.status == 0, "\(arguments): \(r)")
        }
        let runs = try FlowBinary.run(["runs", "--state-dir", box.state.path], in: box.root, timeout: 20, memoryLimitKB: 1_000_000)
        #expect(runs.stdout.contains("interrupted"), "\(runs)")
    }
}
