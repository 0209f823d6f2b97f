import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import FlowJournal

/// `flow runs` of a history longer than the page the journal reads at a time
/// (`Journal.listingPage`): written as read, laid out as if read whole.
@Suite struct RunsListingTests {
    /// A journal of one real run and `count` more inserted, the oldest named `a-long-name-…`:
    /// the widest WORKFLOW cell is in the last page.
    static func sandbox(runs count: Int) throws -> RunSandbox {
        let box = try RunSandbox()
        try box.write("wf.yaml", "name: wf\nsteps:\n  - print: hi\n")
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.transaction {
            for i in 0..<count {
                let id = String(format: "00000000-%08x", i)
                try db.execute("""
                    INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at,
                                      state, pid, host)
                    VALUES (?, 'run', 'w.yml', ?, 'h', x'', '{}', '/', ?, 'running', 1, 'host')
                    """, [id, i == 0 ? "a-long-name-in-the-last-page" : "w", 1_000_000 + Double(i)])
                try db.execute("INSERT INTO steps (run_id, path, position, depth, kind, label, state) VALUES (?, '1', 0, 0, 'shell', 's', ?)",
                               [id, i % 2 == 0 ? "succeeded" : "failed"])
                try db.execute("UPDATE runs SET state = ?, ended_at = started_at + 2 WHERE id = ?", [i % 2 == 0 ? "succeeded" : "failed", id])
            }
        }
        return box
    }

