import Foundation
import Testing

/// Big workflows and long histories through the binary: work that was done once per step
/// for every step. Each case is sized so that the old quadratic path overran the harness's
/// time limit several times over (debug build), while the linear one takes a second or two;
/// the checks themselves are about what the user sees, never about time.
@Suite struct ScaleTests {
    /// `n` print steps, each with an `undo`, then a step that fails until `ok` exists.
    static func undoableRun(_ n: Int) -> String {
        var yaml = "steps:\n"
        for i in 0..<n { yaml += "  - { name: s\(i), print: do \(i), undo: { print: undo \(i) } }\n" }
        return yaml + "  - { name: last, shell: test -f ok }\n"
    }

    /// A resume of a run of 10,000 steps that failed at its end, and the undo of it, start
    /// at once: each looked for every step in the whole plan (a resume made the map of the
    /// plan once per reused step, 157 s; an undo the map of parents per step and a search
    /// of the plan's steps per step, 174 s).
    @Test func resumeAndUndoOfTenThousandSteps() throws {
        let n = 10_000
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.undoableRun(n))
        let first = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"])
        #expect(first.status == 1, "\(first.stderr.suffix(400))")
        try box.write("ok", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed.stderr.suffix(400))")
        #expect(resumed.stderrLines.contains { $0.hasSuffix(": \(n) steps already succeeded") }, "\(resumed.stderr.prefix(400))")
        #expect(!resumed.stdoutLines.contains("do 0"), "a reused step did not run again")
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo.stderr.suffix(400))")
        let undone = undo.stdoutLines.filter { $0.contains("undo ") }
        #expect(undone.count == n, "\(undo.stdout.prefix(400))")
        #expect(undone.first?.hasSuffix("undo \(n - 1)") == true && undone.last?.hasSuffix("undo 0") == true,
                "latest first: \(undone.prefix(2)) … \(undone.suffix(2))")
    }

    /// `--output tty` on a terminal shorter than the tree redraws a screenful per event, not
    /// the whole tree: each redraw searched every row for the running and failed ones to
    /// list, so 20,000 steps took some 100 s (debug build) of redrawing. The live frames
    /// still list the steps they did, and the run ends with the whole tree and the count.
    @Test func aTallTreeIsRedrawnWithoutSearchingEveryRow() throws {
        try #require(pseudoTerminalsAvailable)
        let n = 20_000
        let box = try RunSandbox()
        var yaml = "steps:\n"
        for i in 0..<n { yaml += "  - { name: s\(i), print: line \(i) }\n" }
        try box.write("wf.yaml", yaml + "  - { name: last, shell: exit 3, continue_on_error: true }\n")
        let run = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty", "--no-journal"], rows: 6, columns: 60)
        #expect(run.finish() == 0, "\(run.report)")
        let screen = run.screen.all
        #expect(screen.contains("line \(n - 1)"), "\(run.report)")
        #expect(screen.contains { $0.hasPrefix("✗ last") && $0.contains("exit 3") }, "\(run.report)")
        #expect(screen.contains("\(n + 1)/\(n + 1) steps finished"), "\(run.report)")
        // A live frame near the end: the failed step, `… N more`, the count.
        let frames = run.frames
        #expect(frames.contains { frame in
            frame.contains { $0.hasPrefix("✗ last") } && frame.contains("… \(n) more") && frame.contains("\(n + 1)/\(n + 1) steps finished")
        }, "\(frames.suffix(3))")
    }

    /// The text plan is written a piece of about 64 KiB at a time, not built whole: one of
    /// several pieces (nested groups, so that pieces end at every depth) comes out whole,
    /// in order, and the same as `run --dry-run` prints.
    @Test func aPlanOfManyPiecesComesOutWholeAndInOrder() throws {
        let groups = 600, steps = 10
        let box = try RunSandbox()
        var yaml = "steps:\n"
        var expected: [String] = []
        for g in 0..<groups {
            yaml += "  - name: g\(g)\n    sequential:\n"
            expected.append("\(g == groups - 1 ? "└─" : "├─") sequential g\(g)")
            let bar = g == groups - 1 ? "   " : "│  "
            for s in 0..<steps {
                yaml += "      - shell: echo step \(g) \(s) of a plan written in pieces\n"
                expected.append("\(bar)\(s == steps - 1 ? "└─" : "├─") shell: echo step \(g) \(s) of a plan written in pieces")
            }
        }
        try box.write("wf.yaml", yaml)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan.stderr.prefix(400))")
        #expect(plan.stdout.utf8.count > 4 * 64 * 1024, "\(plan.stdout.utf8.count) bytes")
        let lines = plan.stdoutLines
        #expect(Array(lines.dropFirst().prefix(expected.count)) == expected)
        #expect(lines.last == "\(groups * (steps + 1)) steps, shortest wall time 0s", "\(plan.stdout.suffix(300))")
        let dry = try box.run(["run", "--dry-run", "wf.yaml", "--no-journal"])
        #expect(dry.status == 0 && dry.stdout == plan.stdout, "\(dry.stderr.prefix(400))")
    }

    /// `--tags` and `--skip-tags` with as many tags as the workflow has tagged steps: each
    /// step's tags were searched for in the lists given, n × n comparisons (20,000 took 9 s,
    /// debug build). 80,000 tags, given as eight options (an argument is at most 128 KiB).
    @Test func thousandsOfTagsOnTheCommandLineAreLookedUpInSets() throws {
        let n = 80_000
        let box = try RunSandbox()
        var yaml = "steps:\n"
        for i in 0..<n { yaml += "  - { name: s\(i), tags: [t\(i)], print: hi }\n" }
        try box.write("wf.yaml", yaml)
        // Every tag but the last one's is skipped; every even one is asked for.
        let chunks = stride(from: 0, to: n - 1, by: 10_000).map { Array($0..<min($0 + 10_000, n - 1)) }
        let skip = chunks.flatMap { ["--skip-tags", $0.map { "t\($0)" }.joined(separator: ",")] }
        let plan = try box.run(["plan", "wf.yaml"] + skip)
        #expect(plan.status == 0, "\(plan.stderr.prefix(400))")
        #expect(plan.stdoutLines.last == "\(n) steps (1 selected), shortest wall time 0s", "\(plan.stdout.suffix(300))")
        let wanted = chunks.flatMap { ["--tags", $0.filter { $0 % 2 == 0 }.map { "t\($0)" }.joined(separator: ",")] }
        let tagged = try box.run(["plan", "wf.yaml"] + wanted)
        #expect(tagged.status == 0, "\(tagged.stderr.prefix(400))")
        #expect(tagged.stdoutLines.last == "\(n) steps (\(n / 2) selected), shortest wall time 0s", "\(tagged.stdout.suffix(300))")
    }

    /// 60,000 `--var` options over as many variables: each was searched for in the list of
    /// the workflow's variables (10,000 took 2.2 s, debug build). The first and the last
    /// are overridden (the others are never used: a warning each, on stderr).
    @Test func thousandsOfVarOptionsAreLookedUpByName() throws {
        let n = 60_000
        let box = try RunSandbox()
        var yaml = "vars:\n"
        for i in 0..<n { yaml += "  v\(i): x\n" }
        try box.write("wf.yaml", yaml + "steps:\n  - print: \"${{ vars.v0 }} ${{ vars.v\(n - 1) }}\"\n")
        let plan = try box.run(["plan", "wf.yaml"] + (0..<n).flatMap { ["--var", "v\($0)=y"] })
        #expect(plan.status == 0, "\(plan.stderr.suffix(400))")
        #expect(plan.stdoutLines.contains("└─ print: y y"), "\(plan.stdout.prefix(300))")
    }

    /// An action of 40,000 parameters run alone with a `--with` for each: every parameter
    /// was searched for among the values given (10,000 took 4.6 s, debug build). The step
    /// prints the first and the last: given values, not defaults.
    @Test func thousandsOfParametersAreLookedUpByName() throws {
        let n = 40_000
        let box = try RunSandbox()
        var yaml = "actions:\n  a:\n    params:\n"
        for i in 0..<n { yaml += "      p\(i): { default: x }\n" }
        try box.write("wf.yaml", yaml + "    steps:\n      - print: \"${{ params.p0 }} ${{ params.p\(n - 1) }}\"\nsteps:\n  - use: a\n")
        let plan = try box.run(["plan", "wf.yaml", "a"] + (0..<n).flatMap { ["--with", "p\($0)=y"] })
        #expect(plan.status == 0, "\(plan.stderr.suffix(400))")
        #expect(plan.stdoutLines.contains { $0.hasSuffix("print: y y") }, "\(plan.stdout.prefix(300))")
    }
}
