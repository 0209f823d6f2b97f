import Foundation
import Testing

/// An `interactive` step writes to the terminal itself, in every output mode, unseen by
/// flow: flow's next line of its own must still start a line of its own, not be glued to
/// an unfinished last line the step left (`printf 'no newline'; exit 1`).
@Suite struct InteractiveOutputTests {
    /// One step that leaves its line unfinished, one that ends its line (no blank line may
    /// follow it), then a captured step.
    static let workflow = """
        steps:
          - { name: ask, interactive: true, shell: "printf 'no newline'; exit 1", continue_on_error: true }
          - { name: whole, interactive: true, shell: "echo whole line" }
          - { name: after, shell: "echo after" }
        """

    /// The rows each mode leaves on a terminal, times as `T`.
    static let rows: [String: [String]] = [
        "prefixed": [
            "▶ ask", "no newline", "✗ ask exit 1 (allowed to fail) T", "▶ whole", "whole line", "✓ whole T",
            "▶ after", "after | after", "✓ after T", "✓ succeeded: 2 succeeded, 1 failed (allowed) in T",
        ],
        "grouped": [
            "no newline", "── ✗ ask (exit 1 T; allowed to fail) ──", "whole line", "── ✓ whole (T) ──",
            "── ✓ after (T) ──", "after", "✓ succeeded: 2 succeeded, 1 failed (allowed) in T",
        ],
        "raw": [
            "no newline", "✗ ask exit 1 (allowed to fail) T", "whole line", "after", "✓ succeeded: 2 succeeded, 1 failed (allowed) in T",
        ],
    ]

    /// On a terminal: in prefixed, grouped and raw output (captured, and with
    /// `--no-journal`) flow's lines after an interactive step each start a row, with no
    /// blank row where the step ended its line.
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"),
          arguments: ["prefixed", "grouped", "raw"], [false, true])
    func flowsNextLineStartsARowAfterAnInteractiveStep(mode: String, noJournal: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", mode] + (noJournal ? ["--no-journal"] : []),
                                  rows: 40, columns: 60)
        #expect(run.finish() == 0, "\(run.report)")
        #expect(TTYOutputTests.timeless(run.screen.all) == Self.rows[mode], "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
    }

    /// `--output tty`: the live tree is not redrawn while an interactive step has the
    /// terminal (a redraw would erase what it wrote); its frame showing the step running
    /// stays above the step's output, and the tree goes on below it, on a row of its own.
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func theLiveTreeLeavesAnInteractiveStepsOutputAlone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 40, columns: 60)
        #expect(run.finish() == 0, "\(run.report)")
        #expect(TTYOutputTests.timeless(run.screen.all) == [
            "▶ ask T", "· whole", "· after", "0/3 steps finished",
            "no newline",
            "✗ ask exit 1 (allowed to fail) T", "▶ whole T", "· after", "1/3 steps finished",
            "whole line",
            "✗ ask exit 1 (allowed to fail) T", "✓ whole T", "✓ after T", "3/3 steps finished",
            "✓ succeeded: 2 succeeded, 1 failed (allowed) in T",
        ], "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
    }

    /// Into files, stdout and stderr apart: the step left its stdout line unfinished, so
    /// flow's next line there (a prefixed output line) starts with a line break, and its
    /// stderr, which the step did not leave mid-line, gets none.
    @Test func inFilesEachStreamStartsALineWhereTheStepLeftItsUnfinished() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: ask, interactive: true, shell: "printf 'no newline'; exit 1", continue_on_error: true }
              - { name: after, shell: "echo after" }
            """)
        let flow = try LiveFlow(executable: "/bin/sh", arguments: ["-c", "exec \"$0\" run wf.yaml --output prefixed >out 2>err",
                                                                   RunSandbox.flowPath],
                                environment: box.environment, directory: box.root.path, ownGroup: false)
        let r = try flow.finish(timeout: 60)
        #expect(r.status == 0, "\(r)")
        #expect(box.read("out") == "no newline\nafter | after\n", "\(box.read("out") ?? "")")
        let err = (box.read("err") ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(TTYOutputTests.timeless(err) == [
            "▶ ask", "✗ ask exit 1 (allowed to fail) T", "▶ after", "✓ after T", "✓ succeeded: 1 succeeded, 1 failed (allowed) in T", "",
        ], "\(box.read("err") ?? "")")
    }

    /// Under `--output json` flow's stdout carries only events: an interactive step's
    /// stdout goes to flow's stderr (its bytes broke every JSON reader of the stream).
    @Test func underJSONAnInteractiveStepWritesToStderr() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: ask, interactive: true, shell: "echo to-out; echo to-err >&2; printf 'no newline'" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        for line in r.stdoutLines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)")
        }
        #expect(r.stderr.hasPrefix("to-out\nto-err\nno newline"), "\(r)")
    }

    /// `./generate.sh | flow run -`: the workflow took flow's standard input, to its end,
    /// so an interactive step reads the terminal instead (it read the spent pipe: EOF, and
    /// a prompt could never be answered).
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func anInteractiveStepReadsTheTerminalWhenTheWorkflowCameFromStandardInput() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: ask
                interactive: true
                shell: 'printf "name? "; read answer; echo "got [$answer]"'
            """)
        let terminal = try JobControlTests.Terminal()
        let shell = try LiveFlow(executable: RunSandbox.childPath,
                                 arguments: ["--job-shell", terminal.slavePath, "/bin/sh", "-c",
                                             "cat wf.yaml | \"$0\" run - --output prefixed --no-journal", RunSandbox.flowPath],
                                 environment: box.environment, directory: box.root.path, ownGroup: false)
        defer { box.killLeftovers() }
        #expect(terminal.waitFor("name? "), "\(terminal.text)")
        terminal.type("bob\n")
        #expect(shell.waitForLine("job exit 0"), "\(shell.stdout)\n\(terminal.text)")
        #expect(terminal.waitFor("got [bob]"), "\(terminal.text)")
    }
}
