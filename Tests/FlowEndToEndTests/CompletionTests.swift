import CFlowSQLite
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Shell completion of what only the workflow or the journal knows: `--only` step names,
/// `--tags` tags, ACTION names and run ids, through `flow --complete-values` and through
/// the generated bash and fish scripts calling the real binary.
@Suite struct CompletionTests {
    static let workflow = """
        name: site
        actions:
          publish:
            description: Publish the site
            steps:
              - name: upload
                shell: "true"
                tags: [remote]
          notify:
            steps:
              - print: done
                tags: [chat]
        steps:
          - name: build
            description: |
              Build the pages
              (second line)
            shell: "true"
            tags: [local, fast]
            undo:
              - name: unbuild
                shell: "true"
                tags: [cleanup]
          - name: checks
            concurrent:
              - name: lint
                shell: "true"
                tags: [fast]
              - name: links
                shell: "true"
            finally:
              - name: report
                print: checked
          - use: publish
        finally:
          - name: tidy
            print: tidy

        """

    /// `lines` of `flow --complete-values QUERY CURRENT WORDS…` (it must say nothing on stderr
    /// and exit 0, whatever it finds).
    static func values(_ box: RunSandbox, _ query: String, _ current: String, _ words: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let r = try box.run(["--complete-values", query, current] + words, timeout: 20, sourceLocation: sourceLocation)
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r)", sourceLocation: sourceLocation)
        return r.stdout.split(separator: "\n").map(String.init)
    }

    @Test func stepNamesTagsAndActionsComeFromTheFileOnTheLine() throws {
        let box = try RunSandbox()
        try box.write("site.yaml", Self.workflow)
        // `--only` names: the workflow's steps, groups and finally steps, not undo steps or
        // an action's; a description's first line after a tab.
        #expect(try Self.values(box, "steps", "", ["run", "site.yaml", "--only"]) == [
            "build\tBuild the pages", "checks", "lint", "links", "report", "tidy",
        ])
        #expect(try Self.values(box, "steps", "l", ["plan", "--dry-run", "site.yaml"]).count == 6,
                "the shell filters by the word; flow lists all")
        // With ACTION, its steps.
        #expect(try Self.values(box, "steps", "", ["run", "site.yaml", "publish", "--only"]) == ["upload"])
        // Tags: of undo steps and of the actions `use` runs too, once each; after a comma, the
        // list so far is kept and its tags are not offered again.
        #expect(try Self.values(box, "tags", "", ["run", "site.yaml", "--tags"]) == ["local", "fast", "cleanup", "remote"])
        #expect(try Self.values(box, "tags", "fast,", ["graph", "site.yaml", "--skip-tags"])
                == ["fast,local", "fast,cleanup", "fast,remote"])
        #expect(try Self.values(box, "tags", "", ["run", "site.yaml", "notify", "--tags"]) == ["chat"])
        #expect(try Self.values(box, "actions", "", ["run", "site.yaml"]) == ["publish\tPublish the site", "notify"])
        // Every name listed is one `--only` takes.
        for line in try Self.values(box, "steps", "", ["run", "site.yaml", "--only"]) {
            let name = String(line.split(separator: "\t")[0])
            #expect(try box.run(["plan", "site.yaml", "--only", name]).status == 0, "\(name)")
        }
    }

    @Test func nothingIsListedWhenThereIsNothingToRead() throws {
        let box = try RunSandbox()
        // No file yet, a missing one, standard input.
        #expect(try Self.values(box, "steps", "", ["run", "--only"]).isEmpty)
        #expect(try Self.values(box, "steps", "", ["run", "gone.yaml", "--only"]).isEmpty)
        #expect(try Self.values(box, "tags", "", ["run", "-", "--tags"]).isEmpty)
        // A FIFO would block the shell until something wrote to it: not opened.
        #expect(mkfifo(box.path("pipe.yaml"), 0o600) == 0)
        #expect(try Self.values(box, "steps", "", ["run", "pipe.yaml", "--only"]).isEmpty)
        // A file larger than a TAB may take to read (8 MiB): not read.
        try box.write("huge.yaml", "steps:\n  - name: first\n    shell: \"true\"\n" + String(repeating: "#", count: 9 << 20) + "\n")
        #expect(try Self.values(box, "steps", "", ["run", "huge.yaml", "--only"]).isEmpty)
        // An invalid workflow still has its names.
        try box.write("bad.yaml", "steps:\n  - name: first\n    shell: \"true\"\n    colour: red\n")
        #expect(try Self.values(box, "steps", "", ["run", "bad.yaml", "--only"]) == ["first"])
        // No journal: nothing, and none is made.
        #expect(try Self.values(box, "runs", "", ["show"]).isEmpty)
        #expect(try Self.values(box, "runs", "", ["show", "--state-dir", box.path("elsewhere")]).isEmpty)
        #expect(!box.exists("state") && !box.exists("elsewhere"))
        // A kind flow does not know: nothing.
        #expect(try Self.values(box, "colours", "", ["run"]).isEmpty)
    }

    @Test func runIDsComeFromTheJournalNewestFirst() throws {
        let box = try RunSandbox()
        try box.write("site.yaml", Self.workflow)
        try box.write("fails.yaml", "name: breaks\nsteps:\n  - shell: exit 3\n")
        #expect(try box.run(["run", "site.yaml", "--output", "prefixed"]).status == 0)
        #expect(try box.run(["run", "fails.yaml", "--output", "prefixed"]).status == 1)
        let ids = try box.run(["runs", "--json"]).stdout
        let runs = try #require(try JSONSerialization.jsonObject(with: Data(ids.utf8)) as? [[String: Any]])
        let newest = try #require(runs.first?["id"] as? String)
        let older = try #require(runs.last?["id"] as? String)
        let lines = try Self.values(box, "runs", "", ["resume"])
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.first == "last\tthe newest run (\(newest))")
        #expect(lines.dropFirst().first?.hasPrefix("\(newest)\tfailed · breaks · ") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("\(older)\tsucceeded · site · ") == true, "\(lines)")
        // A run's steps for `flow logs RUN STEP`: labels as logs takes them, in the run's order.
        #expect(try Self.values(box, "run-steps", "", ["logs", newest]) == ["shell@1\tfailed · exit 3"])
        let steps = try Self.values(box, "run-steps", "", ["logs", older])
        #expect(steps.prefix(3) == ["build\tsucceeded", "unbuild\tpending", "checks\tsucceeded"], "\(steps)")
        for step in steps {
            let label = String(step.split(separator: "\t")[0])
            #expect(try box.run(["logs", older, label]).status == 0, "\(label)")
        }
        #expect(try Self.values(box, "run-steps", "", ["logs", "nosuchrun"]).isEmpty)
        // `--state-dir` on the line is the journal asked.
        #expect(try Self.values(box, "runs", "", ["show", "--state-dir", box.state.path]).count == 3)
        #expect(try Self.values(box, "runs", "", ["show", "--state-dir", box.path("other")]).isEmpty)
    }

    @Test func theJournalIsReadWithoutWaitingForItsLockOrChangingIt() throws {
        let box = try RunSandbox()
        try box.write("site.yaml", Self.workflow)
        #expect(try box.run(["run", "site.yaml", "--output", "prefixed"]).status == 0)
        let id = try #require(try Self.values(box, "runs", "", ["show"]).last?.split(separator: "\t").first.map(String.init))
        // A lock file of a run that has ended: a `flow` that opens the journal to work on it
        // folds such files in and removes them; a completion leaves the journal as it is.
        try box.write("state/locks/\(id).lock", "")
        #expect(try Self.values(box, "runs", "", ["show"]).count == 2)
        #expect(box.exists("state/locks/\(id).lock"))
        // Another process holds the journal's write lock (a `flow` writing, a sqlite3 shell in
        // a transaction). A reader does not need it: the runs come at once, not after the
        // 10 s a writer waits for it (after which the TAB listed nothing).
        var db: OpaquePointer?
        #expect(sqlite3_open(box.state.appendingPathComponent("journal.sqlite").path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        #expect(sqlite3_exec(db, "BEGIN IMMEDIATE; UPDATE runs SET state = state", nil, nil, nil) == SQLITE_OK)
        let started = ContinuousClock.now
        let lines = try Self.values(box, "runs", "", ["logs"])
        // A bound, as the property is one: before the 10 s busy timeout a writer waits. A
        // completion takes a tenth of a second; 5 s is over ten times that.
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(lines.count == 2, "\(lines)")
        #expect(try Self.values(box, "run-steps", "", ["logs", id]).first == "build\tsucceeded")
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
    }

    @Test func bashCompletesThroughTheBinary() throws {
        let box = try RunSandbox()
        try box.write("site.yaml", Self.workflow)
        #expect(try box.run(["run", "site.yaml", "--output", "prefixed"]).status == 0)
        let script = try box.run(["--generate-completion-script", "bash"]).stdout
        try box.write("flow.bash", script)
        func complete(_ words: String...) throws -> [String] {
            let driver = """
                source flow.bash || exit 1
                COMP_WORDS=(flow "$@"); COMP_CWORD=$#
                _flow
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let output = try Self.shell("/bin/bash", ["--norc", "--noprofile", "-c", driver, "bash"] + words, box)
            return output.split(separator: "\n").map(String.init)
        }
        #expect(try complete("run", "site.yaml", "--only", "") == ["build", "checks", "lint", "links", "report", "tidy"])
        #expect(try complete("run", "site.yaml", "--only", "li") == ["lint", "links"])
        #expect(try complete("run", "site.yaml", "--only=ch") == ["--only=checks"])
        #expect(try complete("plan", "'site.yaml'", "--tags", "fast,") == ["fast,local", "fast,cleanup", "fast,remote"])
        #expect(try complete("run", "site.yaml", "p") == ["publish"])
        let runs = try complete("show", "")
        #expect(runs.count == 2 && runs.first == "last", "\(runs)")
        #expect(try complete("logs", "last", "li") == ["lint", "links"])
        // The words as the shell will pass them (bash gives them as typed): quoted in part,
        // with `~` or `$HOME`; the word under the cursor too.
        try box.write("my site.yaml", Self.workflow)
        #expect(try complete("run", "'my site'.yaml", "--only", "b") == ["build"])
        #expect(try complete("run", "\"my site.yaml\"", "--only", "b") == ["build"])
        #expect(try complete("run", "~/site.yaml", "--only", "b") == ["build"])
        #expect(try complete("run", "\"$HOME\"/site.yaml", "--only", "b") == ["build"])
        #expect(try complete("run", "${HOME}/my\\ site.yaml", "--only", "b") == ["build"])
        #expect(try complete("plan", "site.yaml", "--tags", "'lo") == ["local"])
        // A command substitution is not run.
        #expect(try complete("run", "$(touch ran)site.yaml", "--only", "b").isEmpty)
        #expect(!box.exists("ran"))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/fish")))
    func fishCompletesThroughTheBinaryWithDescriptions() throws {
        let box = try RunSandbox()
        try box.write("site.yaml", Self.workflow)
        let script = try box.run(["--generate-completion-script", "fish"]).stdout
        try box.write("flow.fish", script)
        func complete(_ line: String) throws -> [String] {
            let output = try Self.shell("/usr/bin/fish", ["--no-config", "-c", "source flow.fish; complete -C $argv[1]", line], box)
            return output.split(separator: "\n").map(String.init)
        }
        #expect(try complete("flow run site.yaml ").contains("publish\tPublish the site"))
        // Each argument offers what it takes, at its own position: after FILE the actions,
        // not file names again; after RUN the run's steps, not run ids again; after the
        // last argument nothing (it offered all of them, whatever the position).
        #expect(try complete("flow run site.yaml ").allSatisfy { !$0.hasPrefix("site.yaml") })
        #expect(try complete("flow run --var x=1 site.yaml ").contains("publish\tPublish the site"))
        #expect(try complete("flow run ").contains { $0.hasPrefix("site.yaml") })
        #expect(try box.run(["run", "site.yaml", "--output", "prefixed"]).status == 0)
        let steps = try complete("flow logs last ").map { String($0.split(separator: "\t")[0]) }
        #expect(steps.contains("build") && !steps.contains("last"), "\(steps)")
        #expect(try complete("flow logs --state-dir \(box.state.path) last ").contains { $0.hasPrefix("build\t") })
        #expect(try complete("flow logs ").contains { $0.hasPrefix("last\t") })
        #expect(try complete("flow show last ").isEmpty)
        #expect(try complete("flow validate site.yaml ").contains { $0.hasPrefix("site.yaml") })
        #expect(try complete("flow run site.yaml --only b") == ["build\tBuild the pages"])
        #expect(try complete("flow plan site.yaml --skip-tags fast,r") == ["fast,remote\tSkip steps with one of these tags."])
        // `~` is the home directory; `--tags=a,` offers the others, not `a` again.
        #expect(try complete("flow run ~/site.yaml --only b") == ["build\tBuild the pages"])
        let tags = try complete("flow run site.yaml --tags=fast,")
        #expect(tags.map { $0.split(separator: "\t")[0] } == ["--tags=fast,local", "--tags=fast,cleanup", "--tags=fast,remote"],
                "\(tags)")
    }

    /// Standard output of `shell arguments…` in the sandbox, with flow first on PATH.
    static func shell(_ shell: String, _ arguments: [String], _ box: RunSandbox) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: shell)
        process.arguments = arguments
        process.currentDirectoryURL = box.root
        var environment = box.environment
        environment["PATH"] = FlowBinary.url.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "")
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: output, as: UTF8.self)
    }
}
