import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--output raw`: the steps' bytes reach flow's stdout and stderr untouched, and the
/// journal records them as in every other mode.
@Suite struct RawOutputTests {
    static let workflow = """
        steps:
          - name: hello
            shell: printf 'hello\\n'
          - name: latin1
            shell: printf 'caf\\351\\n'
          - name: crlf
            shell: printf 'one\\r\\ntwo\\r\\n'
          - name: progress
            shell: printf '10%%\\r100%%'
          - name: err
            shell: printf 'to stderr\\n' >&2
          - print: said
        """

    @Test func rawBytesPassThroughAndAreRecorded() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 0, "\(r)")
        let expected = Array("hello\ncaf".utf8) + [0xE9] + Array("\none\r\ntwo\r\n10%\r100%said\n".utf8)
        #expect(r.stdoutBytes == expected, "byte for byte, no newline added: \(r.stdoutBytes)")
        #expect(r.stderrLines.first == "to stderr", "\(r)")

        let logs = try box.run(["logs", "last"])
        #expect(logs.status == 0, "\(logs)")
        // Labels padded as `--output prefixed` pads them.
        let recorded = Array("hello    | hello\nlatin1   | caf".utf8) + [0xE9]
            + Array("\ncrlf     | one\r\ncrlf     | two\r\nprogress | 10%\r100%\nerr      | to stderr\nprint@6  | said\n".utf8)
        #expect(logs.stdoutBytes == recorded, "\(logs)")
        #expect(try box.run(["logs", "last", "latin1"]).stdoutBytes == Array("caf".utf8) + [0xE9, 0x0A])
    }

    /// flow's own lines (a failure, the summary) start on a line of their own after a step
    /// left its stderr line unfinished.
    @Test func flowsOwnLinesStartOnANewLine() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: half, shell: "printf 'no newline' >&2; exit 3" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderrLines.first == "no newline", "\(r)")
        #expect(r.stderrLines.dropFirst().first?.hasPrefix("✗ half exit 3") == true, "\(r)")
    }

    /// flow's notes are its own lines on stderr in raw output too, each starting a line of
    /// its own (after an unfinished one a step left): a retry, a rollback, an undo that
    /// failed.
    @Test func notesAreOwnLinesOnStderr() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: prepared
                shell: "true"
                undo:
                  name: unprepare
                  shell: "printf 'undo half' >&2; exit 2"
              - { name: flaky, shell: "printf 'half' >&2; exit 3", retry: 1 }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdout.isEmpty, "\(r)")
        #expect(r.resumeHint != nil, "\(r)")
        #expect(TTYOutputTests.timeless(r.stderrLinesBeforeHint) == [
            "half", "✗ flaky exit 3 T", "flaky: retrying (attempt 2 of 2)",
            "half", "✗ flaky exit 3 T",
            "rolling back 1 step",
            "undo half", "✗ unprepare exit 2 T", "prepared: undo of prepared failed; rollback goes on",
            "✗ failed: 1 failed, 1 undo_failed in T",
        ], "\(r)")
    }

    /// The first signal's note ("stopping…; signal again to kill everything now") is on
    /// stderr in raw output as in the other text modes, captured or not (`--no-journal`).
    @Test(arguments: [false, true])
    func theFirstSignalsNoteIsOnStderr(noJournal: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: work, shell: $CHILD --stderr ready --sleep 30 }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "raw", "--grace", "5s"] + (noJournal ? ["--no-journal"] : []))
        #expect(flow.waitForLine("ready"), "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        let note = "SIGINT: stopping: no new step starts, running steps get SIGINT (SIGKILL after 5s), "
            + "then `finally` and rollback run; signal again to kill everything now"
        // The interrupted run is resumable: the hint says how, when the journal has it.
        #expect((r.resumeHint != nil) == !noJournal, "\(r)")
        #expect(r.stderrLinesBeforeHint.dropLast() == ["ready", note], "\(r)")
        #expect(r.stderrLinesBeforeHint.last?.hasPrefix("⊘ cancelled: ") == true, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// Steps that leave a line unfinished (on stderr, on stdout, or exactly as wide as the
    /// terminal) and one that ends its line: flow's own lines each start a line of their own.
    static let unfinishedLines = """
        steps:
          - { name: half, shell: "printf 'no newline' >&2; exit 3", continue_on_error: true }
          - { name: whole, shell: "echo whole line >&2; exit 4", continue_on_error: true }
          - { name: wide, shell: "printf '%040d' 0 >&2; exit 5", continue_on_error: true }
          - { name: out, shell: "printf 'on stdout'; exit 6" }
        """

    /// The rows `unfinishedLines` leaves, times as `T`.
    static let unfinishedRows = [
        "no newline", "✗ half exit 3 (allowed to fail) T", "whole line", "✗ whole exit 4 (allowed to fail) T",
        String(repeating: "0", count: 40), "✗ wide exit 5 (allowed to fail) T", "on stdout", "✗ out exit 6 T",
        "✗ failed: 4 failed (3 allowed) in T",
    ]

    /// With `--no-journal` the steps write to the terminal themselves, unseen by flow: flow
    /// starts its own lines by filling the row with spaces and going back (`\r`), which
    /// moves to a fresh row only from the middle of one (`LineStartProbe`). Captured, flow
    /// sees the bytes, of stdout too (the same terminal). No blank rows, nothing glued.
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"),
          arguments: [true, false])
    func flowsOwnLinesStartALineOnTheTerminalTheStepsWroteTo(noJournal: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.unfinishedLines)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "raw"] + (noJournal ? ["--no-journal"] : []),
                                  rows: 24, columns: 40)
        #expect(run.finish() == 1, "\(run.report)")
        var rows = TTYOutputTests.timeless(run.screen.all)
        // A recorded run ends with the resume hint, wrapped over the last rows.
        if !noJournal {
            let start = try #require(rows.lastIndex { $0.hasPrefix(FlowOutcome.resumeHintPrefix) }, "\(run.report)")
            #expect(rows[start...].joined().contains(" resume "), "\(run.report)")
            rows.removeSubrange(start...)
        }
        // The summary is wider than the terminal: it wraps (rows of 40 columns).
        #expect(rows == Self.wrapped(Self.unfinishedRows, at: 40), "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
    }

    /// `lines` as a terminal `columns` wide shows them: a longer one goes on in the next rows.
    static func wrapped(_ lines: [String], at columns: Int) -> [String] {
        lines.flatMap { line -> [String] in
            var rows: [String] = []
            var rest = Substring(line)
            while rest.count > columns {
                rows.append(String(rest.prefix(columns)))
                rest = rest.dropFirst(columns)
            }
            return rows + [String(rest)]
        }
    }

    /// With stderr on a file and `--no-journal`, flow reads the file's last byte (the steps
    /// wrote it, flow did not see it) and adds a line break only after an unfinished line:
    /// truncated, appended to, and shared with stdout. Captured, flow sees the bytes.
    @Test(arguments: ["2>log", "2>>log", ">log 2>&1"], [true, false])
    func flowsOwnLinesStartALineInTheFileTheStepsWroteTo(_ redirection: String, noJournal: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.unfinishedLines)
        try box.write("log", "before\n")
        let command = "exec \"$0\" run wf.yaml --output raw \(noJournal ? "--no-journal" : "") \(redirection)"
        let flow = try LiveFlow(executable: "/bin/sh", arguments: ["-c", command, RunSandbox.flowPath],
                                environment: box.environment, directory: box.root.path, ownGroup: false)
        let r = try flow.finish(timeout: 60)
        #expect(r.status == 1, "\(r)")
        var expected = Self.unfinishedRows
        if !redirection.contains("2>&1") { expected.removeAll { $0 == "on stdout" } }
        if redirection.contains(">>") { expected.insert("before", at: 0) }
        var lines = (box.read("log") ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // A recorded run ends with the resume hint; an unrecorded one does not.
        let hint = lines.count >= 2 ? lines.remove(at: lines.count - 2) : ""
        if noJournal { lines.insert(hint, at: lines.count - 1) } else {
            #expect(hint.hasPrefix(FlowOutcome.resumeHintPrefix), "\(box.read("log") ?? "")")
        }
        #expect(TTYOutputTests.timeless(lines) == expected + [""], "\(box.read("log") ?? "")")
    }

    /// Into a pipe flow cannot tell where the steps left off: it adds nothing (no blank
    /// line, no escape sequence), and its line may follow a step's unfinished one. Captured
    /// (with the journal), flow sees every byte: see `flowsOwnLinesStartOnANewLine`.
    @Test func intoAPipeFlowAddsNothingToWhatTheStepsWrote() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: half, shell: "printf 'no newline' >&2; exit 3" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw", "--no-journal"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("no newline✗ half exit 3 "), "\(r)")
        #expect(!r.stderr.contains("\u{1B}") && !r.stderr.contains("\n\n"), "\(r)")
    }

    /// An unfinished line (a prompt, a progress bar) shows while the step still runs: raw
    /// output is passed on as read, not held back until its line ends.
    @Test func anUnfinishedLineShowsWhileTheStepRuns() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: ask
                shell: printf 'continue? '; while [ ! -e go ]; do sleep 0.05; done; echo yes
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "raw"])
        #expect(flow.waitFor { out, _ in out == "continue? " }, "\(flow.stdout)")
        try box.write("go", "")
        let r = try flow.finish()
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == "continue? yes\n", "\(r)")
        #expect(try box.run(["logs", "last", "ask"]).stdout == "continue? yes\n", "recorded as one line")
    }

    /// Recording needs the output to pass through flow; with `--no-journal` nothing
    /// records it, and steps write to flow's own stdout (the fast path, as before).
    @Test(arguments: [false, true])
    func stepsWriteToFlowsStdoutOnlyWithoutTheJournal(_ noJournal: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: '[ "$(readlink /proc/$$/fd/1)" = "$(readlink /proc/$PPID/fd/1)" ] && echo same || echo piped'
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"] + (noJournal ? ["--no-journal"] : []))
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == (noJournal ? "same\n" : "piped\n"), "\(r)")
    }
}
