@testable import FlowJournal
import Foundation
import Testing

/// A resume carries a run on with the options it was started with (`--no-rollback`,
/// `--max-parallel`, `--grace`), an undo with its `--grace` and `--max-parallel`; one given
/// on their own command line overrides (docs/journal.md, "Options a resume carries on").
@Suite struct ResumeOptionsTests {
    /// `a` succeeds (and has an undo), `b` fails until `fixed` exists.
    static let workflow = """
        steps:
          - { name: a, shell: echo a >> ran, undo: "echo undo-a >> undone" }
          - { name: b, shell: echo b >> ran; test -f fixed, undo: "echo undo-b >> undone" }
        """

    /// A run started with `--no-rollback` (to look at what it left) is not torn down by a
    /// resume that fails again: the resume rolled back, the reused `a` too, unless
    /// `--no-rollback` was given again. A resume of that resume carries it on too, and
    /// `--rollback` turns it back on, the undo of the reused step included.
    @Test func aResumeCarriesOnTheRunsNoRollback() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback", "--output", "prefixed"]).status == 1)
        let first = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(first.status == 1, "\(first)")
        #expect(box.lines("undone") == [], "the run's --no-rollback holds: \(first)")
        #expect(!first.stderr.contains("rolling back"), "\(first)")
        #expect(first.stderr.contains("\nnote: carrying on --no-rollback from run "), "said why: \(first)")
        let shown = try box.run(["show", "last"])
        #expect(shown.stdout.contains("\noptions: --no-rollback\n"), "\(shown)")
        let options = try JournalEndToEndTests.show(box)["options"] as? [String: Any]
        #expect(options?["rollback"] as? Bool == false, "\(String(describing: options))")

        // Through the chain: the resume recorded what it ran with.
        let second = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(second.status == 1, "\(second)")
        #expect(box.lines("undone") == [], "a resume of the resume: \(second)")

