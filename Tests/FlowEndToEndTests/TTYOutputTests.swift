import Foundation
import Testing

/// `--output tty` on a pseudo-terminal, read through a model of the terminal
/// (`TerminalScreen`): what the live tree shows while steps run, and what stays on screen
/// (with the scrolled-off history) when the run ends.
///
/// Steps that must be seen running wait for a file the test writes once the screen showed
/// what it checks (`waitForGo`), rather than sleep and hope a redraw came in time.
@Suite(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
struct TTYOutputTests {
    /// Shell that waits until the test writes `go` in the sandbox.
    static let waitForGo = "while [ ! -e go ]; do sleep 0.05; done"

    /// Times (`0.3s`, `1m05s`) as `T`: they differ from run to run.
    static func timeless(_ lines: [String]) -> [String] {
        lines.map { $0.replacing(/[0-9]+m[0-9]{2}s|[0-9]+\.[0-9]s/, with: "T") }
    }

    /// Whether some row of the screen matches `pattern` whole.
    static func shows(_ screen: TerminalScreen, _ pattern: Regex<Substring>) -> Bool {
        screen.screen.contains { $0.wholeMatch(of: pattern) != nil }
    }

    /// A running step's last line goes into the tree as text: a screen clear, a title, a
    /// cursor move in it do not reach the terminal (colours are dropped too), and of a `\r`
    /// progress line only what follows the last `\r` shows. Before, every redraw wrote it
    /// raw: the screen was cleared and the title set ten times a second.
    @Test(arguments: [false, true])
    func aRunningStepsLastLineIsShownAsText(color: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - name: evil
                    shell: |
                      printf 'x\\033[2J\\033[H\\033]0;pwned\\007 \\033[31mRED\\033[0m \\033[1A\\033[2K\\001\\177end\\n'; \(Self.waitForGo)
                  - name: progress
                    shell: |
                      printf 'step 1\\n\\033[1A\\033[2Kdone 1\\r50%%\\r100%%\\r\\n'; \(Self.waitForGo)
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 20, columns: 80,
                                  env: color ? ["NO_COLOR": ""] : [:])
        let seen = run.waitFor { screen in
            Self.shows(screen, #/  ▶ evil [0-9.]+s  x RED end/#) && Self.shows(screen, #/  ▶ progress [0-9.]+s  100%/#)
        }
        #expect(seen, "\(run.report)")
        try box.write("go", "")
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
        #expect(run.screen.wraps.isEmpty, "\(run.report)")
        #expect(Self.timeless(run.screen.all) == [
            "✓ concurrent T",
            "  ✓ evil T",
            "  ✓ progress T",
            "2/2 steps finished",
            "✓ succeeded: 2 succeeded in T",
        ], "\(run.report)")
    }

    /// A line a step has not ended yet shows while the step runs, as on a terminal: a `\r`
    /// progress bar as far as it got, a `Compiling… ` on stderr. Before, a line showed only
    /// once its `\n` came: a progress bar, which ends its line when it is done, never did.
    @Test func aRunningStepsUnfinishedLineShows() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - name: download
                    shell: |
                      printf 'fetching\\n\\rdownload 10%%'; printf '\\rdownload 60%%'; \(Self.waitForGo)
                  - name: compile
                    shell: |
                      echo started; printf 'Compiling foo ' >&2; \(Self.waitForGo)
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 20, columns: 80)
        let seen = run.waitFor { screen in
            Self.shows(screen, #/  ▶ download [0-9.]+s  download 60%/#) && Self.shows(screen, #/  ▶ compile [0-9.]+s  Compiling foo/#)
        }
        #expect(seen, "\(run.report)")
        try box.write("go", "")
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
        #expect(Self.timeless(run.screen.all) == [
            "✓ concurrent T",
            "  ✓ download T",
            "  ✓ compile T",
            "2/2 steps finished",
            "✓ succeeded: 2 succeeded in T",
        ], "\(run.report)")
    }

    /// A step `flow resume` or `flow undo` takes from the earlier run says where it comes
    /// from, as in `prefixed` and `grouped`. Before, its row showed `0.0s`, as if it had run.
    @Test func aStepFromTheEarlierRunSaysSo() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true", undo: "true" }
              - { name: b, shell: test -f ok }
            """)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let runID = try #require(try JournalEndToEndTests.runs(box).first?["id"] as? String)
        try box.write("ok", "")
        let resumed = try TerminalRun(box, ["resume", "last", "--output", "tty"], rows: 20, columns: 80)
        #expect(resumed.finish() == 0, "\(resumed.report)")
        #expect(Self.timeless(resumed.screen.all).prefix(5) == [
            "resuming run \(runID): 1 step already succeeded",
            "note: carrying on --no-rollback from run \(runID)",
            "✓ a reused from run \(runID)",
            "✓ b T",
            "2/2 steps finished",
        ], "\(resumed.report)")
        // Reversed by `flow undo`, `a` shows its undo's time, no longer where it came from.
        let undone = try TerminalRun(box, ["undo", "last", "--output", "tty"], rows: 20, columns: 80)
        #expect(undone.finish() == 0, "\(undone.report)")
        #expect(Self.timeless(undone.screen.all).contains("↺ a T"), "\(undone.report)")
    }

    /// `flow undo`'s live tree agrees with its summary and with `flow show` of it: the
    /// steps it left alone (nothing to undo, skipped in the run, inside a group it undoes
    /// only in part) read `left alone`, and its count is over the steps it reverses, each
    /// finished once reversed. The tree showed them as skips and counted `5/5 steps
    /// finished` for an undo whose summary said `2 undone`.
    @Test func anUndosTreeCountsWhatItReversesAndSaysWhatItLeftAlone() throws {
        guard pseudoTerminalsAvailable else { return }
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true", undo: "true" }
              - { name: b, shell: "true" }
              - { name: c, if: "false", shell: "true", undo: "true" }
              - name: g
                sequential:
                  - { name: d, shell: "true", undo: "true" }
                  - { name: e, shell: "true" }
            """)
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let undone = try TerminalRun(box, ["undo", "last", "--output", "tty"], rows: 20, columns: 80)
        #expect(undone.finish() == 0, "\(undone.report)")
        let screen = Self.timeless(undone.screen.all)
        for row in ["↺ a T", "○ b left alone", "○ c left alone", "  ↺ d T", "  ○ e left alone", "2/2 steps finished"] {
            #expect(screen.contains(row), "\(row)\n\(undone.report)")
        }
        #expect(screen.last?.hasPrefix("✓ succeeded: 2 undone in ") == true, "\(undone.report)")
        // Once the steps left alone are known (before anything is undone), the total is 2,
        // and a step counts as finished when its undo ran, not at the success replayed first.
        let counts = Self.counts(undone.frames)
        #expect(counts.allSatisfy { $0.finished <= $0.total } && counts.last.map { $0 == (2, 2) } == true,
                "\(counts)\n\(undone.report)")
        let undoStarted = try #require(undone.frames.firstIndex { $0.contains { $0.contains("↺") } }, "\(undone.report)")
        #expect(Self.counts(Array(undone.frames[..<undoStarted])).allSatisfy { $0.finished == 0 }, "\(counts)\n\(undone.report)")
    }

    /// A failed step's row says why, before its time, as prefixed output's end line does
    /// (`✗ b exit 3 0.0s`): an exit code, a signal, a time-out's limit. Before, the row
    /// showed only `✗ b 0.0s`. The label is never cut for it: where the whole label does
    /// not fit beside the reason, the row is laid out as before, label and time.
    @Test func aFailedStepsRowSaysWhy() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: slow, shell: "sleep 5", timeout: 200ms, continue_on_error: true }
              - { name: killed, shell: "kill -9 $$", continue_on_error: true }
              - { name: a_failing_step_whose_name_is_long_enough_to_crowd_it, shell: "exit 4", continue_on_error: true }
              - { name: b, shell: "exit 3" }
            """)
        // 80 columns: the summary, which says which failures were allowed, fits.
        let run = try TerminalRun(box, ["run", "wf.yaml", "--no-journal", "--output", "tty"], rows: 20, columns: 80)
        #expect(run.finish() == 1, "\(run.report)")
        #expect(run.screen.wraps.isEmpty, "\(run.report)")
        #expect(Self.timeless(run.screen.all).prefix(5) == [
            "⏱ slow timed out after 200ms (allowed to fail) T",
            "✗ killed signal 9 (allowed to fail) T",
            "✗ a_failing_step_whose_name_is_long_enough_to_crowd_it T",
            "✗ b exit 3 T",
            "4/4 steps finished",
        ], "\(run.report)")
    }

    /// A `use` refused at run time (a value not `allowed`) fails with no step inside it
    /// failed: its row shows `✗`, and why stays above the tree, once (the executor's note
    /// said it before; it is the reporter's line now that the step's end carries it).
    @Test func aUseRefusedAtRunTimeSaysWhy() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { allowed: [staging, prod] }
                steps:
                  - { name: go, shell: "echo ${{ params.env }}" }
            steps:
              - name: pick
                shell: echo "target=qa" >> "$FLOW_OUTPUT"
                outputs: [target]
              - name: ship
                use: deploy
                with: { env: "${{ steps.pick.outputs.target }}" }
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--no-journal", "--output", "tty"], rows: 20, columns: 100)
        #expect(run.finish() == 1, "\(run.report)")
        #expect(Self.timeless(run.screen.all).prefix(5) == [
            "ship: `qa` is not an allowed value of `env` (allowed: staging, prod)",
            "✓ pick T",
            "✗ ship T",
            "  ○ go",
            "2/2 steps finished",
        ], "\(run.report)")
    }

    /// The reason a `use` was refused quotes the value it was given, which may come from a
    /// step's output: its control characters are escaped above the tree, as a row's reason
    /// is. It was written raw, so an escape sequence in the value acted on the terminal.
    @Test func aRefusedValueIsEscapedAboveTheTree() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            actions:
              deploy:
                params:
                  env: { allowed: [staging, prod] }
                steps:
                  - { name: go, shell: "echo ${{ params.env }}" }
            steps:
              - name: pick
                shell: printf 'target=q\033[2Ja\n' >> "$FLOW_OUTPUT"
              - name: ship
                use: deploy
                with: { env: "${{ steps.pick.outputs.target }}" }
            """#)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--no-journal", "--output", "tty"], rows: 20, columns: 100)
        #expect(run.finish() == 1, "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
        #expect(Self.timeless(run.screen.all).first == #"ship: `q\u{1B}[2Ja` is not an allowed value of `env` (allowed: staging, prod)"#,
                "\(run.report)")
    }

    /// A running step's last line is cut to the room left in its row by terminal columns:
    /// tabs go to the next 8-column stop, a CJK character takes two columns, and a cut line
    /// ends in `…`. Before, a tab or a wide character counted as one column: the row
    /// wrapped, and the redraw, which erases the tree by counting rows up, left a stale row
    /// on screen at every redraw.
    @Test(arguments: [false, true])
    func aRunningStepsLastLineFitsItsRow(color: Bool) throws {
        let box = try RunSandbox()
        let wide = String(repeating: "漢", count: 45)
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - name: gotest
                    shell: |
                      printf 'ok  \\tgithub.com/example/project/internal/pkg1\\t0.01s\\tcoverage: 81.2%% of statements\\n'; \(Self.waitForGo)
                  - name: cjk
                    shell: |
                      printf '\(wide)\\n'; \(Self.waitForGo)
                  - name: combining
                    shell: |
                      printf 'e\\314\\201\\314\\201\\314\\201 \(wide)\\n'; \(Self.waitForGo)
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 20, columns: 60,
                                  env: color ? ["NO_COLOR": ""] : [:])
        let seen = run.waitFor { screen in
            Self.shows(screen, #/  ▶ gotest [0-9.]+s  ok      github\.com\/example\/project\/.*…/#)
                && Self.shows(screen, #/  ▶ cjk [0-9.]+s  漢+…/#) && Self.shows(screen, #/  ▶ combining [0-9.]+s  . 漢+…/#)
        }
        #expect(seen, "\(run.report)")
        #expect(run.screen.wraps.isEmpty, "\(run.report)")
        try box.write("go", "")
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
        #expect(run.screen.wraps.isEmpty, "\(run.report)")
        #expect(Self.timeless(run.screen.all) == [
            "✓ concurrent T",
            "  ✓ gotest T",
            "  ✓ cjk T",
            "  ✓ combining T",
            "3/3 steps finished",
            "✓ succeeded: 3 succeeded in T",
        ], "\(run.report)")
    }

    /// A step's label in the tree (its name, or the command of an unnamed step: text from
    /// the workflow) shows control characters escaped, as `flow plan` does, and is cut by
    /// terminal columns. Before, it was written raw (a command's `\e[2J` cleared the screen
    /// at every redraw) and a wide one wrapped.
    @Test func labelsAreEscapedAndFitTheirRow() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: "true # \\e[2J\\e[H\\e]0;pwned\\a"
              - shell: "true # \(String(repeating: "漢", count: 45))"
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 20, columns: 60)
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
        #expect(run.screen.wraps.isEmpty, "\(run.report)")
        #expect(Self.timeless(run.screen.all) == [
            "✓ true # \\u{1B}[2J\\u{1B}[H\\u{1B}]0;pwned\\u{7} T",
            "✓ true # \(String(repeating: "漢", count: 22))… T",
            "2/2 steps finished",
            "✓ succeeded: 2 succeeded in T",
        ], "\(run.report)")
    }

    /// Emoji joined by a zero-width joiner (👨‍👩‍👧) or given a skin tone (👍🏽) are drawn as
    /// one character only by some terminals; xterm, VTE (GNOME Terminal) and glibc's
    /// `wcwidth` draw each emoji of the sequence, two columns each. The tree counts them so,
    /// the widest way: counted as one, a row of them was cut too late, wrapped on those
    /// terminals, and the redraw left a stale row at every tick.
    @Test func joinedEmojiCountEachEmojiInARow() throws {
        let box = try RunSandbox()
        let family = String(repeating: "👨\u{200D}👩\u{200D}👧", count: 20)
        let thumbs = String(repeating: "👍🏽", count: 30)
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - name: family
                    shell: |
                      printf '\(family)\\n'; \(Self.waitForGo)
                  - shell: "true # \(thumbs)"
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 20, columns: 60)
        let seen = run.waitFor { screen in Self.shows(screen, #/  ▶ family [0-9.]+s  .*…/#) }
        #expect(seen, "\(run.report)")
        #expect(run.screen.wraps.isEmpty, "\(run.report)")
        try box.write("go", "")
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
        #expect(run.screen.wraps.isEmpty, "\(run.report)")
        #expect(Self.timeless(run.screen.all) == [
            "✓ concurrent T",
            "  ✓ family T",
            // 4 columns each, as xterm draws them: the last one's tone did not fit.
            "  ✓ true # \(String(repeating: "👍🏽", count: 10))👍… T",
            "2/2 steps finished",
            "✓ succeeded: 2 succeeded in T",
        ], "\(run.report)")
    }

    /// The finished/total count of each frame, in order.
    static func counts(_ frames: [[String]]) -> [(finished: Int, total: Int)] {
        frames.compactMap { frame in
            frame.lazy.compactMap { $0.wholeMatch(of: /([0-9]+)\/([0-9]+) steps finished/) }.last
                .map { (Int($0.1)!, Int($0.2)!) }
        }
    }

    /// A step retried after failing, and one retried after timing out: one step each.
    static let retryCases = [
        """
        steps:
          - name: flaky
            shell: exit 1
            retry: {limit: 1, delay: 500ms}
        """,
        """
        steps:
          - name: flaky
            shell: sleep 5
            timeout: 100ms
            retry: 2
        """,
    ]

    /// Steps that end more than once (undo) or run again (a group's retry), with their
    /// number of steps.
    static let countCases: [(String, Int)] = retryCases.map { ($0, 1) } + [
        ("""
            steps:
              - name: a
                shell: "true"
                undo:
                  - shell: "true"
              - name: b
                shell: "true"
                undo:
                  - shell: exit 1
              - name: c
                shell: exit 1
            """, 3),
        ("""
            steps:
              - name: g
                retry: 2
                sequential:
                  - name: one
                    shell: "true"
                  - name: two
                    shell: exit 1
                  - name: three
                    shell: "true"
            """, 3),
    ]

    /// The count counts steps that ended, each once: not each attempt of a retried step,
    /// not a step again when it is undone or its undo fails, not the undo steps, and a step
    /// that its group's retry runs again is no longer finished. Before, the count went past
    /// the total: `2/1`, `4/3`, `7/3`.
    @Test(arguments: countCases)
    func theCountCountsEachStepOnce(workflow: String, total: Int) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", workflow)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 20, columns: 80)
        #expect(run.finish() == 1, "\(run.report)")
        let counts = Self.counts(run.frames)
        #expect(counts.allSatisfy { $0.total == total && $0.finished <= total }, "\(counts)\n\(run.report)")
        #expect(counts.last?.finished == total, "\(counts)\n\(run.report)")
    }

    /// A failed attempt that the step's `retry` runs again is no finish: the count stays
    /// at 0 while the step waits for its next attempt (the tree shows it failed, and the
    /// note above says when it is retried), and counts it once its last attempt failed.
    /// Before, it counted every attempt.
    @Test(arguments: retryCases)
    func aStepWaitingForItsRetryIsNotFinished(workflow: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", workflow)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 20, columns: 80)
        #expect(run.finish() == 1, "\(run.report)")
        let frames = run.frames
        let lastStart = try #require(frames.lastIndex { $0.contains { $0.hasPrefix("▶ flaky") } }, "\(run.report)")
        let failed = frames[..<lastStart].filter { $0.contains { $0.hasPrefix("✗ flaky") || $0.hasPrefix("⏱ flaky") } }
        #expect(!failed.isEmpty, "a frame shows the first attempt failed\n\(run.report)")
        let counts = Self.counts(Array(frames[...lastStart]))
        #expect(counts.allSatisfy { $0.finished == 0 }, "\(counts)\n\(run.report)")
        #expect(Self.counts(frames).last?.finished == 1, "\(run.report)")
    }

    /// A tree taller than the terminal: while steps run, the frame fits the screen (the
    /// running steps it has room for and how many rows it leaves out), and the final frame
    /// is the whole tree, once, scrolled into the history. Before, the final frame was
    /// clipped like a live one: 40 steps in 15 rows ended as `40/40 steps finished` and the
    /// summary, the tree gone.
    @Test func theWholeFinishedTreeStaysOnScreen() throws {
        let box = try RunSandbox()
        let steps = (0..<40).map { "      - name: s\($0)\n        shell: \(Self.waitForGo)" }
        try box.write("wf.yaml", "steps:\n  - concurrent:\n" + steps.joined(separator: "\n") + "\n")
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 15, columns: 80)
        // All 40 running: 12 rows, the "more" line and the count fill the 14 rows.
        let live = run.waitFor { screen in
            screen.screen.contains("… 29 more") && screen.screen.contains("0/40 steps finished")
                && screen.screen.filter { $0.hasPrefix("  ▶ s") }.count == 12
        }
        #expect(live, "\(run.report)")
        #expect(run.screen.history.isEmpty, "nothing scrolled off while the run went on\n\(run.report)")
        try box.write("go", "")
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
        #expect(run.screen.wraps.isEmpty, "\(run.report)")
        #expect(Self.timeless(run.screen.all) == ["✓ concurrent T"] + (0..<40).map { "  ✓ s\($0) T" } + [
            "40/40 steps finished",
            "✓ succeeded: 40 succeeded in T",
        ], "\(run.report)")
    }
}

