import Foundation
import Testing

/// When flow colours what it prints: only what goes to a terminal.
@Suite(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
struct OutputColorTests {
    /// `flow run wf.yaml > build.log` at a terminal: stderr (flow's own lines) is the
    /// terminal and is coloured, but the prefixed lines in the file carry no escape codes.
    /// Before, every stdout line's label in the file was wrapped in `ESC[36m … ESC[0m`.
    @Test func prefixedLinesInAFileAreNotColouredWhenStderrIsATerminal() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: echo building; echo warned >&2
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "prefixed"], rows: 20, columns: 80,
                                  env: ["NO_COLOR": ""], stdoutFile: "build.log")
        #expect(run.finish() == 0, "\(run.report)")
        #expect(box.read("build.log") == "build | building\n")
        // On the terminal, flow's lines and the stderr line's label keep their colour.
        let terminal = String(decoding: run.bytes, as: UTF8.self)
        #expect(terminal.contains("\u{1B}[36mbuild\u{1B}[0m | warned"), "\(run.report)")
        #expect(terminal.contains("\u{1B}[32m✓\u{1B}[0m build"), "\(run.report)")
    }

    /// `FORCE_COLOR=0` (or `false`) at a terminal means no colour, as Node and its
    /// `supports-color` take it: a CI agent that sets it on a pseudo-terminal (or a user
    /// who exports it) asked for plain text. Before, `0` was only "not forcing" and the
    /// terminal was coloured anyway.
    @Test(arguments: ["0", "false"])
    func forceColorZeroTurnsColourOffAtATerminal(_ value: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: echo building
              - shell: exit 3
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "prefixed"], rows: 20, columns: 80,
                                  env: ["NO_COLOR": "", "FORCE_COLOR": value])
        #expect(run.finish() == 1, "\(run.report)")
        let terminal = String(decoding: run.bytes, as: UTF8.self)
        #expect(terminal.contains("✓ build"), "\(run.report)")
        #expect(!terminal.contains("\u{1B}["), "\(run.report)")
        try box.write("bad.yaml", "steps:\n  - shell: echo hi\n    retyr: 2\n")
        let check = try TerminalRun(box, ["validate", "bad.yaml"], rows: 20, columns: 80,
                                    env: ["NO_COLOR": "", "FORCE_COLOR": value])
        #expect(check.finish() == 1, "\(check.report)")
        let shown = String(decoding: check.bytes, as: UTF8.self)
        #expect(shown.contains("retyr") && !shown.contains("\u{1B}["), "\(check.report)")
    }

    /// `TERM=dumb`, or no `TERM` at all, at a terminal: no colour and no live tree (which
    /// redraws by moving the cursor), as git, less and ncurses take such a terminal; `auto`
    /// picks the prefixed lines it picks for a pipe. `FORCE_COLOR` still colours them, and
    /// `NO_COLOR` wins over that.
    @Test(arguments: ["dumb", ""])
    func aDumbOrUnsetTermGetsNeitherColourNorTheLiveTree(_ term: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: echo building
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml"], rows: 20, columns: 80, env: ["NO_COLOR": "", "TERM": term])
        #expect(run.finish() == 0, "\(run.report)")
        let terminal = String(decoding: run.bytes, as: UTF8.self)
        #expect(terminal.contains("build | building"), "\(run.report)")
        #expect(terminal.contains("✓ succeeded: 1 succeeded in"), "\(run.report)")
        #expect(!terminal.contains("\u{1B}"), "\(run.report)")
        try box.write("bad.yaml", "steps:\n  - shell: echo hi\n    retyr: 2\n")
        let check = try TerminalRun(box, ["validate", "bad.yaml"], rows: 20, columns: 80, env: ["NO_COLOR": "", "TERM": term])
        #expect(check.finish() == 1, "\(check.report)")
        let shown = String(decoding: check.bytes, as: UTF8.self)
        #expect(shown.contains("retyr") && !shown.contains("\u{1B}"), "\(check.report)")
        let forced = try TerminalRun(box, ["run", "wf.yaml"], rows: 20, columns: 80,
                                     env: ["NO_COLOR": "", "TERM": term, "FORCE_COLOR": "1"])
        #expect(forced.finish() == 0, "\(forced.report)")
        let coloured = String(decoding: forced.bytes, as: UTF8.self)
        #expect(coloured.contains("\u{1B}[32m✓\u{1B}[0m build"), "\(forced.report)")
        #expect(!coloured.contains("steps finished"), "no live tree: \(forced.report)")
        let plain = try TerminalRun(box, ["run", "wf.yaml"], rows: 20, columns: 80,
                                    env: ["NO_COLOR": "1", "TERM": term, "FORCE_COLOR": "1"])
        #expect(plain.finish() == 0, "\(plain.report)")
        #expect(!String(decoding: plain.bytes, as: UTF8.self).contains("\u{1B}"), "\(plain.report)")
    }
}
