import Foundation
import Testing

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
        let recorded = Array("hello | hello\nlatin1 | caf".utf8) + [0xE9]
            + Array("\ncrlf | one\r\ncrlf | two\r\nprogress | 10%\r100%\nerr | to stderr\nprint@6 | said\n".utf8)
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