        let third = try box.run(["resume", "last", "--rollback", "--output", "prefixed"])
        #expect(third.status == 1, "\(third)")
        #expect(third.stderr.contains("rolling back 1 step"), "\(third)")
        #expect(!third.stderr.contains("carrying on"), "\(third)")
        #expect(box.lines("undone") == ["undo-a"], "the reused step is reversed: \(third)")
        #expect(box.lines("ran") == ["a", "b", "b", "b", "b"])
        let last = try box.run(["show", "last"])
        #expect(!last.stdout.contains("options:"), "rollback is on: \(last)")
        #expect((try JournalEndToEndTests.show(box)["options"] as? [String: Any])?["rollback"] as? Bool == true)
    }

    /// A run recorded before flow kept its options (its `args` as flow wrote them then) is
    /// resumed as it was then: rolled back when the resume fails. A run given none is
    /// still recorded that way.
    @Test func aRunRecordedWithoutOptionsResumesAsBefore() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback", "--output", "prefixed"]).status == 1)
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        let recorded: String? = try db.value("SELECT args FROM runs")
        #expect(recorded == #"{"options":{"rollback":false},"skip_tags":[],"tags":[],"vars":[],"with":[]}"#)
        try db.execute(#"UPDATE runs SET args = '{"skip_tags":[],"tags":[],"vars":[],"with":[]}'"#)
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 1, "\(resumed)")
        #expect(box.lines("undone") == ["undo-a"], "\(resumed)")
        let args: String? = try db.value("SELECT args FROM runs WHERE kind = 'resume'")
        #expect(args == #"{"skip_tags":[],"tags":[],"vars":[],"with":[]}"#)
        #expect(!(try box.run(["show", "last"]).stdout.contains("options:")))
    }

    /// `--max-parallel 1` holds in the resume: its two concurrent steps run one after the
    /// other (seen in the order of their events). Each waits (up to 2 s) for the other to
    /// start, so that without the cap they overlap; and `--max-parallel 2` on the resume
    /// overrides it.
    @Test func aResumeCarriesOnTheRunsMaxParallel() throws {
        let box = try RunSandbox()
        func pair(_ me: String, _ other: String) -> String {
            "{ name: \(me), shell: 'touch \(me).on; i=0; while [ ! -e \(other).on ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i+1)); done' }"
        }
        try box.write("wf.yaml", """
            steps:
              - { name: gate, shell: test -f go }
              - concurrent:
                  - \(pair("p1", "p2"))
                  - \(pair("p2", "p1"))
            """)
        /// The `p1`/`p2` starts and ends of a resume's events, as `maxConcurrency` reads them.
        func starts(_ stdout: String) throws -> [String] {
            try stdout.split(separator: "\n").compactMap { line -> String? in
                let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                guard event?["event"] as? String == "step_state", let name = event?["name"] as? String, name.hasPrefix("p")
                else { return nil }
                switch event?["to"] as? String {
                case "running": return "start \(name)"
                case "succeeded": return "end \(name)"
                default: return nil
                }
            }
        }
        for (override, expected) in [([String](), 1), (["--max-parallel", "2"], 2)] {
            for file in ["go", "p1.on", "p2.on"] { try? FileManager.default.removeItem(atPath: box.path(file)) }
            #expect(try box.run(["run", "wf.yaml", "--max-parallel", "1", "--output", "prefixed"]).status == 1)
            try box.write("go", "")
            let resumed = try box.run(["resume", "last", "--output", "json"] + override)
            #expect(resumed.status == 0, "\(resumed)")
            let events = try starts(resumed.stdout)
            #expect(events.count == 4 && maxConcurrency(events) == expected, "\(override): \(events)")
            #expect(try box.run(["show", "last"]).stdout.contains("\noptions: --max-parallel \(expected)\n"))
        }
    }

    /// The resume records what it ran with, its own where given; `flow undo` takes the
    /// run's `--grace` and `--max-parallel` (not its `--no-rollback`), as the run's own
    /// rollback would have.
    @Test func anUndoCarriesOnTheRunsGraceAndMaxParallel() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback", "--grace", "7s", "--max-parallel", "3", "--output", "prefixed"]).status == 1)
        #expect(try box.run(["show", "last"]).stdout.contains("\noptions: --no-rollback --max-parallel 3 --grace 7s\n"))
        let resumed = try box.run(["resume", "last", "--grace", "2s", "--output", "prefixed"])
        #expect(resumed.status == 1, "\(resumed)")
        #expect(try box.run(["show", "last"]).stdout.contains("\noptions: --no-rollback --max-parallel 3 --grace 2s\n"))
        #expect(resumed.stderr.contains("\nnote: carrying on --no-rollback --max-parallel 3 from run "), "\(resumed)")
        let undone = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undone.status == 0, "\(undone)")
        #expect(undone.stderr.contains("note: carrying on --max-parallel 3 --grace 2s from run "), "\(undone)")
        #expect(box.lines("undone") == ["undo-a"])
        let options = try JournalEndToEndTests.show(box)["options"] as? [String: Any]
        #expect(options?["grace"] as? String == "2s" && options?["max_parallel"] as? Int == 3 && options?["rollback"] as? Bool == true,
                "\(String(describing: options))")
    }

    /// `--rollback` is resume's; with `--no-rollback` it is a contradiction, and an undo,
    /// itself a rollback, declines it. So does `run`, which offered `--no-rollback` as
    /// the option meant.
    @Test func rollbackIsAResumesOptionAlone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        let run = try box.run(["run", "wf.yaml", "--rollback"])
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("--rollback is for `flow resume` of a run started with --no-rollback"), "\(run)")
        #expect(!run.stderr.contains("Did you mean"), "\(run)")
        #expect(try box.run(["run", "wf.yaml", "--no-rollback", "--output", "prefixed"]).status == 1)
        let both = try box.run(["resume", "last", "--rollback", "--no-rollback"])
        #expect(both.status == 2, "\(both)")
        #expect(both.stderr.contains("--rollback and --no-rollback contradict each other"), "\(both)")
        let undo = try box.run(["undo", "last", "--rollback"])
        #expect(undo.status == 2, "\(undo)")
        #expect(undo.stderr.contains("an undo is a rollback"), "\(undo)")
        #expect(box.lines("ran") == ["a", "b"], "nothing ran")
        let help = try box.run(["resume", "--help"])
        #expect(help.stdout.contains("  --rollback"), "\(help)")
        #expect(help.stdout.contains("carry on unless"), "\(help)")
    }
}
