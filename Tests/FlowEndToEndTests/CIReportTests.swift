import Foundation
import Testing
@testable import FlowJournal
#if canImport(FoundationXML)
import FoundationXML
#endif

/// What a CI system reads from flow, through the built binary: GitHub Actions workflow
/// commands (`validate --format github`, grouped output under `GITHUB_ACTIONS=true`) and
/// the JUnit report.
@Suite struct CIReportTests {
    /// A CR LF in a message (here a step name written with `\r\n`) went out raw: Swift's
    /// `Character` for CR LF is one grapheme, equal to neither `"\r"` nor `"\n"`, so the
    /// escaping skipped it, and the runner read the rest as a line (a command) of its own.
    @Test func githubCommandsEscapeCRLF() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            steps:
              - name: "a\r\n::error::forged"
                shell: echo
            """#)
        let r = try box.run(["validate", "--format", "github", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        // Counted in bytes: `split` on a `String` keeps CR LF whole, as the escaping did.
        #expect(r.stdout.utf8.split(separator: 0x0A).count == 1, "one command per problem, on one line: \(r)")
        #expect(r.stdoutLines.first?.hasPrefix("::error file=wf.yaml,line=2,col=11,") == true, "\(r)")
        #expect(r.stdout.contains("invalid step name `a%0D%0A::error::forged`"), "\(r)")
        #expect(!r.stdout.contains("\r"), "\(r)")
    }

    /// A GitHub command is one only at a line's start. After an interactive step (which
    /// writes to flow's stdout itself) left a line unfinished, flow cannot tell through the
    /// runner's pipe where the line stands, and wrote nothing before its next `::group::`:
    /// `inter::group::✓ b (0.0s)` was a log line, no group opened, and the `::endgroup::`
    /// closed nothing. An empty line, when it is one too many, costs nothing in the log.
    @Test func aGroupAfterAnInteractiveStepsUnfinishedLineStartsALine() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: printf inter
                interactive: true
              - name: b
                shell: exit 3
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(r.status == 1, "\(r)")
        let lines = r.stdoutLines.map { $0.replacing(/[0-9]+\.[0-9]s/, with: "T") }
        #expect(lines == [
            "inter",
            "::group::✓ a (T)",
            "::endgroup::",
            "::group::✗ b (exit 3 T)",
            "::endgroup::",
            "::error title=flow step b failed::b: exit 3 T",
        ], "\(r)")
    }

    /// A monorepo's `check` action used as `alpha` and `beta`: the annotation of beta's
    /// failed test said `flow step test@1.1.2 failed`, numbers a reader of the job's
    /// summary could not map to the package. A step labelled by its path (a name several
    /// steps share, or none) now names the nearest named step around it; a step with a
    /// name of its own is annotated by it alone, as before.
    @Test func anAnnotationNamesTheGroupOfAStepLabelledByItsPath() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              check:
                params:
                  code: { required: true }
                steps:
                  - name: test
                    shell: exit ${{ params.code }}
            steps:
              - name: checks
                sequential:
                  - { use: check, name: alpha, with: { code: "0" } }
                  - { use: check, name: beta, with: { code: "3" } }
                finally:
                  - shell: exit 4
              - name: after
                shell: exit 5
                if: always()
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(r.status == 1, "\(r)")
        let annotations = r.stdoutLines.filter { $0.hasPrefix("::error") }.map { $0.replacing(/[0-9]+\.[0-9]s/, with: "T") }
        #expect(annotations == [
            "::error title=flow step test@1.2.1 (in beta) failed::test@1.2.1 (in beta): exit 3 T",
            "::error title=flow step shell@1.f1 (in checks) failed::shell@1.f1 (in checks): exit 4 T",
            "::error title=flow step after failed::after: exit 5 T",
        ], "\(r)")
    }

    /// Decision (docs/cli.md, `grouped`): under GitHub Actions the steps' output passes
    /// as written, workflow commands included, as a `run:` step's does, so a tool's
    /// annotations and a step's `::add-mask::` work (`::stop-commands::` around it would
    /// turn the mask off). A `print`'s message is the step's output too.
    @Test func stepsWorkflowCommandsPassThroughAndFlowsOwnAreEscaped() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            steps:
              - shell: "printf '::add-mask::s3cret\\n::warning file=a.c,line=3::unused\\n'"
              - print: "%0A::error::x"
            """#)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdoutLines.map { $0.replacing(/[0-9]+\.[0-9]s/, with: "T") }
        #expect(lines == [
            #"::group::✓ shell@1: printf '::add-mask::s3cret\n::warning file=a.c,line=3::unused\n' (T)"#,
            "::add-mask::s3cret",
            "::warning file=a.c,line=3::unused",
            "::endgroup::",
            "::group::✓ print@2 (T)",
            "%0A::error::x",
            "::endgroup::",
        ], "\(r)")
    }

    /// A workflow read from standard input has no file in the repository: its GitHub
    /// commands named `file=<stdin>`, a path GitHub would link. They carry no file and no
    /// position now, and the message says where.
    @Test func githubCommandsForStandardInputNameNoFile() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - shel: make\n")
        let r = try FlowBinary.run(["validate", "--format", "github", "-"], in: box.root,
                                   shellScript: "\"$0\" \"$@\" < wf.yaml")
        #expect(r.status == 1, "\(r)")
        #expect(r.stdout == "::error title=flow unknown-key::<stdin>:2:5: unknown key `shel` in a step (did you mean `shell`?)\n",
                "\(r)")
    }

    /// A file that is named `<stdin>` is a file of the repository like any other: its
    /// commands name it and the position. Told apart from standard input by where the
    /// workflow came from, not by its name, which standard input is shown with.
    @Test func githubCommandsForAFileNamedStdinNameIt() throws {
        let box = try RunSandbox()
        try box.write("<stdin>", "steps:\n  - shel: make\n")
        let r = try box.run(["validate", "--format", "github", "<stdin>"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdout == "::error file=<stdin>,line=2,col=5,endLine=2,endColumn=9,title=flow unknown-key::"
                + "unknown key `shel` in a step (did you mean `shell`?)\n", "\(r)")
    }

    /// `flow resume` and `flow undo` refuse a recorded workflow that is not valid (the file
    /// edited since, for `resume --force`; a journal whose recorded content no longer
    /// validates, for `undo`) as `flow run` refuses one: in a GitHub Actions job under
    /// `--output grouped` with annotations on the file beside the text. They wrote the text only.
    @Test func aRefusedRecordedWorkflowIsAnnotatedInGitHubActions() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - { name: a, shell: \"true\", undo: [{ shell: \"true\" }] }\n  - { name: b, shell: exit 1 }\n")
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        try box.write("wf.yaml", "steps:\n  - { name: a, shel: make }\n")
        let annotation = "::error file=wf.yaml,line=2,col=16,endLine=2,endColumn=20,title=flow unknown-key::"
            + "unknown key `shel` in a step (did you mean `shell`?)"
        let resume = try box.run(["resume", "last", "--force", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(resume.status == 2, "\(resume)")
        #expect(resume.stderrLines.contains(annotation), "\(resume)")
        #expect(resume.stderr.contains("wf.yaml:2:16: error: unknown key `shel` in a step [unknown-key]\n"), "\(resume)")
        let plain = try box.run(["resume", "last", "--force", "--output", "prefixed"], env: ["GITHUB_ACTIONS": "true"])
        #expect(plain.status == 2 && !plain.stderr.contains("::error"), "\(plain)")

        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute("UPDATE runs SET content = CAST('steps:\n  - { name: a, shel: make }\n' AS BLOB)")
        let undo = try box.run(["undo", "last", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(undo.status == 2, "\(undo)")
        #expect(undo.stderrLines.contains(annotation), "\(undo)")
    }

    /// `flow run --output grouped` in a GitHub Actions job annotates a failed step; a
    /// workflow it refuses is annotated too, on the file and line, beside the text with its
    /// caret (which the log shows). Outside GitHub Actions, or in another mode, only the text.
    @Test func aRefusedWorkflowIsAnnotatedInGitHubActions() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - shel: make\n")
        let annotation = "::error file=wf.yaml,line=2,col=5,endLine=2,endColumn=9,title=flow unknown-key::"
            + "unknown key `shel` in a step (did you mean `shell`?)"
        let github = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(github.status == 2, "\(github)")
        #expect(github.stderrLines.contains(annotation), "\(github)")
        #expect(github.stderr.contains("wf.yaml:2:5: error: unknown key `shel` in a step [unknown-key]\n"), "\(github)")
        for (env, output) in [(["GITHUB_ACTIONS": "false"], "grouped"), (["GITHUB_ACTIONS": "true"], "prefixed")] {
            let plain = try box.run(["run", "wf.yaml", "--output", output], env: env)
            #expect(plain.status == 2 && !plain.stderr.contains("::error"), "\(output): \(plain)")
        }
    }

    /// The warnings of a workflow the run goes on with are annotated in GitHub Actions
    /// under `--output grouped`, as the docs say: those of the selection too
    /// (`unselected-reference`, which `--only` brings), not only the file's own.
    @Test func aRunsSelectionWarningIsAnnotatedInGitHubActions() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              unused: x
            steps:
              - name: a
                shell: echo "v=1" >> "$FLOW_OUTPUT"
                outputs: [v]
              - name: b
                shell: echo ${{ steps.a.outputs.v }}
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped", "--only", "b", "--no-journal"],
                            env: ["GITHUB_ACTIONS": "true"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("::warning file=wf.yaml,line=2,col=3,") && $0.contains("title=flow unused-var::") },
                "\(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("::warning file=wf.yaml,line=8,col=21,") && $0.contains("title=flow unselected-reference::") },
                "\(r)")
        let plain = try box.run(["run", "wf.yaml", "--output", "prefixed", "--only", "b", "--no-journal"],
                                env: ["GITHUB_ACTIONS": "true"])
        #expect(plain.status == 0 && !plain.stderr.contains("::warning"), "\(plain)")
    }

    /// The report's failures are the summary's: a group's own time-out, a `use` that failed
    /// before its steps ran and an undo that failed were not failures in the report (their
    /// steps were `cancelled`/`skipped`, the undone step passed), so a failed run could
    /// show a report with none.
    @Test func junitCountsTheFailuresTheSummaryCounts() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: ci
            rollback: true
            steps:
              - name: up
                shell: echo up
                undo:
                  - name: down
                    shell: echo undoing; exit 4
              - name: g
                timeout: 200ms
                sequential:
                  - { name: long, shell: "exec $CHILD --sleep 30" }
              - name: u
                use: a
                with: { p: "${{ steps.g.status }}" }
                if: always()
            actions:
              a:
                params:
                  p: { allowed: [x] }
                steps:
                  - shell: echo never
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 1 failed, 1 timed_out, 1 cancelled, 1 skipped, 1 undo_failed in ") == true,
                "\(r)")
        let data = try #require(FileManager.default.contents(atPath: box.path("report.xml")))
        let text = String(decoding: data, as: UTF8.self)
        #if canImport(FoundationXML) || os(macOS)
        let document = try XMLDocument(data: data)
        let suite = try #require(try document.nodes(forXPath: "//testsuite").first as? XMLElement)
        #expect(suite.attribute(forName: "failures")?.stringValue == "3", "\(text)")
        #expect(suite.attribute(forName: "skipped")?.stringValue == "2", "\(text)")
        #expect(suite.attribute(forName: "tests")?.stringValue == "5", "\(text)")
        func failure(_ name: String) throws -> XMLElement? {
            try document.nodes(forXPath: "//testcase[@name='\(name)']/failure").first as? XMLElement
        }
        #expect(try failure("g")?.attribute(forName: "type")?.stringValue == "timed_out", "\(text)")
        // The reason alone: a case has its own `time` (the live output's "… 0.2s" read as one phrase).
        #expect(try failure("g")?.attribute(forName: "message")?.stringValue == "timed out after 200ms", "\(text)")
        #expect(try failure("u")?.attribute(forName: "type")?.stringValue == "failed", "\(text)")
        let undo = try failure("up")
        #expect(undo?.attribute(forName: "type")?.stringValue == "undo_failed", "\(text)")
        #expect(undo?.attribute(forName: "message")?.stringValue == "undo failed: down exit 4", "\(text)")
        let out = try document.nodes(forXPath: "//testcase[@name='up']/system-out").first?.stringValue
        #expect(out == "up\nundoing\n", "the undo's output is the undone step's: \(text)")
        #expect(try document.nodes(forXPath: "//testcase[@name='down']").isEmpty, "\(text)")
        #endif
    }

    /// A retried group's step, and a group with `undo` inside one, is reversed once per
    /// attempt it succeeded in, the latest first. When the latest one's undo fails and an
    /// earlier one's succeeds, the summary counts `undo_failed` and so does the report: the
    /// earlier reversal's `undone` made the step's case pass and left the group's out.
    @Test func junitKeepsAnUndoFailureAnEarlierAttemptsReversalFollows() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: ci
            steps:
              - name: outer
                retry: 1
                sequential:
                  - { name: a, shell: "true", undo: { shell: "test -f ua || { touch ua; exit 1; }" } }
                  - name: inner
                    sequential:
                      - { name: b, shell: "true" }
                    undo: { shell: "test -f ui || { touch ui; exit 1; }" }
                  - { name: flaky, shell: exit 1 }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 1 succeeded, 1 failed, 2 undo_failed in ") == true, "\(r)")
        let text = box.read("report.xml") ?? ""
        #expect(text.contains("tests=\"4\" failures=\"3\""), "\(text)")
        #expect(text.contains("<testcase name=\"a\" classname=\"ci.outer\""), "\(text)")
        #expect(text.components(separatedBy: "type=\"undo_failed\"").count == 3, "a's and inner's: \(text)")
    }

    /// A case's `classname` was its step's path (`ci.2.2.1`): JUnit viewers (GitLab's Suite
    /// column, Jenkins' packages and classes, GitHub's test reporters) grouped cases by
    /// numbers. It is the workflow's name and the names of the enclosing groups now (an
    /// unnamed `use`, its action's), the case's `name` the step's label; every pair is
    /// unique, and the same in the next run of the file.
    @Test func junitClassnamesAreTheEnclosingGroupsNames() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: ci
            actions:
              lint:
                steps:
                  - { name: vet, shell: "true" }
            steps:
              - { name: fetch, shell: "true" }
              - name: build
                sequential:
                  - { name: compile, shell: "true" }
                  - name: checks
                    concurrent:
                      - { name: unit, shell: "true" }
                      - shell: exit 0
                finally:
                  - { name: tidy, shell: "true" }
              - sequential:
                  - { name: pack, shell: "true" }
              - use: lint
              - use: lint
            """)
        func pairs() throws -> [String] {
            let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
            #expect(r.status == 0, "\(r)")
            let text = box.read("report.xml") ?? ""
            return text.split(separator: "\n").compactMap { line -> String? in
                guard let m = line.firstMatch(of: /<testcase name="([^"]*)" classname="([^"]*)"/) else { return nil }
                return "\(m.output.2) \(m.output.1)"
            }
        }
        // Sorted: the two concurrent steps' cases come in the order they started.
        let first = try pairs().sorted()
        #expect(first == [
            "ci fetch", "ci.build compile", "ci.build.checks unit", "ci.build.checks shell@2.2.2", "ci.build tidy",
            "ci pack", "ci.lint vet@4.1", "ci.lint vet@5.1",
        ].sorted(), "\(first)")
        #expect(Set(first).count == first.count, "\(first)")
        #expect(try pairs().sorted() == first, "the same cases in the next run")
    }

    /// `flow undo --junit`: the cases are the steps the undo reversed or tried, as its
    /// summary counts them; the steps it left alone were `<skipped>` cases (`skipped="2"`).
    @Test func junitOfAnUndoHasNoCasesForTheStepsItLeftAlone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: ci
            steps:
              - { name: a, shell: "true", undo: { shell: "true" } }
              - { name: b, shell: "true" }
              - { name: c, if: "false", shell: "true", undo: { shell: "true" } }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let undo = try box.run(["undo", "last", "--output", "prefixed", "--junit", "undo.xml"])
        #expect(undo.status == 0, "\(undo)")
        let text = box.read("undo.xml") ?? ""
        #expect(text.contains("<testsuite name=\"ci\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\""), "\(text)")
        #expect(text.contains("<testcase name=\"a\" classname=\"ci\""), "\(text)")
    }

    /// Text a parser would change: a raw CR in text reads as LF, raw line breaks and tabs
    /// in an attribute as spaces. They are character references now.
    @Test func junitKeepsCarriageReturnsAndAttributeLineBreaks() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            steps:
              - name: bar
                shell: printf '10%%\r50%%\r100%%\n<&>]]>\001\n'; exit 1
            """#)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(r.status == 1, "\(r)")
        let text = box.read("report.xml") ?? ""
        #expect(text.contains("<system-out>10%&#13;50%&#13;100%\n&lt;&amp;&gt;]]&gt;\u{FFFD}\n</system-out>"), "\(text)")
        #if canImport(FoundationXML) || os(macOS)
        let document = try XMLDocument(data: Data(text.utf8))
        let out = try document.nodes(forXPath: "//system-out").first?.stringValue
        #expect(out == "10%\r50%\r100%\n<&>]]>\u{FFFD}\n", "\(text)")
        #endif
    }

    /// A step that printed more than a MiB kept the report's first MiB of it and dropped the
    /// rest without a word: the lines that say why it failed, printed last, were not in
    /// the report (found by the docs audit: cli.md says the case holds "its output").
    @Test func junitKeepsTheEndOfALongOutput() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            steps:
              - name: big
                shell: i=0; while [ $i -lt 30000 ]; do echo "line $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; i=$((i+1)); done; echo "the reason it failed"; exit 1
            """#)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-journal", "--junit", "report.xml"])
        #expect(r.status == 1, "\(r.stderr.suffix(300))")
        let text = box.read("report.xml") ?? ""
        #expect(text.contains("the reason it failed\n</system-out>"), "\(text.suffix(300))")
        #expect(text.contains("line 29999 "), "\(text.suffix(300))")
        #expect(!text.contains("line 0 "), "the start of the output is what goes")
        // What went is said, and the kept part starts at a line start.
        #expect(text.range(of: #"<system-out>… \([0-9]+ bytes of earlier output left out\)\nline [0-9]+ x"#,
                            options: .regularExpression) != nil, "\(text.prefix(600))")
        #expect(text.utf8.count < (1 << 20) + 4096, "at most about a MiB of output: \(text.utf8.count)")
    }

    /// A run refused before it started (an invalid workflow, a `--var` the workflow does
    /// not declare: exit 2) still writes its `--junit` report, one failed case holding what
    /// flow said: a CI job's report step found no file, and said only that.
    @Test func junitReportsARefusedRun() throws {
        let box = try RunSandbox()
        try box.write("bad.yaml", "steps:\n  - shel: x\n")
        try box.write("ok.yaml", "vars: {v: 1}\nsteps:\n  - print: \"${{ vars.v }}\"\n")
        let invalid = try box.run(["run", "bad.yaml", "--junit", "bad.xml"])
        #expect(invalid.status == 2, "\(invalid)")
        let text = box.read("bad.xml") ?? ""
        #expect(text.contains(#"<testsuites name="flow" tests="1" failures="1" errors="0" skipped="0" time="0.000">"#), "\(text)")
        #expect(text.contains(#"<failure message="bad.yaml is invalid (1 error); nothing was run" type="refused"/>"#), "\(text)")
        #expect(text.contains("bad.yaml:2:5: error: unknown key `shel` in a step [unknown-key]"), "\(text)")
        let unknownVar = try box.run(["run", "ok.yaml", "--var", "nope=1", "--junit", "var.xml"])
        #expect(unknownVar.status == 2, "\(unknownVar)")
        #expect(box.read("var.xml")?.contains(#"<failure message="unknown variable `nope` in --var" type="refused"/>"#) == true)
        #if canImport(FoundationXML) || os(macOS)
        for name in ["bad.xml", "var.xml"] {
            _ = try XMLDocument(data: Data((box.read(name) ?? "").utf8))
        }
        #endif
        // A run that starts writes the report of its steps, as before.
        #expect(try box.run(["run", "ok.yaml", "--output", "prefixed", "--junit", "ok.xml"]).status == 0)
        #expect(box.read("ok.xml")?.contains(#"failures="0""#) == true)
    }

    /// A resume or undo refused for its workflow (edited since the run, and invalid now) says
    /// so as `flow run` does, with the count of errors, and writes the same `--junit` report
    /// of the refusal: a CI job that resumes finds a report, not none ("is invalid; nothing
    /// was run", and no file).
    @Test func junitReportsARefusedResumeAndUndo() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - { name: a, shell: \"true\", undo: [{ shell: \"true\" }] }\n  - { name: b, shell: exit 1 }\n")
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        try box.write("wf.yaml", "steps:\n  - { name: a, shel: make }\n  - delay: soon\n")
        let resume = try box.run(["resume", "last", "--force", "--junit", "resume.xml"])
        #expect(resume.status == 2, "\(resume)")
        #expect(resume.stderrLines.last == "error: wf.yaml is invalid (2 errors); nothing was run", "\(resume)")
        let text = box.read("resume.xml") ?? ""
        #expect(text.contains(#"<failure message="wf.yaml is invalid (2 errors); nothing was run" type="refused"/>"#), "\(text)")
        #expect(text.contains("wf.yaml:2:16: error: unknown key `shel` in a step [unknown-key]"), "\(text)")

        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute("UPDATE runs SET content = CAST('steps:\n  - { name: a, shel: make }\n' AS BLOB)")
        let undo = try box.run(["undo", "last", "--junit", "undo.xml"])
        #expect(undo.status == 2, "\(undo)")
        #expect(undo.stderrLines.last == "error: wf.yaml is invalid (1 error); nothing was run", "\(undo)")
        #expect(box.read("undo.xml")?.contains(#"<failure message="wf.yaml is invalid (1 error); nothing was run" type="refused"/>"#) == true)
    }

    /// A `--junit` that can never be written (empty, a directory, or `-`) is refused before the
    /// run: the steps ran, and only then did flow say `cannot write : No such file`.
    @Test func junitWithoutAFileNameIsAUsageError() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - shell: touch ran\n")
        try FileManager.default.createDirectory(atPath: box.path("reports"), withIntermediateDirectories: true)
        let empty = try box.run(["run", "ok.yaml", "--junit", ""])
        #expect(empty.status == 2, "\(empty)")
        #expect(empty.stderr.contains("--junit needs a file name"), "\(empty)")
        let directory = try box.run(["run", "ok.yaml", "--junit", "reports"])
        #expect(directory.status == 2, "\(directory)")
        #expect(directory.stderr.contains("--junit reports is a directory: name the report's file, e.g. reports/junit.xml"), "\(directory)")
        // `-` is not standard output here (the run's own output is there): not a file named `-` either.
        let dash = try box.run(["run", "ok.yaml", "--junit", "-"])
        #expect(dash.status == 2, "\(dash)")
        #expect(dash.stderr.contains("--junit - would mix the report into the run's output on stdout: name a file (e.g. --junit junit.xml; ./- for a file named -)"), "\(dash)")
        #expect(!box.exists("ran") && !box.exists("-"))
    }

    /// Under GitHub Actions a `use` that failed before its steps ran (a value not
    /// `allowed`) got no `::error::`: only leaves and time-outs did, so the run failed with
    /// no annotation naming it. A group that fails because a step inside did gets none of
    /// its own (that step's is there), nor does one around a group that timed out.
    @Test func githubAnnotatesAUseThatFailedByItself() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: outer
                sequential:
                  - name: g
                    timeout: 200ms
                    sequential:
                      - shell: exec $CHILD --sleep 30
              - name: u
                use: a
                with: { p: "${{ steps.g.status }}" }
                if: always()
            actions:
              a:
                params:
                  p: { allowed: [x] }
                steps:
                  - shell: echo never
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(r.status == 1, "\(r)")
        let annotations = r.stdoutLines.filter { $0.hasPrefix("::error") }
        #expect(annotations.count == 2, "\(r)")
        #expect(annotations.first?.hasPrefix("::error title=flow step g failed::g: timed out after 200ms") == true, "\(r)")
        #expect(annotations.last?.hasPrefix(
            "::error title=flow step u failed::u: `timed_out` is not an allowed value of `p` (allowed: x) ") == true, "\(r)")
    }

    /// A relative `$TMPDIR` gave each step a relative `FLOW_OUTPUT` path, which a step with
    /// its own `dir` could not write (`cannot create rel/flow-…/1.out`): the run failed.
    @Test func aRelativeTMPDIRStillGivesEveryStepItsOutputFile() throws {
        let box = try RunSandbox()
        try FileManager.default.createDirectory(atPath: box.path("tmp"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: box.path("sub"), withIntermediateDirectories: true)
        try box.write("wf.yaml", """
            steps:
              - name: a
                dir: sub
                shell: echo "v=1" >> "$FLOW_OUTPUT"; echo "$FLOW_OUTPUT"
                outputs: [v]
              - print: "v is ${{ steps.a.outputs.v }}"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw", "--no-journal"], env: ["TMPDIR": "tmp/"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines.last == "v is 1", "\(r)")
        #expect(r.stdoutLines.first?.hasPrefix(box.path("tmp") + "/flow-") == true, "absolute, one slash: \(r)")
    }

    /// A relative `$TMPDIR` under a directory whose name is not UTF-8 cannot be made
    /// absolute as text (U+FFFD is not the byte): the run was refused (`cannot create a
    /// temporary directory in …/tm�/tmp`). It stays relative, as before, and the run runs.
    @Test func aRelativeTMPDIRUnderANameThatIsNotUTF8StillRuns() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-tmpdir-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = #"""
            d="$(printf 'tm\351')"; mkdir -p "$d/tmp" && cd "$d" || exit 9
            printf 'steps:\n  - name: a\n    shell: echo v=1 >> "$FLOW_OUTPUT"\n  - print: "v is ${{ steps.a.outputs.v }}"\n' > wf.yaml
            TMPDIR=tmp "$0" run wf.yaml --output raw --no-journal
            """#
        let r = try FlowBinary.run([], in: directory, shellScript: script)
        #expect(r.status == 0 && r.stdout == "v is 1\n", "\(r)")
    }
}
