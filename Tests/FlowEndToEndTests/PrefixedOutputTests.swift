import Foundation
import Testing

/// `--output prefixed` shows the start and end of each step, as the contract says: a
/// `print`, a group and a `use` are steps too, framed by their own `▶` and end lines.
@Suite struct PrefixedOutputTests {
    /// Times read `T`: they are the run's, not the test's.
    static func timeless(_ lines: [String]) -> [String] {
        lines.map { $0.replacing(/[0-9]+\.[0-9]s/, with: "T") }
    }

    /// Every kind gets its `▶` and end line; a group's come around its steps', a retried
    /// group's again for each attempt, a group that failed because a step inside it did
    /// ends with its time alone, and one whose own `timeout` passed with its `⏱`. The
    /// `print` messages go to stderr here, so that one stream has every line in order.
    @Test func everyKindOfStepHasItsStartAndEnd() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              greet:
                params:
                  who: {}
                steps:
                  - print: "hello ${{ params.who }}"
                    stream: stderr
            steps:
              - name: g
                retry: 1
                sequential:
                  - name: flaky
                    shell: test -f marker || { touch marker; exit 1; }
              - name: hi
                use: greet
                with: { who: you }
              - name: lenient
                continue_on_error: true
                sequential:
                  - name: four
                    shell: exit 4
              - name: wait
                delay: 10ms
              - name: slow
                timeout: 0.2s
                sequential:
                  - name: sleeper
                    shell: exec sleep 30
            finally:
              - print: "done ${{ run.status }}"
                stream: stderr
            """)
        let r = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(Self.timeless(r.stderrLines) == [
            "▶ g", "▶ flaky", "✗ flaky exit 1 T", "✗ g T",
            "g: retrying (attempt 2 of 2)",
            "▶ g (attempt 2)", "▶ flaky", "✓ flaky T", "✓ g T",
            "▶ hi", "▶ print@2.1", "print@2.1 | hello you", "✓ print@2.1 T", "✓ hi T",
            "▶ lenient", "▶ four", "✗ four exit 4 (allowed to fail) T", "✗ lenient (allowed to fail) T",
            "▶ wait", "✓ wait T",
            "▶ slow", "▶ sleeper", "⊘ sleeper cancelled T", "⏱ slow timed out after 200ms T",
            "▶ print@f1", "print@f1  | done failed", "✓ print@f1 T",
            "✗ failed: 4 succeeded, 1 failed (allowed), 1 timed_out, 1 cancelled in T",
        ], "\(r)")
    }

    /// A retried step whose last failure `continue_on_error` allows is replayed once at the
    /// end: its attempts' failures (the retried one unmarked, the last one marked allowed)
    /// were taken for two steps, and its output block was written twice.
    @Test func aRetriedStepAllowedToFailIsReplayedOnce() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: x, shell: "echo inner; exit 3", retry: 1, continue_on_error: true }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-journal"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderrLines.filter { $0 == "── output of x ──" }.count == 1, "\(r)")
        #expect(r.stderr.contains("── output of x ──\ninner\n── attempt 2 ──\ninner\n✓ succeeded"), "\(r)")
    }

    /// `--quiet` keeps the lines that say why: the failed step's, not the `✗` of each
    /// group around it, which would only repeat it.
    @Test func quietKeepsTheFailureNotTheGroupsAroundIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: outer
                sequential:
                  - print: starting
                  - name: inner
                    concurrent:
                      - name: broken
                        shell: exit 2
            """)
        let loud = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed"])
        #expect(loud.status == 1, "\(loud)")
        #expect(Self.timeless(loud.stderrLines) == [
            "▶ outer", "▶ print@1.1", "✓ print@1.1 T", "▶ inner", "▶ broken",
            "✗ broken exit 2 T", "✗ inner T", "✗ outer T",
            "✗ failed: 1 succeeded, 1 failed in T",
        ], "\(loud)")
        #expect(loud.stdout == "print@1.1 | starting\n", "\(loud)")

        let quiet = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed", "--quiet"])
        #expect(quiet.status == 1, "\(quiet)")
        #expect(Self.timeless(quiet.stderrLines) == [
            "✗ broken exit 2 T", "✗ failed: 1 succeeded, 1 failed in T",
        ], "\(quiet)")
        #expect(quiet.stdout == "", "\(quiet)")
    }
    /// An unnamed shell or `use` step's start says what it runs, as make echoes a command,
    /// go-task prints `task: [test] make test` and GitHub Actions titles a step `Run make
    /// test`: a ported Makefile is mostly bare `- make test` steps, and its log read
    /// `▶ shell@2` alone. A multi-line command shows its first line; a named step, a later
    /// attempt and an undo step that is named say nothing more. `grouped` titles say it too.
    @Test func anUnnamedStepsStartSaysWhatItRuns() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              build:
                steps:
                  - echo built
            steps:
              - use: build
              - name: named
                shell: echo named
              - shell: |
                  echo two
                  echo lines
              - shell: test -f marker || { touch marker; exit 1; }
                retry: 1
            """)
        let r = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(Self.timeless(r.stderrLines) == [
            "▶ use@1: build", "▶ shell@1.1: echo built", "✓ shell@1.1 T", "✓ use@1 T",
            "▶ named", "✓ named T",
            "▶ shell@3: echo two …", "✓ shell@3 T",
            "▶ shell@4: test -f marker || { touch marker; exit 1; }", "✗ shell@4 exit 1 T",
            "shell@4: retrying (attempt 2 of 2)", "▶ shell@4 (attempt 2)", "✓ shell@4 T",
            "✓ succeeded: 4 succeeded in T",
        ], "\(r)")

        try FileManager.default.removeItem(atPath: box.path("marker"))
        let grouped = try box.run(["run", "wf.yaml", "--no-journal", "--output", "grouped"])
        #expect(grouped.status == 0, "\(grouped)")
        #expect(Self.timeless(grouped.stderrLines).filter { $0.hasPrefix("──") } == [
            "── ✓ shell@1.1: echo built (T) ──", "── ✓ named (T) ──", "── ✓ shell@3: echo two … (T) ──",
            "── ✗ shell@4: test -f marker || { touch marker; exit 1; } (exit 1 T) ──",
            "── ✓ shell@4: test -f marker || { touch marker; exit 1; } (attempt 2; T) ──",
        ], "\(grouped)")
    }
}