extension TTYOutputTests {
    /// The signals that end a run at once: SIGQUIT, and a second SIGINT after the first.
    static let killingSignals: [[Int32]] = [[SIGQUIT], [SIGINT, SIGINT]]

    /// When a signal kills every step at once, flow's line saying so (`flow: SIGQUIT;
    /// killed every step`) goes where the live tree was, and the final tree below it, whole
    /// and once. Before, the line was written below the live frame, past the reporter, and
    /// the final redraw, which moves up as many rows as it drew, erased the line and left
    /// the live frame's top rows (`✓ a`, `▶ concurrent`) on screen above the final tree.
    /// Found by the tty audit (a pty and pyte, Ctrl-\ during a run).
    @Test(arguments: killingSignals)
    func aKillingSignalsLineTakesTheLiveTreesPlace(signals: [Int32]) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true" }
              - { name: long, shell: "trap '' INT; echo working; \(Self.waitForGo)" }
              - { name: never, shell: "true" }
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty", "--grace", "60s"], rows: 20, columns: 200)
        // Its line shows: it ignores SIGINT now.
        let running = run.waitFor { $0.screen.contains { $0.hasPrefix("▶ long") && $0.hasSuffix("  working") } }
        #expect(running, "\(run.report)")
        for (n, signal) in signals.enumerated() {
            kill(run.pid, signal)
            if n + 1 < signals.count {
                #expect(run.waitFor { $0.all.contains { $0.hasPrefix("SIGINT: stopping") } }, "\(run.report)")
            }
        }
        let status = run.finish()
        try box.write("go", "")
        #expect(status == 128 + signals.last!, "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
        let runID = try JournalEndToEndTests.runs(box).first?["id"] as? String ?? "?"
        let all = Self.timeless(run.screen.all).filter { !$0.hasPrefix("SIGINT: stopping") && !$0.isEmpty }
        #expect(all == [
            signals.count == 1 ? "flow: SIGQUIT; killed every step" : "flow: second signal; killed every step",
            "✓ a T",
            "⊘ long T",
            "· never",
            "2/3 steps finished",
            "⊘ cancelled: 1 succeeded, 1 cancelled, 1 pending in T",
            // Killed, the run is resumable all the same.
            "to resume from where it stopped: \(FlowOutcome.flowInHint) resume \(runID)",
        ], "\(run.report)")
    }
}