    @Test func theListingIsLaidOutOverEveryPage() throws {
        let count = Journal.listingPage * 2 + 3
        let box = try Self.sandbox(runs: count)
        let r = try box.run(["runs"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdoutLines
        #expect(lines.count == count + 2, "a header and every run")
        // Every row's STEPS starts in the header's column, which the widest WORKFLOW (the
        // oldest run, read last) pushed right: each page was laid out with the others.
        let column = try #require(lines.first?.range(of: "STEPS")).lowerBound.utf16Offset(in: lines[0])
        #expect(lines[0].range(of: "WORKFLOW")!.lowerBound.utf16Offset(in: lines[0]) + "a-long-name-in-the-last-page  ".count == column)
        for line in lines.dropFirst() {
            let steps = line.range(of: #"1 (succeeded|failed)$"#, options: .regularExpression)
            #expect(steps?.lowerBound.utf16Offset(in: line) == column, "\(line)")
        }
        #expect(lines.last?.hasPrefix("00000000-00000000  succeeded") == true)
        #expect(lines.dropFirst(2).prefix(3).map { String($0.prefix(17)) }
                == ["00000000-" + String(format: "%08x", count - 1), "00000000-" + String(format: "%08x", count - 2),
                    "00000000-" + String(format: "%08x", count - 3)], "newest first")

        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.count == count + 1)
        #expect(runs.dropFirst().map { $0["id"] as? String } == (0..<count).reversed().map { String(format: "00000000-%08x", $0) })
        #expect(runs.last?["counts"] as? [String: Int] == ["succeeded": 1])
        #expect(runs.dropFirst().first?["counts"] as? [String: Int] == [count % 2 == 0 ? "failed" : "succeeded": 1])
    }

    /// The rows past the first 32 KiB wait for the columns' widths in a temporary file
    /// (`SpooledTable`); where none can be made in `$TMPDIR` they wait in memory, and the
    /// listing is the same.
    @Test func theListingIsTheSameWhereNoTemporaryFileCanBeMade() throws {
        let box = try Self.sandbox(runs: Journal.listingPage * 2 + 3)
        let spooled = try box.run(["runs"])
        #expect(spooled.status == 0, "\(spooled)")
        #expect(spooled.stdout.utf8.count > 32_768, "more than a chunk of rows")
        let inMemory = try box.run(["runs"], env: ["TMPDIR": box.state.path + "/not-a-directory"])
        #expect(inMemory.status == 0, "\(inMemory)")
        #expect(inMemory.stderr.isEmpty, "\(inMemory)")
        #expect(inMemory.stdout == spooled.stdout)
    }

    /// A journal damaged where its oldest runs are (the first leaf of the index the listing
    /// reads): `flow runs --json` has written the newer runs when it reaches them, and
    /// ends with the error on stderr and exit 2, its array left open: on exit 2 its stdout
    /// is not to be parsed (docs/cli.md), and a JSON reader fails on it rather than taking
    /// a cut history for a whole one. The table is written only once read whole: nothing.
    @Test func aListingThatFailsPartWayLeavesNoWholeArray() throws {
        let box = try Self.sandbox(runs: 3_000)
        let path = box.state.path + "/journal.sqlite"
        let pageSize: Int, root: Int
        do {
            let db = try SQLiteConnection(path: path)
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pageSize = try #require(try db.value("PRAGMA page_size"))
            root = try #require(try db.value("SELECT rootpage FROM sqlite_master WHERE name = 'runs_listing'"))
        }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // Down the index's b-tree by each interior page's first cell (its smallest keys).
        var page = root
        while true {
            let start = (page - 1) * pageSize, header = start + (page == 1 ? 100 : 0)
            if bytes[header] == 0x0A {
                bytes[header] = 0x00  // not a page type: SQLite reads the page as corrupt
                break
            }
            #expect(bytes[header] == 0x02, "an interior index page")
            let cell = start + (Int(bytes[header + 12]) << 8 | Int(bytes[header + 13]))
            page = bytes[cell..<(cell + 4)].reduce(0) { $0 << 8 | Int($1) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let json = try box.run(["runs", "--json"])
        #expect(json.status == 2, "\(json.stderr)")
        #expect(json.stderr.hasPrefix("error: ") && json.stderr.contains("malformed"), "\(json.stderr)")
        #expect(json.stdout.hasPrefix("[\n  {"), "the newer runs were written")
        #expect(!json.stdout.hasSuffix("]\n"))
        #expect((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) == nil)
        let table = try box.run(["runs"])
        #expect(table.status == 2, "\(table.stderr)")
        #expect(table.stdout.isEmpty)
        #expect(table.stderr == json.stderr)
    }

    /// Expects `runs` runs in `box`'s journal, each with stored counts equal to those its
    /// steps rows give (`Journal.countsFromSteps`); returns the journal.
    @discardableResult
    static func expectStoredCountsAreTheSteps(_ box: RunSandbox, runs: Int,
                                              sourceLocation: SourceLocation = #_sourceLocation) throws -> Journal {
        let journal = try Journal.open(stateDir: box.state.path, create: false)
        let ids: [String] = try journal.read { db in try db.values("SELECT id FROM runs ORDER BY started_at") }
        #expect(ids.count == runs, sourceLocation: sourceLocation)
        let stored: [String: (String, String)] = try journal.read { db in
            Dictionary(uniqueKeysWithValues: try db.rows("SELECT run_id, counts, allowed FROM run_counts").map {
                (($0[0] as String?) ?? "", (($0[1] as String?) ?? "", ($0[2] as String?) ?? ""))
            })
        }
        let counted = try journal.countsFromSteps(of: ids, onlyThese: true)
        for id in ids {
            let mine = try #require(stored[id], "run \(id) has no stored counts", sourceLocation: sourceLocation)
            #expect(Journal.parseCounts(mine.0) == counted[id]?.counts ?? [:], "run \(id): \(mine.0)", sourceLocation: sourceLocation)
            #expect(Journal.parseCounts(mine.1) == counted[id]?.allowed ?? [:], "run \(id): \(mine.1)", sourceLocation: sourceLocation)
        }
        return journal
    }

    /// The counts a run's end stores (the summary's) are those its steps rows give, by the
    /// rule `flow runs` used to count them with (`JournalSchema.countedStep`), for runs of
    /// every ending: allowed failures, skips, a group's own timeout, a rollback, a `use`
    /// that fails before its steps, a resume, an undo, a run cut by a second signal.
    @Test func theCountsARunsEndStoresAreThoseOfItsSteps() throws {
        let box = try RunSandbox()
        try box.write("mixed.yaml", """
            steps:
              - name: ok
                shell: "true"
                undo:
                  - shell: "true"
              - name: allowed
                shell: exit 3
                continue_on_error: true
              - name: skipped
                print: never
                if: "false"
              - name: slow
                timeout: 100ms
                sequential:
                  - shell: sleep 30
              - name: after
                shell: "true"
            """)
        try box.write("use.yaml", """
            actions:
              deploy:
                params:
                  env: {allowed: [prod, staging]}
                steps:
                  - print: ${{ params.env }}
            steps:
              - name: x
                shell: echo v=dev >> "$FLOW_OUTPUT"
                outputs: [v]
              - use: deploy
                with: {env: "${{ steps.x.outputs.v }}"}
            """)
        for arguments in [["run", "mixed.yaml"], ["resume", "last"], ["run", "mixed.yaml", "--no-rollback"], ["undo", "last"],
                          ["run", "use.yaml"]] {
            let r = try box.run(arguments + ["--output", "prefixed"])
            #expect([0, 1].contains(r.status), "\(arguments): \(r)")
        }
        // Cut by a second signal: its end is written by `abandon`.
        try box.write("cut.yaml", """
            steps:
              - shell: "true"
              - { name: work, shell: \(RunSandbox.childPath) --stderr ready --ignore INT --sleep 30 }
              - print: never
            """)
        let live = try LiveFlow(executable: RunSandbox.flowPath, arguments: ["run", "cut.yaml", "--output", "prefixed"],
                                environment: box.environment, directory: box.root.path, ownGroup: false)
        #expect(live.waitForLine("work | ready"))
        kill(live.pid, SIGINT)
        #expect(live.waitFor { _, stderr in stderr.contains("SIGINT") })
        kill(live.pid, SIGINT)
        #expect(try live.finish().status == 130)

        try Self.expectStoredCountsAreTheSteps(box, runs: 6)
    }

    /// The other ways a run ends, each stored run's counts those of its steps: steps left
    /// out by `--tags` and `--only`, a fail-fast concurrent group whose `finally` fails,
    /// nested retried groups rolled back, a rollback whose undos fail and a `finally`
    /// failing, a resume of a resume, `flow undo --force`, and a run of one action.
    @Test func everyWayARunEndsStoresTheCountsOfItsSteps() throws {
        let box = try RunSandbox()
        try box.write("tags.yaml", """
            steps:
              - { name: a, shell: "true", tags: [x] }
              - { name: b, shell: "true" }
              - name: g
                sequential:
                  - { name: c, shell: "true", tags: [x] }
                  - { name: d, print: hi }
            """)
        try box.write("fast.yaml", """
            steps:
              - name: par
                concurrent:
                  - { name: bad, shell: exit 2 }
                  - { name: slow, shell: sleep 30 }
                finally:
                  - { name: fin, shell: exit 4 }
              - { name: never, shell: "true" }
            """)
        try box.write("nested.yaml", """
            steps:
              - name: outer
                retry: 1
                sequential:
                  - name: inner
                    retry: 1
                    sequential:
                      - { name: a, shell: "true", undo: { shell: "true" } }
                      - { name: b, shell: exit 1 }
                  - { name: c, shell: "true" }
            """)
        try box.write("undo.yaml", """
            steps:
              - { name: a, shell: "true", undo: { shell: exit 1 } }
              - name: b
                shell: "true"
                undo:
                  - shell: "true"
                  - shell: exit 2
              - { name: c, shell: exit 1 }
            finally:
              - { name: f, shell: exit 3 }
            """)
        try box.write("resume.yaml", """
            steps:
              - { name: a, shell: "true" }
              - { name: b, shell: test -f ok1 }
              - { name: c, shell: test -f ok2 }
            """)
        try box.write("act.yaml", """
            actions:
              hello:
                steps:
                  - print: hi
                  - { shell: exit 3, continue_on_error: true }
            steps:
              - use: hello
            """)
        let runs: [[String]] = [["run", "tags.yaml", "--tags", "x"], ["run", "tags.yaml", "--only", "d"],
                                ["run", "fast.yaml"], ["run", "nested.yaml"], ["run", "undo.yaml"],
                                ["run", "resume.yaml"], ["touch ok1"], ["resume", "last"], ["touch ok2"], ["resume", "last"],
                                ["run", "undo.yaml", "--no-rollback"], ["undo", "last", "--force"], ["run", "act.yaml", "hello"]]
        for arguments in runs {
            if arguments[0].hasPrefix("touch ") {
                try box.write(String(arguments[0].dropFirst(6)), "")
                continue
            }
            let r = try box.run(arguments + ["--output", "prefixed"])
            #expect([0, 1].contains(r.status), "\(arguments): \(r)")
        }
        let journal = try Self.expectStoredCountsAreTheSteps(box, runs: 11)
        // The last run's summary said what is stored: its allowed failure too.
        let last: [SQLiteRow] = try journal.read { db in
            try db.rows("SELECT counts, allowed FROM run_counts WHERE run_id = (SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1)")
        }
        #expect(Journal.parseCounts((last.first?[0] as String?) ?? "") == ["succeeded": 1, "failed": 1])
        #expect(Journal.parseCounts((last.first?[1] as String?) ?? "") == ["failed": 1])
    }
}
