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
}