extension TTYOutputTests {
    /// The journal's error when it stops recording mid-run (here its output directory is a
    /// file) stays on screen, above the tree. Before, it was written below the live frame,
    /// past the reporter: the next redraw erased it (the user never saw that the run went
    /// unrecorded) and left the frame's top rows (`▶ concurrent`, `▶ s0`) above the final
    /// tree. Found by the tty audit.
    @Test func theJournalsErrorStaysAboveTheTree() throws {
        let box = try RunSandbox()
        try box.write("first.yaml", "steps:\n  - shell: \"true\"\n")
        #expect(try box.run(["run", "first.yaml"]).status == 0)
        let output = box.state.appendingPathComponent("output").path
        try FileManager.default.removeItem(atPath: output)
        #expect(FileManager.default.createFile(atPath: output, contents: Data()))
        let steps = (0..<3).map { "      - name: s\($0)\n        shell: echo hi; \(Self.waitForGo)" }
        try box.write("wf.yaml", "steps:\n  - concurrent:\n" + steps.joined(separator: "\n") + "\n")
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty"], rows: 20, columns: 300)
        // The error is written (seen in the bytes: without the fix the screen loses it).
        #expect(run.waitFor { _ in run.text.contains("the journal stopped recording") }, "\(run.report)")
        try box.write("go", "")
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
        let all = Self.timeless(run.screen.all)
        #expect(all.count == 7, "\(run.report)")
        #expect(all.first?.hasPrefix("error: the journal stopped recording this run: cannot write ") == true, "\(run.report)")
        #expect(Array(all.dropFirst()) == [
            "✓ concurrent T",
            "  ✓ s0 T",
            "  ✓ s1 T",
            "  ✓ s2 T",
            "3/3 steps finished",
            "✓ succeeded: 3 succeeded in T",
        ], "\(run.report)")
    }
}
