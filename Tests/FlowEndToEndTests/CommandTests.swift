import Foundation
import Testing

/// Checks through the binary that need no golden: every example workflow, help, schema.
@Suite struct CommandTests {
    static let workflowsDirectory = FlowBinary.packageRoot.appendingPathComponent("workflows")

    static let workflows: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: workflowsDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
    }()

    @Test func thereAreExampleWorkflows() {
        #expect(!Self.workflows.isEmpty)
    }

    @Test(arguments: workflows)
    func exampleWorkflowValidatesAndPlans(_ name: String) throws {
        let validate = try FlowBinary.run(["validate", "--strict", "workflows/\(name)"], in: FlowBinary.packageRoot)
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(validate.stdout == "workflows/\(name): valid\n")
        #expect(validate.stderr.isEmpty, "no warnings either")
        let plan = try FlowBinary.run(["plan", "workflows/\(name)"], in: FlowBinary.packageRoot)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stderr.isEmpty)
        #expect(plan.stdout.contains("shortest wall time"))
        let dryRun = try FlowBinary.run(["run", "--dry-run", "workflows/\(name)"], in: FlowBinary.packageRoot)
        #expect(dryRun.status == 0)
        #expect(dryRun.stdout == plan.stdout, "`run --dry-run` prints the plan")
        let json = try FlowBinary.run(["plan", "--format", "json", "workflows/\(name)"], in: FlowBinary.packageRoot)
        #expect(json.status == 0)
        #expect((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) != nil, "plan --format json is JSON")
        for format in ["mermaid", "dot"] {
            let graph = try FlowBinary.run(["graph", "--format", format, "workflows/\(name)"], in: FlowBinary.packageRoot)
            #expect(graph.status == 0, "\(graph.stderr)")
        }
    }

    @Test func schemaIsJSONWithADraft() throws {
        let result = try FlowBinary.run(["schema"], in: FlowBinary.packageRoot)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect((object?["$schema"] as? String)?.contains("json-schema.org") == true)
    }

    @Test(arguments: [[], ["run"], ["plan"], ["validate"], ["graph"], ["schema"]])
    func helpExitsZero(_ command: [String]) throws {
        let result = try FlowBinary.run(command + ["--help"], in: FlowBinary.packageRoot)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("USAGE:"), "\(result.stdout)")
        #expect(result.stderr.isEmpty)
        let short = try FlowBinary.run(command + ["-h"], in: FlowBinary.packageRoot)
        #expect(short.status == 0)
        #expect(short.stdout == result.stdout)
    }

    /// The examples of `flow --help` name the repository's `workflows/`, so run from the
    /// repository they must work (up to a pipe into another program): they once named a
    /// `workflows/build.yaml` that does not exist.
    @Test func topLevelHelpExamplesWorkInTheRepository() throws {
        let help = try FlowBinary.run(["--help"], in: FlowBinary.packageRoot)
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "Examples:") else {
            Issue.record("no Examples: in flow --help")
            return
        }
        let examples = lines[(start + 1)...].prefix { $0.hasPrefix("  flow ") }
        #expect(examples.count >= 3, "\(help.stdout)")
        for example in examples {
            // `flow …` up to a pipe, through the shell (for the globs), with this binary.
            let command = example.split(separator: "|", maxSplits: 1)[0].trimmingCharacters(in: .whitespaces)
            let script = "\"$0\"" + command.dropFirst("flow".count) + " >/dev/null"
            let result = try FlowBinary.run([], in: FlowBinary.packageRoot, shellScript: script)
            #expect(result.status == 0, "`\(command)` exited \(result.status): \(result.stderr)")
        }
    }

    @Test func helpSubcommand() throws {
        let result = try FlowBinary.run(["help", "plan"], in: FlowBinary.packageRoot)
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: flow plan"))
    }

    /// Every subcommand's help, `flow help X` and `flow X --help` alike; the options of
    /// `run` are all there.
    @Test(arguments: ["run", "plan", "validate", "graph", "schema", "runs", "show", "logs", "resume", "undo"])
    func everySubcommandHasHelp(_ name: String) throws {
        let flag = try FlowBinary.run([name, "--help"], in: FlowBinary.packageRoot)
        let word = try FlowBinary.run(["help", name], in: FlowBinary.packageRoot)
        #expect(flag.status == 0 && word.status == 0)
        #expect(flag.stdout == word.stdout)
        #expect(flag.stdout.hasPrefix("OVERVIEW: "))
        #expect(flag.stdout.contains("USAGE: flow \(name)"))
        #expect(flag.stdout.split(separator: "\n").allSatisfy { $0.count <= 79 || !$0.contains(" ") || $0.hasPrefix("USAGE:") || $0.hasPrefix("  ") },
                "lines wrap at 79 columns")
        if name == "run" {
            for option in ["--var", "--with", "--tags", "--skip-tags", "--only", "--dry-run", "--output", "--quiet", "--no-color",
                           "--grace", "--max-parallel", "--no-rollback", "--junit", "--state-dir", "--no-journal"] {
                #expect(flag.stdout.contains("  \(option)"), "\(option)")
            }
        }
        if name == "undo" {
            #expect(!flag.stdout.contains("--no-rollback"), "an undo is a rollback: \(flag.stdout)")
        }
    }

    @Test func misspeltNamesGetASuggestion() throws {
        let command = try FlowBinary.run(["rnu"], in: FlowBinary.packageRoot)
        #expect(command.status == 2)
        #expect(command.stderr.hasPrefix("Error: Unknown subcommand 'rnu'. Did you mean 'run'?\n"), "\(command.stderr)")
        let option = try FlowBinary.run(["validate", "--stirct", "x.yaml"], in: FlowBinary.packageRoot)
        #expect(option.status == 2)
        #expect(option.stderr.hasPrefix("Error: Unknown option '--stirct'. Did you mean '--strict'?\n"), "\(option.stderr)")
    }

    /// `resume` and `undo` run with the arguments recorded with the run: `flow run`'s
    /// options that would change them get a usage error that says so, not a bare
    /// "Unknown option" that reads as a typo (found in the interaction audit).
    @Test func resumeAndUndoSayWhyTheyDeclineOptionsOfRun() throws {
        let recorded = "runs with the vars, --with values, ACTION and selection recorded with the run; "
            + "to run with others, start a new run: flow run FILE …\n"
        for (command, option) in [("resume", "--var"), ("resume", "--only=a"), ("undo", "--with"), ("undo", "--skip-tags")] {
            let result = try FlowBinary.run([command, "last", option, "x=1"], in: FlowBinary.packageRoot)
            #expect(result.status == 2, "\(result)")
            let name = String(option.prefix { $0 != "=" })
            #expect(result.stderr.hasPrefix("Error: Unknown option '\(name)'\nHelp:  \(name)  \(command) " + recorded),
                    "\(result.stderr)")
        }
        let preview = try FlowBinary.run(["resume", "last", "--dry-run"], in: FlowBinary.packageRoot)
        #expect(preview.stderr.hasPrefix("Error: Unknown option '--dry-run'\nHelp:  --dry-run  resume has no dry run: `flow show RUN`"),
                "\(preview.stderr)")
        let rollback = try FlowBinary.run(["undo", "last", "--no-rollback"], in: FlowBinary.packageRoot)
        #expect(rollback.stderr.hasPrefix("Error: Unknown option '--no-rollback'\nHelp:  --no-rollback  an undo is a rollback"),
                "\(rollback.stderr)")
        // A misspelling is still one.
        let typo = try FlowBinary.run(["resume", "last", "--forse"], in: FlowBinary.packageRoot)
        #expect(typo.stderr.hasPrefix("Error: Unknown option '--forse'. Did you mean '--force'?\n"), "\(typo.stderr)")
    }

    /// A value an option cannot take says what is wrong with it, as a workflow's invalid
    /// duration does: "is invalid" alone left the user to guess (found in the contract
    /// trace: `--grace -1s`, `--var target`).
    @Test func anInvalidOptionValueSaysWhatIsWrongWithIt() throws {
        let cases: [([String], String)] = [
            (["--grace", "-1s"], "The value '-1s' is invalid for '--grace <duration>': durations cannot be negative"),
            (["--grace", "5min"], "The value '5min' is invalid for '--grace <duration>': did you mean '5m'?"),
            (["--grace", "soon"], "The value 'soon' is invalid for '--grace <duration>': write e.g. 30s, 1m30s, 250ms or a number of seconds"),
            (["--grace", "2000000h"], "The value '2000000h' is invalid for '--grace <duration>': longer than the maximum, 1000000h"),
            (["--var", "target"], "The value 'target' is invalid for '--var <key=value>': expected name=value, such as target=prod"),
            (["--var", "=prod"], "The value '=prod' is invalid for '--var <key=value>': the name before '=' is missing"),
            // YAML's `key: value` habit: the `=` is what is missing, not a value.
            (["--var", "version:1.2"], "The value 'version:1.2' is invalid for '--var <key=value>': expected name=value, such as version=1.2"),
            (["--var", "version: 1.2"], "The value 'version: 1.2' is invalid for '--var <key=value>': expected name=value, such as version=1.2"),
            (["--max-parallel", "many"], "The value 'many' is invalid for '--max-parallel <n>': expected a whole number, such as 4"),
        ]
        for (words, message) in cases {
            let result = try FlowBinary.run(["run", "workflows/command-group.yaml"] + words, in: FlowBinary.packageRoot)
            #expect(result.status == 2, "\(words): \(result)")
            #expect(result.stderr.hasPrefix("Error: \(message)\nHelp:  "), "\(words): \(result.stderr)")
        }
    }

    /// The completion scripts come from the command tree and are valid for their shell.
    @Test func completionScripts() throws {
        let bash = try FlowBinary.run(["--generate-completion-script", "bash"], in: FlowBinary.packageRoot)
        #expect(bash.status == 0)
        #expect(bash.stdout.contains("complete -F _flow flow"))
        for name in ["run", "validate", "resume", "--max-parallel", "--prune-older-than"] {
            #expect(bash.stdout.contains(name), "\(name)")
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("flow-completion-\(getpid()).bash")
        try bash.stdout.write(to: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: path) }
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/bin/bash")
        check.arguments = ["-c", "source \"$1\" && COMP_WORDS=(flow run --output ''); COMP_CWORD=3; _flow; echo \"${COMPREPLY[*]}\"", "_", path.path]
        let pipe = Pipe()
        check.standardOutput = pipe
        try check.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        check.waitUntilExit()
        #expect(check.terminationStatus == 0)
        #expect(output == "auto tty prefixed grouped raw json\n", "\(output)")
        for shell in ["zsh", "fish"] {
            let result = try FlowBinary.run(["--generate-completion-script", shell], in: FlowBinary.packageRoot)
            #expect(result.status == 0 && result.stdout.contains("flow"), "\(shell)")
        }
        let unknown = try FlowBinary.run(["--generate-completion-script", "tcsh"], in: FlowBinary.packageRoot)
        #expect(unknown.status == 2)
    }

    /// A file name that is not valid UTF-8 (Latin-1 `café.yaml`) is opened by its bytes and
    /// shown with the bad byte escaped; a missing one too, with control characters escaped.
    @Test func fileNamesThatAreNotUTF8() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = #"""
            good="$(printf 'caf\351.yaml')"; missing="$(printf 'gone\351\033.yaml')"
            printf 'steps:\n  - print: hi\n' > "$good"
            "$0" validate "$good" "$missing"; echo "status $?"
            "$0" plan "$good"
            """#
        let result = try FlowBinary.run([], in: directory, shellScript: script)
        #expect(result.stdout == """
            caf\\xE9.yaml: valid
            status 1
            caf\\xE9 (caf\\xE9.yaml)
            └─ print: hi

            1 step, shortest wall time 0s

            """)
        #expect(result.stderr == """
            gone\\xE9\\u{1B}.yaml:1:1: error: cannot read `gone\\xE9\\u{1B}.yaml`: No such file or directory [file-unreadable]
            1 error in 1 of 2 files

            """)
    }

    /// A variable of flow's environment whose value (or name) is not UTF-8 reaches the steps
    /// byte for byte: flow read its environment into Strings, which put U+FFFD (EF BF BD) in
    /// place of the byte, so a Latin-1 directory in PATH found nothing. A value flow changes
    /// (a step's `env`) is flow's own.
    @Test func environmentBytesThatAreNotUTF8ReachTheSteps() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = #"""
            bin="$PWD/$(printf 'caf\351')"; mkdir "$bin" || exit 9
            printf '#!/bin/sh\necho latin tool\n' > "$bin/latintool"; chmod +x "$bin/latintool"
            printf 'steps:\n  - name: v\n    shell: printf %%s "$T_BYTES" | od -An -tx1\n  - name: p\n    shell: latintool\n  - name: o\n    env: { T_BYTES: set }\n    shell: echo "$T_BYTES"\n' > wf.yaml
            printf 'steps:\n  - shell: cat /proc/self/environ\n' > names.yaml
            export T_BYTES="$(printf 'a=\351b')"; export PATH="$bin:$PATH"
            "$0" run wf.yaml --output raw --no-journal || exit 8
            env "$(printf 'T_N\377=1')" "$0" run names.yaml --output raw --no-journal | tr '\0' '\n' | grep -a '^T_N' | od -An -tx1
            """#
        let result = try FlowBinary.run([], in: directory, shellScript: script)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    == ["61 3d e9 62", "latin tool", "set", "54 5f 4e ff 3d 31 0a"], "\(result)")
    }

    /// `resume` reopens a workflow file whose name is not UTF-8 (byte 0xFF) by its bytes, from
    /// a directory whose name is not UTF-8 either, invoked from elsewhere; `undo` enters that
    /// directory; `show` gives both names escaped. (The journal used to keep only the shown
    /// names, which open nothing: resume said the file was gone.)
    @Test func resumeAndUndoReopenNamesThatAreNotUTF8() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = #"""
            dir="$(printf 'd\377')"; file="$(printf 'w\377.yaml')"
            mkdir "$dir" && cd "$dir" || exit 9
            printf 'rollback: false\nsteps:\n  - name: once\n    shell: echo ran >> once.log\n    undo:\n      shell: echo undone >> undo.log\n  - name: gate\n    shell: test -f go\n' > "$file"
            "$0" run "$file" --output prefixed > /dev/null 2>&1; echo "run $?"
            touch go; cd ..
            "$0" resume last --output prefixed > /dev/null 2> resume.err; echo "resume $?"; head -1 resume.err | sed 's/run [^:]*:/run ID:/'
            "$0" undo last --output prefixed > /dev/null 2>&1; echo "undo $?"
            "$0" show last | head -1 | sed 's/^run [^ ]* /run ID /; s/ · [^·]*$//'
            cat "$dir/once.log" "$dir/undo.log"
            """#
        let result = try FlowBinary.run([], in: directory, shellScript: script)
        #expect(result.stdout == """
            run 1
            resume 0
            resuming run ID: 1 step already succeeded
            undo 0
            run ID · w\\xFF (w\\xFF.yaml) · succeeded (exit 0)
            ran
            undone

            """, "\(result)")
    }

    @Test func version() throws {
        let result = try FlowBinary.run(["--version"], in: FlowBinary.packageRoot)
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: ".").count == 3, "\(result.stdout)")
    }

    @Test(arguments: [["plan"], ["run"], ["graph"], ["validate"], ["nonsense"], ["plan", "--bogus", "x.yaml"],
                      ["graph", "--format", "svg", "x.yaml"], ["validate", "--format", "xml", "x.yaml"]])
    func usageErrorsExitTwo(_ arguments: [String]) throws {
        let result = try FlowBinary.run(arguments, in: FlowBinary.packageRoot)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(!result.stderr.isEmpty)
    }

    @Test func colorIsOffWithoutATerminal() throws {
        let result = try FlowBinary.run(["validate", "Tests/FlowEndToEndTests/Fixtures/validate-errors-text/many-errors.yaml"],
                                        in: FlowBinary.packageRoot)
        #expect(result.status == 1)
        #expect(!result.stderr.contains("\u{1B}["))
    }

    /// Actions that each use the previous one four times: a 3 KB file whose plan would have
    /// 4^40 steps — the `use` equivalent of the "billion laughs".
    static let actionBomb: String = {
        var lines = ["actions:", "  a0:", "    steps:", "      - print: lol"]
        for level in 1...40 {
            lines += ["  a\(level):", "    steps:"] + Array(repeating: "      - use: a\(level - 1)", count: 4)
        }
        return (lines + ["steps:", "  - use: a40"]).joined(separator: "\n") + "\n"
    }()

    @Test func actionExpansionBombIsRefusedWithoutACrash() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-bomb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.actionBomb.write(to: directory.appendingPathComponent("bomb.yaml"), atomically: true, encoding: .utf8)
        func run(_ arguments: [String]) -> FlowBinary.Result {
            do {
                return try FlowBinary.run(arguments, in: directory, timeout: 30, memoryLimitKB: 600_000)
            } catch {
                return FlowBinary.Result(status: -1, stdout: "", stderr: "\(error)")
            }
        }
        let validate = run(["validate", "bomb.yaml"])
        let plan = run(["plan", "bomb.yaml"])
        #expect(validate.status == 1, "validate should report the expansion, got: \(validate.stdout)\(validate.stderr.prefix(300))")
        #expect(validate.stderr.contains("[expansion-limit]"))
        #expect(plan.status == 2, "plan should refuse cleanly, got \(plan.status): \(plan.stderr.prefix(300))")
        #expect(plan.status != 0, "it can never succeed")
    }

    /// Control characters that come from the workflow or the command line are escaped in
    /// graphs, usage errors and plan errors: a terminal must not act on them.
    @Test func controlCharactersAreEscapedInGraphsAndCommandLineErrors() throws {
        let box = try RunSandbox()
        try box.write("g.yaml", "steps:\n  - print: \"x\\e[2Jy\"\n")
        for format in ["mermaid", "dot"] {
            let graph = try box.run(["graph", "--format", format, "g.yaml"])
            #expect(graph.status == 0, "\(graph)")
            #expect(!graph.stdout.contains("\u{1B}") && graph.stdout.contains("u{1B}[2Jy"), "\(graph)")
        }
        let badVar = try box.run(["plan", "g.yaml", "--var", "zz\u{1B}[31m=1"])
        #expect(badVar.status == 2 && badVar.stderr.contains("`zz\\u{1B}[31m`") && !badVar.stderr.contains("\u{1B}"), "\(badVar)")
        let badGrace = try box.run(["run", "--grace", "\u{1B}[31m5s", "g.yaml"])
        #expect(badGrace.status == 2 && !badGrace.stderr.contains("\u{1B}"), "\(badGrace)")
    }

    /// Bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) in workflow text
    /// are escaped where control characters are: a terminal that applies them showed a
    /// command in another order than it runs ("Trojan Source"), in the plan, a source line
    /// under a diagnostic and the live tree alike; rustc escapes them in its snippets too.
    @Test func bidiOverridesAreEscapedInPlansAndDiagnostics() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - shell: \"true #\u{202E} ;x\u{2066}\"\n")
        try box.write("bad.yaml", "steps:\n  - { shell: \"true #\u{202E} ;x\u{2066}\", timout: 1 }\n")
        let plan = try box.run(["plan", "ok.yaml"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdout.contains(#"shell: true #\u{202E} ;x\u{2066}"#), "\(plan)")
        let validate = try box.run(["validate", "bad.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr.contains(#"2 |   - { shell: "true #\u{202E} ;x\u{2066}", timout: 1 }"#), "\(validate)")
        // The caret still points at the key, past the escapes.
        let caret = try #require(validate.stderrLines.first { $0.hasSuffix("^^^^^^ did you mean `timeout`?") }, "\(validate)")
        #expect(caret.firstIndex(of: "^").map { caret.distance(from: caret.startIndex, to: $0) } == 46, "\(validate)")
        for output in [plan.stdout, validate.stderr] {
            #expect(!output.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) })
        }
    }

    /// A group (or `use`) the selection leaves out is marked in the graph as in the plan: in
    /// Mermaid its subgraph lacked the class `skipped` that its steps had (dot dashed the
    /// cluster), so `flow graph --only unit` drew `use act` as selected though nothing of it
    /// runs (found by the selection audit's differential checker).
    @Test func aGroupTheSelectionLeavesOutIsMarkedInTheGraph() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              act:
                steps:
                  - shell: echo inner
            steps:
              - name: checks
                sequential:
                  - name: unit
                    shell: echo unit
              - name: other
                concurrent:
                  - shell: echo lint
              - use: act
            """)
        let mermaid = try box.run(["graph", "wf.yaml", "--only", "unit"])
        #expect(mermaid.status == 0, "\(mermaid)")
        // n1 checks (selected), n2 unit, n3 other, n4 lint, n5 use act, n6 inner.
        #expect(mermaid.stdout.contains("  subgraph n3 [\"concurrent other\"]\n"), "\(mermaid)")
        #expect(mermaid.stdout.contains("  subgraph n5 [\"use act\"]\n"), "\(mermaid)")
        #expect(mermaid.stdout.hasSuffix("  class n3,n4,n5,n6 skipped\n"), "\(mermaid)")
        let dot = try box.run(["graph", "wf.yaml", "--only", "unit", "--format", "dot"])
        #expect(dot.status == 0, "\(dot)")
        #expect(dot.stdout.components(separatedBy: "    style=dashed;\n").count == 3, "\(dot)")
    }

    /// The plan shows every part of a retry policy, `max_delay` too.
    @Test func planShowsTheWholeRetryPolicy() throws {
        let box = try RunSandbox()
        try box.write("r.yaml", """
            steps:
              - name: flaky
                shell: "true"
                retry: { limit: 3, delay: 100ms, backoff: 1.5, max_delay: 1s, exit_codes: [75] }
            """)
        let plan = try box.run(["plan", "r.yaml"])
        #expect(plan.status == 0 && plan.stdout.contains("retry 3 after 150ms ×1.5 max 1s on exit 75"), "\(plan)")
    }

    /// A command whose result is its output fails when stdout refuses it (a full disk):
    /// `flow schema > schema.json` used to leave a cut file and exit 0. A closed pipe
    /// (`| head -1`) stays quiet and keeps the status.
    @Test func outputStdoutRefusesFailsTheCommand() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", """
            steps:
              - name: build
                shell: "true"
            """)
        let commands: [[String]] = [["schema"], ["plan", "ok.yaml"], ["graph", "ok.yaml"], ["run", "ok.yaml", "--dry-run"],
                                    ["validate", "ok.yaml"], ["validate", "--format", "json", "ok.yaml"], ["runs"],
                                    ["--help"], ["--version"], ["--generate-completion-script", "bash"]]
        // A journal for `runs` to list.
        let recorded = try box.run(["run", "ok.yaml"])
        #expect(recorded.status == 0, "\(recorded)")
        for arguments in commands {
            let full = try FlowBinary.run(arguments, in: box.root, shellScript: "FLOW_STATE_DIR='\(box.state.path)' \"$0\" \"$@\" >/dev/full")
            #expect(full.status == 1, "\(arguments): \(full)")
            #expect(full.stderr.hasSuffix("error: cannot write to stdout (no space left on device)\n"), "\(arguments): \(full)")
            let piped = try FlowBinary.run(arguments, in: box.root,
                                           shellScript: "FLOW_STATE_DIR='\(box.state.path)' \"$0\" \"$@\" | head -c 1 >/dev/null")
            #expect(!piped.stderr.contains("cannot write"), "\(arguments): \(piped)")
        }
    }

    /// Where whatever started flow ignores SIGPIPE (`trap '' PIPE`, some CI agents), a
    /// write a closed pipe refuses ends the command at once, quietly, with 141 (the status
    /// SIGPIPE's default gives): `flow runs | head -c 1` used to read the whole history
    /// for no one and exit 0. The output is more than a pipe holds, so that flow writes
    /// after `head` is gone whenever `head` goes.
    @Test func aClosedPipeEndsTheCommandWhereSIGPIPEIsIgnored() throws {
        let box = try RunsListingTests.sandbox(runs: 3_000)
        try box.write("chatty.yaml", "steps:\n  - shell: seq 1 100000\n")
        #expect(try box.run(["run", "chatty.yaml", "--output", "prefixed"], timeout: 120).status == 0)
        for arguments in [["runs"], ["runs", "--json"], ["logs", "last"]] {
            let r = try FlowBinary.run(arguments, in: box.root, shellScript: """
                trap '' PIPE
                { FLOW_STATE_DIR='\(box.state.path)' "$0" "$@" 2>flow.err; echo $? >flow.status; } | head -c 1 >/dev/null
                """)
            #expect(r.status == 0, "\(arguments): \(r)")
            #expect(box.read("flow.status") == "141\n", "\(arguments)")
            #expect(box.read("flow.err") == "", "\(arguments)")
        }
    }

    /// A run, resume or undo goes on whoever stopped reading, from its first write, not
    /// only once its steps start: a warning about the workflow (or resume's "resuming
    /// run" line) written to a pipe already closed ended `flow run` with 141 before any
    /// step ran, where SIGPIPE is ignored (the closed-pipe exit) and where it is not (the
    /// signal). The pipe's reader is gone before flow starts (a FIFO whose one reader
    /// opened it and exited), so the write fails every time.
    @Test func aRunGoesOnWhenStderrIsAPipeClosedBeforeItsFirstStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              unused: x
            steps:
              - name: mark
                shell: echo ran >> ran.txt
              - name: gate
                shell: test -f go
            """)
        for trap in ["", "trap '' PIPE"] {
            try? FileManager.default.removeItem(atPath: box.path("ran.txt"))
            try? FileManager.default.removeItem(atPath: box.path("go"))
            let closed = """
                \(trap)
                rm -f p; mkfifo p
                ( exec 3<p ) &
                exec 4>p
                wait
                "$0" "$@" --state-dir '\(box.state.path)' --output prefixed 2>&4
                echo $? >flow.status
                """
            _ = try FlowBinary.run(["run", "wf.yaml"], in: box.root, shellScript: closed)
            #expect(box.read("flow.status") == "1\n", "\(trap): the run's own status (gate failed)")
            #expect(box.read("ran.txt") == "ran\n", "\(trap)")
            try box.write("go", "")
            _ = try FlowBinary.run(["resume", "last"], in: box.root, shellScript: closed)
            #expect(box.read("flow.status") == "0\n", "\(trap): the resume ran and succeeded")
        }
    }

    /// Started with stdout closed (`>&-`), flow says it cannot write to it (`EBADF`, as
    /// coreutils do): the number was taken by the next file flow opened (an epoll
    /// descriptor: "invalid argument"; the journal's database could have been next), and
    /// output meant for stdout went there. A run's steps run and are recorded as ever.
    @Test func aClosedStdoutIsNotTakenByAFile() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", """
            steps:
              - name: hello
                print: hi
            """)
        func closed(_ arguments: [String]) throws -> FlowBinary.Result {
            try FlowBinary.run(arguments, in: box.root, shellScript: "FLOW_STATE_DIR='\(box.state.path)' \"$0\" \"$@\" >&-")
        }
        let run = try closed(["run", "ok.yaml"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("warning: flow could not write all of its output to stdout (bad file descriptor)"), "\(run)")
        for arguments in [["runs"], ["show", "last"], ["logs", "last"], ["validate", "ok.yaml"], ["plan", "ok.yaml"]] {
            let result = try closed(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.hasSuffix("error: cannot write to stdout (bad file descriptor)\n"), "\(arguments): \(result)")
        }
        let runs = try box.run(["runs"])
        #expect(runs.status == 0 && runs.stdoutLines.count == 2 && runs.stdout.contains("1 succeeded"), "\(runs)")
        #expect(try box.run(["logs", "last"]).stdout == "hello | hi\n")
    }

    /// `flow run -` started with stdin closed (`<&-`, as some CI runners and `nohup`-style
    /// wrappers leave it) says so: it read the `/dev/null` that holds descriptor 0 and
    /// said "the workflow is empty", which sent the user looking at a file that was fine.
    /// A stdin that is open but empty is still an empty workflow.
    @Test func aWorkflowFromAClosedStdinIsSaidToBeMissing() throws {
        let box = try RunSandbox()
        for command in ["run", "validate", "plan"] {
            let result = try FlowBinary.run([command, "-"], in: box.root,
                                            shellScript: "FLOW_STATE_DIR='\(box.state.path)' \"$0\" \"$@\" <&-")
            #expect(result.status == (command == "validate" ? 1 : 2), "\(command): \(result)")
            #expect(result.stderr.contains("<stdin>:1:1: error: cannot read `<stdin>`: standard input is closed [file-unreadable]\n"),
                    "\(command): \(result)")
            #expect(result.stderr.contains("help: `-` reads the workflow from stdin: `flow run - < FILE`, or name the file"),
                    "\(command): \(result)")
        }
        let empty = try FlowBinary.run(["run", "-"], in: box.root,
                                       shellScript: "FLOW_STATE_DIR='\(box.state.path)' \"$0\" \"$@\" </dev/null")
        #expect(empty.status == 2 && empty.stderr.contains("the workflow is empty [empty-workflow]"), "\(empty)")
    }

    /// `help` is a subcommand of the root as the others are: a typo of it gets a "did you
    /// mean" (`flow hlep run` said only "Unknown subcommand").
    @Test func aMisspeltHelpGetsADidYouMean() throws {
        let result = try FlowBinary.run(["hlep", "run"], in: FlowBinary.packageRoot)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.hasPrefix("Error: Unknown subcommand 'hlep'. Did you mean 'help'?\n"), "\(result)")
        let run = try FlowBinary.run(["rnu"], in: FlowBinary.packageRoot)
        #expect(run.stderr.hasPrefix("Error: Unknown subcommand 'rnu'. Did you mean 'run'?\n"), "\(run)")
    }
}
