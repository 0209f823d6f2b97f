import Foundation
import Testing

/// Validation rules seen through the built binary: what `flow validate` rejects (with the
/// diagnostic's location and code), `flow run` refuses (exit 2, nothing run); what it
/// accepts runs as written.
@Suite struct ValidationEndToEndTests {
    /// A workflow nested as deep as the limit allows (97 groups: 196 YAML levels of 200)
    /// validates, plans and runs under a small `ulimit -s`. Found by the hostile-environment
    /// audit: the parser recurses per level on a thread of Swift's pool, whose stack glibc
    /// sizes from RLIMIT_STACK at start (1 MiB here), and every command died of SIGSEGV
    /// (exit 139). flow now gives its threads at least 8 MiB, which steps do not inherit.
    @Test func aWorkflowAtTheNestingLimitSurvivesASmallStackLimit() throws {
        let box = try RunSandbox()
        var lines = ["steps:"]
        var indent = "  "
        for level in 0..<97 {
            lines += ["\(indent)- name: g\(level)", "\(indent)  sequential:"]
            indent += "    "
        }
        lines.append("\(indent)- shell: echo deep")
        try box.write("deep.yaml", lines.joined(separator: "\n") + "\n")
        for command in [["validate", "deep.yaml"], ["plan", "deep.yaml"], ["run", "deep.yaml", "--output", "prefixed"], ["show", "last"]] {
            let r = try FlowBinary.run(command, in: box.root, shellScript: "ulimit -s 1024 && FLOW_STATE_DIR='\(box.state.path)' exec \"$0\" \"$@\"")
            #expect(r.status == 0, "\(command): \(r.status) \(r.stderr)")
        }
    }

    /// A workflow file over 64 MiB is refused unread, named with the limit in the unit it
    /// is (it said "64 MB" of 64 × 2^20 bytes), and the other files are still checked.
    @Test func aFileOverTheSizeLimitIsRefusedWithTheLimit() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - print: hi\n")
        let big = box.path("big.yaml")
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, 64 << 20 + 1) == 0)
        let r = try box.run(["validate", "big.yaml", "ok.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("big.yaml:1:1: error: cannot read `big.yaml`: larger than 64 MiB [file-unreadable]\n"), "\(r)")
        #expect(r.stdout == "ok.yaml: valid\n" && r.stderr.hasSuffix("1 error in 1 of 2 files\n"), "\(r)")
        #expect(truncate(big, 64 << 20) == 0)
        let atLimit = try box.run(["validate", "big.yaml"])
        #expect(!atLimit.stdout.contains("larger than") && !atLimit.stderr.contains("larger than"), "\(atLimit)")
    }

    /// `if: vars.lint` with `lint: false`: the value is the string `false`, which a
    /// condition takes as true, so the step ran whatever the flag said, silently (Ansible's
    /// `when: lint` reads the same YAML as a boolean). A warning where a variable or a
    /// parameter the file gives as a boolean is taken for its truth, not where it is
    /// compared or is no boolean; the run, which the warning does not stop, shows why.
    @Test func aBooleanLookingStringTakenForItsTruthIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              lint: false
              target: prod
            actions:
              ship:
                params:
                  dry: { allowed: [true, false] }
                steps:
                  - print: shipping
                    if: ${{ !params.dry && success() }}
            steps:
              - print: linting
                if: vars.lint
              - print: compared
                if: vars.lint == true || vars.target
              - use: ship
                with: { dry: false }
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 0, "\(validate)")
        #expect(validate.stderr == """
            wf.yaml:10:18: warning: `params.dry` is a string, and a condition takes every string but the empty one as true, `'false'` too [string-flag]
               |
            10 |         if: ${{ !params.dry && success() }}
               |                  ^^^^^^^^^^ compare it with a boolean: `params.dry == true`
            wf.yaml:13:9: warning: `vars.lint` is a string, and a condition takes every string but the empty one as true, `'false'` too [string-flag]
               |
            13 |     if: vars.lint
               |         ^^^^^^^^^ compare it with a boolean: `vars.lint == true`
            2 warnings in 1 file

            """, "\(validate)")
        let run = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("linting") && !run.stdout.contains("shipping"), "\(run)")
        #expect(try box.run(["validate", "--strict", "wf.yaml"]).status == 1)
    }

    /// A status compared with a string that is no status is always false (`!=`: true): a
    /// warning, with the status meant (GitHub Actions' `success`/`failure` too). The run
    /// still runs (warnings do not stop it), and `--strict` makes it an error.
    @Test func aStatusComparedWithNoStatusIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
              - print: typo
                if: steps.a.status == 'sucess'
              - print: actions habit
                if: "'failure' != steps.a.status"
              - print: right
                if: steps.a.status == 'succeeded' && run.status == 'running'
            finally:
              - print: bogus
                if: run.status == 'done'
              - print: no run times out
                if: run.status == 'timeout'
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 0, "\(validate)")
        let expected = [
            ("wf.yaml:5:27: warning: `sucess` is not a status `steps.a.status` can have, so this comparison is always false [unknown-status]",
             "did you mean `succeeded`?"),
            ("wf.yaml:7:10: warning: `failure` is not a status `steps.a.status` can have, so this comparison is always true [unknown-status]",
             "did you mean `failed`?"),
            ("wf.yaml:12:23: warning: `done` is not a status `run.status` can have, so this comparison is always false [unknown-status]",
             "the statuses are `running`, `succeeded`, `failed`, `cancelled`"),
            // GitHub's `timeout` is `timed_out` for a step, which a run never is: the list.
            ("wf.yaml:14:23: warning: `timeout` is not a status `run.status` can have, so this comparison is always false [unknown-status]",
             "14 |     if: run.status == 'timeout'\n   |                       ^^^^^^^^^ the statuses are `running`, `succeeded`, `failed`, `cancelled`\n"),
        ]
        for (line, help) in expected {
            #expect(validate.stderr.contains(line + "\n"), "\(line)\n\(validate)")
            #expect(validate.stderr.contains(help), "\(help)\n\(validate)")
        }
        #expect(validate.stdout == "wf.yaml: valid\n" && validate.stderr.hasSuffix("4 warnings in 1 file\n"), "\(validate)")
        #expect(try box.run(["validate", "--strict", "wf.yaml"]).status == 1)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("actions habit") && run.stdout.contains("right") && !run.stdout.contains("typo"), "\(run)")

        // A step's list holds the states an ended step has; a step that is not there has
        // its error, and no warning besides.
        try box.write("other.yaml", """
            steps:
              - name: a
                shell: "true"
              - print: x
                if: steps.a.status != 'bogus'
              - print: y
                if: steps.zz.status == 'bogus'
            """)
        let other = try box.run(["validate", "other.yaml"])
        #expect(other.stderr.contains("the statuses are `succeeded`, `failed`, `timed_out`, `cancelled`, `skipped`, `undone`, `undo_failed`\n"), "\(other)")
        #expect(other.stderr.contains("other.yaml:7:15: error: no step named `zz` in this workflow [unknown-reference]"), "\(other)")
        #expect(other.stderr.hasSuffix("1 error, 1 warning in 1 file\n"), "\(other)")
    }

    /// `allowed` values are matched scalar for scalar, as `==` in expressions: `e` with a
    /// combining accent is not the precomposed `é` the list allows (the shell, a file name,
    /// `[ "$a" = "$b" ]` tell them apart), at validation and when the value comes at run time.
    /// A misspelt `steps` holding a list (`stepz:`) is read in its place when there is no
    /// `steps`: the errors inside it show at once, and "the workflow has no `steps`" is not
    /// said beside the unknown key's "did you mean". Before, its steps were never read, so
    /// their errors came one fix later. With a `steps` there too, it is only unknown.
    @Test func aMisspeltStepsKeyIsReadForTheErrorsInside() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            stepz:
              - shell: echo
                timeot: 5s
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr.contains("wf.yaml:1:1: error: unknown key `stepz` in the workflow [unknown-key]"), "\(validate)")
        #expect(validate.stderr.contains("did you mean `steps`?"), "\(validate)")
        #expect(validate.stderr.contains("wf.yaml:3:5: error: unknown key `timeot` in a `shell` step [unknown-key]"), "\(validate)")
        #expect(!validate.stderr.contains("has no `steps`"), "\(validate)")
        #expect(validate.stderr.hasSuffix("2 errors in 1 file\n"), "\(validate)")
        try box.write("both.yaml", """
            steps:
              - shell: echo
            stepz:
              - { shell: echo, timeot: 5s }
            """)
        let both = try box.run(["validate", "both.yaml"])
        #expect(both.status == 1 && both.stderr.hasSuffix("1 error in 1 file\n"), "\(both)")
    }

    /// A group's option written one level too deep, among its last step's keys, is that
    /// step's and misplaced there; the help says which column it belongs in. Where
    /// indentation is not the slip (a flow mapping, a group that does not take the option,
    /// a `finally` list) the error has no such help.
    @Test func aGroupOptionIndentedUnderItsLastStepSaysWhereItBelongs() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: tests
                concurrent:
                  - shell: make unit
                  - shell: make e2e
                    max_parallel: 1
                    fail_fast: false
              - sequential:
                  - shell: make package
                    finally:
                      - print: packaged
              - shell: make lint
                finally:
                  - print: bye
              - sequential:
                  - { shell: make docs, max_parallel: 2 }
                  - shell: make site
                    max_parallel: 2
              - shell: make clean
                max_parallel: 2
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        let group = "here it is this step's option; for the `concurrent` group, start it in the column of `concurrent:` (column 5)"
        let expected = [
            "wf.yaml:6:9: error: `max_parallel` is an option of `concurrent` steps, not of `shell` steps [misplaced-option]\n"
                + "  |\n6 |         max_parallel: 1\n  |         ^^^^^^^^^^^^ \(group)\n",
            "7 |         fail_fast: false\n  |         ^^^^^^^^^ \(group)\n",
            "10 |         finally:\n   |         ^^^^^^^ here it is this step's option; for the `sequential` group, "
                + "start it in the column of `sequential:` (column 5)\n",
            "13 |     finally:\n   |     ^^^^^^^ here it is this step's option; the workflow's `finally` starts in the column of `steps:` (column 1)\n",
        ]
        for text in expected { #expect(validate.stderr.contains(text), "\(text)\n\(validate)") }
        // A sequential group takes no `max_parallel`, and a flow mapping is not indentation.
        for line in ["16 |       - { shell: make docs, max_parallel: 2 }", "18 |         max_parallel: 2", "20 |     max_parallel: 2"] {
            #expect(validate.stderr.contains(line + "\n"), "\(line)\n\(validate)")
        }
        #expect(validate.stderr.components(separatedBy: "here it is this step's option").count == 5, "\(validate)")
        #expect(validate.stderr.hasSuffix("7 errors in 1 file\n"), "\(validate)")
    }

    /// A workflow key indented into the step above it is not a misspelt step option:
    /// `vars` under the last step got "did you mean `tags`?". The help says where it goes.
    @Test func aWorkflowKeyOnAStepSaysItGoesAtTheTopLevel() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: make build
              - print: done
                vars:
                  target: prod
                defaults:
                  timeout: 5m
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        for (line, key) in [(4, "vars"), (6, "defaults")] {
            let text = "wf.yaml:\(line):5: error: unknown key `\(key)` in a `print` step [unknown-key]\n"
            let help = "`\(key)` is a key of the workflow: write it at the top level, in the column of `steps:`\n"
            #expect(validate.stderr.contains(text) && validate.stderr.contains(help), "\(key)\n\(validate)")
        }
        #expect(!validate.stderr.contains("did you mean"), "\(validate)")
        #expect(validate.stderr.hasSuffix("2 errors in 1 file\n"), "\(validate)")
    }

    /// GitHub Actions' spellings of a step's result get flow's: a job's `needs` is an
    /// earlier step, and `outcome`, `conclusion` (a needed job's `result`) are `status`.
    /// `needs.build.result` got only "references start with …", `steps.build.outcome`
    /// the list of fields.
    @Test func gitHubActionsStepReferencesGetFlowsSpelling() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: echo "v=1" >> "$FLOW_OUTPUT"
              - print: "${{ needs.build.result }}"
              - print: "${{ needs.build.outputs.v }}"
              - print: x
                if: steps.build.outcome == 'success'
              - print: "${{ steps.build.conclusion }}"
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        let status = "flow calls this `steps.build.status`; its values are flow's states, such as `succeeded` and `failed`"
        let expected = [
            "4 |   - print: \"${{ needs.build.result }}\"\n  |                 ^^^^^^^^^^^^^^^^^^ flow calls this `steps.build.status`\n",
            "5 |   - print: \"${{ needs.build.outputs.v }}\"\n  |                 ^^^^^^^^^^^^^^^^^^^^^ flow calls this `steps.build.outputs.v`\n",
            "wf.yaml:7:21: error: steps have no field `outcome` [unknown-reference]\n  |\n7 |     if: steps.build.outcome == 'success'\n"
                + "  |                     ^^^^^^^ \(status)\n",
            "8 |   - print: \"${{ steps.build.conclusion }}\"\n  |                             ^^^^^^^^^^ \(status)\n",
        ]
        for text in expected { #expect(validate.stderr.contains(text), "\(text)\n\(validate)") }
        #expect(validate.stderr.hasSuffix("4 errors in 1 file\n"), "\(validate)")
    }

    /// `params` written as a list of names is one error whose help shows the mapping: the
    /// names count as declared, where each use of them was reported besides ("action `a`
    /// has no parameter `env`", at `with:` "it takes no parameters").
    /// `exit_codes: 75` (or `"75, 76"`) says how to write the list, not only that it is one.
    @Test func exitCodesWithoutAListShowsTheList() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: "true"
                retry: { limit: 2, exit_codes: 75 }
              - shell: "true"
                retry: { limit: 2, exit_codes: "75, 76" }
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr.contains("^^ write it as a list, even for one code: `exit_codes: [75]`"), "\(validate)")
        #expect(validate.stderr.contains("write it as a list, even for one code: `exit_codes: [75, 76]`"), "\(validate)")
    }

    @Test func paramsGivenAsAListIsOneErrorWithTheMapping() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params: [env, region]
                steps:
                  - print: "${{ params.env }} in ${{ params.region }}"
            steps:
              - use: deploy
                with: { env: prod }
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr == """
            wf.yaml:3:13: error: `params` must be a mapping, found a list [wrong-type]
              |
            3 |     params: [env, region]
              |             ^^^^^^^^^^^^^ declare each parameter as a key of `params`, on a line of its own: `env:`, `region:`
            1 error in 1 file

            """, "\(validate)")
    }

    /// A parameter written on the `use` step itself, beside `use:`, says to pass it under
    /// `with:` (it had no help); a key that is no parameter keeps its "did you mean".
    @Test func aParameterBesideUseSaysToPassItUnderWith() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - use: notify
                channel: ops
                tiemout: 5s
            actions:
              notify:
                params:
                  channel: { required: true }
                steps:
                  - print: "to ${{ params.channel }}"
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr.contains("""
            wf.yaml:3:5: error: unknown key `channel` in a `use` step [unknown-key]
              |
            3 |     channel: ops
              |     ^^^^^^^ `channel` is a parameter of action `notify`: pass it under `with:` (`with: { channel: … }`)

            """), "\(validate)")
        #expect(validate.stderr.contains("4 |     tiemout: 5s\n  |     ^^^^^^^ did you mean `timeout`?\n"), "\(validate)")
    }

    /// A variable or parameter used only in an expression with a syntax error is still
    /// used: it got "is never used" beside the syntax error, though it is right there. A
    /// name used nowhere keeps its warning.
    @Test func aNameInAnUnreadableExpressionIsNotUnused() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              target: prod
              region: eu
              spare: x
            actions:
              greet:
                params:
                  who: {}
                  unused: {}
                steps:
                  - print: "hi ${{ params.who = 'x' }}"
            steps:
              - print: deploying
                if: ${{ vars.target }} == 'prod'
              - print: "${{ vars.region ) }}"
              - use: greet
                with: { who: me }
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        for name in ["target", "region", "who"] {
            #expect(!validate.stderr.contains("`\(name)` is never used"), "\(name)\n\(validate)")
        }
        #expect(validate.stderr.contains("wf.yaml:4:3: warning: variable `spare` is never used [unused-var]"), "\(validate)")
        #expect(validate.stderr.contains("wf.yaml:9:7: warning: parameter `unused` of action `greet` is never used [unused-param]"), "\(validate)")
        #expect(validate.stderr.hasSuffix("3 errors, 2 warnings in 1 file\n"), "\(validate)")
    }

    /// The same for the forms a GitHub Actions user writes that flow does not read:
    /// `vars['NAME']` (the index form, a syntax error in flow) and `if: !vars.NAME` (a
    /// negation YAML reads as a tag): each got "is never used" beside its error.
    @Test func aNameInAnIndexOrATagIsNotUnused() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              target: prod
              region: eu
              skip: ""
              spare: x
            steps:
              - print: deploying
                if: vars['target'] == 'prod'
              - print: '${{ vars[ "region" ] }}'
              - print: later
                if: !vars.skip
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        for name in ["target", "region", "skip"] {
            #expect(!validate.stderr.contains("`\(name)` is never used"), "\(name)\n\(validate)")
        }
        #expect(validate.stderr.contains("wf.yaml:5:3: warning: variable `spare` is never used [unused-var]"), "\(validate)")
        #expect(validate.stderr.contains("[unsupported-tag]"), "\(validate)")
    }

    @Test func allowedValuesAreMatchedScalarForScalar() throws {
        let box = try RunSandbox()
        let actions = """
            actions:
              greet:
                params:
                  who: { allowed: ["\u{E9}"] }
                steps:
                  - print: "hi ${{ params.who }}"
            """
        try box.write("literal.yaml", actions + "\nsteps:\n  - use: greet\n    with: { who: \"e\u{301}\" }\n")
        let literal = try box.run(["validate", "literal.yaml"])
        #expect(literal.status == 1 && literal.stderr.contains("[disallowed-param]"), "\(literal)")
        try box.write("runtime.yaml", actions + """

            steps:
              - name: a
                shell: printf 'v=e\\314\\201\\n' >> "$FLOW_OUTPUT"
                outputs: [v]
              - use: greet
                with: { who: "${{ steps.a.outputs.v }}" }
            """)
        #expect(try box.run(["validate", "runtime.yaml"]).status == 0)
        let runtime = try box.run(["run", "runtime.yaml", "--output", "prefixed"])
        #expect(runtime.status == 1 && runtime.stderr.contains("is not an allowed value of `who`"), "\(runtime)")
        // The precomposed value itself is allowed.
        try box.write("same.yaml", actions + "\nsteps:\n  - use: greet\n    with: { who: \"\u{E9}\" }\n")
        #expect(try box.run(["run", "same.yaml", "--output", "prefixed"]).status == 0)
    }

    /// A workflow file that is not there: the help names the file meant (a typo, or the
    /// name without `.yaml`), else the workflow files of that directory.
    @Test func aMissingFileGetsTheWorkflowFilesNearIt() throws {
        let box = try RunSandbox()
        try box.write("ci/release.yaml", "steps:\n  - print: hi\n")
        try box.write("ci/deploy.yml", "steps:\n  - print: hi\n")
        try box.write("ci/notes.txt", "")
        let cases: [([String], String)] = [
            (["validate", "ci/relase.yaml"], "help: did you mean `ci/release.yaml`?\n"),
            (["run", "ci/release"], "help: did you mean `ci/release.yaml`?\n"),
            (["plan", "ci/other"], "help: the workflow files in `ci/` are `ci/deploy.yml`, `ci/release.yaml`\n"),
        ]
        for (arguments, help) in cases {
            let r = try box.run(arguments)
            #expect(r.status == (arguments[0] == "validate" ? 1 : 2), "\(r)")
            #expect(r.stderr.contains("error: cannot read `\(arguments[1])`: No such file or directory [file-unreadable]\n" + help), "\(r)")
        }
        // Nothing near: no help line.
        let far = try box.run(["validate", "ci/nothing-like-it.yaml"])
        #expect(!far.stderr.contains("help:"), "\(far)")
        let json = try box.run(["validate", "--format", "json", "ci/relase.yaml"])
        #expect(json.stdout.contains(#""help": "did you mean `ci/release.yaml`?""#), "\(json)")
    }

    /// `flow validate DIR` checks the workflow files in it (`*.yaml`, `*.yml`, in name
    /// order; not subdirectories, hidden files or other files); a directory that holds none is an
    /// error, so a CI check of a misspelt or emptied directory does not pass. `flow run
    /// DIR` names the files it could run.
    @Test func aDirectoryStandsForItsWorkflowFiles() throws {
        let box = try RunSandbox()
        try box.write("ci/release.yaml", "steps:\n  - print: hi\n")
        try box.write("ci/broken.yml", "steps:\n  - shel: x\n")
        try box.write("ci/notes.txt", "not yaml")
        // A hidden file is not one of `*.yaml`, as for a shell's glob (a tool's own config).
        try box.write("ci/.pre-commit-config.yaml", "repos: []\n")
        try box.write("ci/nested/deeper.yaml", "steps:\n  - shel: x\n")
        try box.write("empty/README", "")
        let r = try box.run(["validate", "ci/"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdout == "ci/release.yaml: valid\n", "\(r)")
        #expect(r.stderr.hasPrefix("ci/broken.yml:2:5: error: unknown key `shel` in a step [unknown-key]"), "\(r)")
        #expect(!r.stderr.contains("deeper"), "\(r)")
        #expect(r.stderr.hasSuffix("1 error in 1 of 2 files\n"), "\(r)")
        let github = try box.run(["validate", "--format", "github", "ci"])
        #expect(github.stdout.contains("::error file=ci/broken.yml,line=2,col=5"), "\(github)")
        let empty = try box.run(["validate", "empty", "ci/release.yaml"])
        #expect(empty.status == 1, "\(empty)")
        #expect(empty.stderr.contains("empty:1:1: error: cannot read `empty`: the directory holds no workflow files (`*.yaml`, `*.yml`) [file-unreadable]"), "\(empty)")
        let run = try box.run(["run", "ci"])
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("error: cannot read `ci`: it is a directory [file-unreadable]\nhelp: a workflow file is wanted; the ones in `ci` are `ci/broken.yml`, `ci/release.yaml`\n"), "\(run)")
    }

    /// `flow run` (or `plan`, `validate`) without FILE names the workflow files of the
    /// current directory under the usage error, as `task` and `just` alone would find theirs.
    @Test func aMissingFileArgumentNamesTheWorkflowFilesHere() throws {
        let box = try RunSandbox()
        try box.write("ci/release.yaml", "steps:\n  - print: hi\n")
        try box.write("ci/deploy.yml", "steps:\n  - print: hi\n")
        try box.write("empty/notes.txt", "")
        for command in ["run", "plan", "validate"] {
            let r = try box.run([command], in: "ci")
            #expect(r.status == 2, "\(r)")
            #expect(r.stderr.contains("\n       The workflow files here are `deploy.yml`, `release.yaml`.\nUsage: flow \(command)"), "\(r)")
        }
        let none = try box.run(["run"], in: "empty")
        #expect(none.status == 2, "\(none)")
        #expect(!none.stderr.contains("workflow files here"), "\(none)")
    }

    /// A name with a line break in it is listed escaped there, as everywhere else: the usage
    /// error keeps its own line breaks, and the name's LF split its line (`\r` and ESC were
    /// escaped already). Found by the hostile-input review.
    @Test func aListedWorkflowFileNameWithALineBreakIsEscaped() throws {
        let box = try RunSandbox()
        try box.write("ci/a\nb.yaml", "steps:\n  - print: hi\n")
        try box.write("ci/c\u{1B}d.yaml", "steps:\n  - print: hi\n")
        for command in ["run", "validate"] {
            let r = try box.run([command], in: "ci")
            #expect(r.status == 2, "\(r)")
            #expect(r.stderr.contains("\n       The workflow files here are `a\\u{A}b.yaml`, `c\\u{1B}d.yaml`.\nUsage: flow \(command)"), "\(r)")
        }
        let run = try box.run(["run", "ci"])
        #expect(run.stderr.contains("the ones in `ci` are `ci/a\\u{A}b.yaml`, `ci/c\\u{1B}d.yaml`\n"), "\(run)")
    }

    /// The help for a missing file names only files flow could run, as it shows names: a
    /// dangling link or a directory called `*.yaml` was offered as the file meant (a link
    /// `gone.yaml` to nothing: "did you mean `gone.yaml`?"), and a directory or file whose
    /// name is not UTF-8 was looked for under its shown name, or shown with U+FFFD.
    @Test func theMissingFileHelpNamesOnlyFilesThatCanBeRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-missing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = #"""
            d="$(printf 'n\376')"; mkdir "$d" "$d/lib.yaml"
            printf 'steps:\n  - print: hi\n' > "$d/release.yaml"; cp "$d/release.yaml" "$d/$(printf 'caf\351.yaml')"
            ln -s nowhere "$d/gone.yaml"; ln -s release.yaml "$d/linked.yaml"
            "$0" validate "$d/relase.yaml" "$d/x" "$d/gone.yaml" "$d/lib"
            """#
        let result = try FlowBinary.run([], in: directory, shellScript: script)
        #expect(result.stderr == """
            n\\xFE/relase.yaml:1:1: error: cannot read `n\\xFE/relase.yaml`: No such file or directory [file-unreadable]
            help: did you mean `n\\xFE/release.yaml`?
            n\\xFE/x:1:1: error: cannot read `n\\xFE/x`: No such file or directory [file-unreadable]
            help: the workflow files in `n\\xFE/` are `n\\xFE/caf\\xE9.yaml`, `n\\xFE/linked.yaml`, `n\\xFE/release.yaml`
            n\\xFE/gone.yaml:1:1: error: cannot read `n\\xFE/gone.yaml`: No such file or directory [file-unreadable]
            n\\xFE/lib:1:1: error: cannot read `n\\xFE/lib`: No such file or directory [file-unreadable]
            help: the workflow files in `n\\xFE/` are `n\\xFE/caf\\xE9.yaml`, `n\\xFE/linked.yaml`, `n\\xFE/release.yaml`
            4 errors in 4 files

            """, "\(result)")
    }

    /// A NUL in a command, `dir` or `env` value would end the C string the kernel gets:
    /// `echo kept\0; touch ran` ran `echo kept` alone, and said nothing. Now it is an error
    /// at the NUL, and nothing runs.
    @Test func aNULWhereACStringIsDueIsAnError() throws {
        let box = try RunSandbox()
        try FileManager.default.createDirectory(atPath: box.path("sub"), withIntermediateDirectories: true)
        try box.write("wf.yaml", #"""
            steps:
              - shell: "echo kept\0; touch ran"
              - shell: touch "$V"
                env: { V: "ran2\0dropped" }
              - shell: touch ran3
                dir: "sub\0/nonexistent"
            """#)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        for line in ["wf.yaml:2:22: error: the command contains a NUL character [invalid-value]",
                     "wf.yaml:4:20: error: the value of `V` contains a NUL character [invalid-value]",
                     "wf.yaml:6:14: error: `dir` contains a NUL character [invalid-value]"] {
            #expect(validate.stderr.contains(line + "\n"), "\(line)\n\(validate)")
        }
        let run = try box.run(["run", "wf.yaml"])
        #expect(run.status == 2, "\(run)")
        #expect(!box.exists("ran") && !box.exists("ran2") && !box.exists("sub/ran3"), "nothing ran")
    }

    /// `stdin` is written to a pipe as bytes, not passed as a C string: a NUL there is kept.
    @Test func aNULInStdinReachesTheProcess() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            steps:
              - shell: cat > got
                stdin: "a\0b"
            """#)
        let run = try box.run(["run", "wf.yaml", "--no-journal"])
        #expect(run.status == 0, "\(run)")
        #expect((try? Data(contentsOf: URL(fileURLWithPath: box.path("got")))) == Data([0x61, 0, 0x62]))
    }

    /// An `if` written as a block scalar, or with line breaks around its `${{ }}`, was "an
    /// `if` condition is one expression"; so was one whose string literal held `${{`. They
    /// validate now, and decide as written.
    @Test func anIfAcrossLinesOrWithBracesInAStringRuns() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            vars: { x: a }
            steps:
              - print: block-true
                if: |
                  ${{ vars.x == 'a' }}
              - print: block-false
                if: |
                  ${{ vars.x == 'b' }}
              - print: newlines
                if: "\n${{ vars.x == 'a' }}\n"
              - print: braces
                if: "${{ vars.x != '${{' }}"
              - print: bare-braces
                if: "vars.x == '${{'"
            """#)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 0 && validate.stderr.isEmpty, "\(validate)")
        let run = try box.run(["run", "wf.yaml", "--no-journal", "--output", "raw"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines == ["block-true", "newlines", "braces"], "\(run)")
    }

    /// `dir: ""` validated, and every run failed on it (`working directory `` does not
    /// exist`, exit 127); the same for `defaults: {dir: ""}`. Now both are errors.
    @Test func anEmptyDirIsAnError() throws {
        let box = try RunSandbox()
        try box.write("step.yaml", """
            steps:
              - shell: touch ran
                dir: ""
            """)
        try box.write("defaults.yaml", """
            defaults: { dir: "" }
            steps:
              - shell: touch ran
            """)
        for (file, spot) in [("step.yaml", "3:10"), ("defaults.yaml", "1:18")] {
            let validate = try box.run(["validate", file])
            #expect(validate.status == 1, "\(validate)")
            #expect(validate.stderr.hasPrefix("\(file):\(spot): error: `dir` is empty [invalid-value]\n"), "\(validate)")
            let run = try box.run(["run", file, "--no-journal"])
            #expect(run.status == 2, "\(run)")
        }
        #expect(!box.exists("ran"))
    }

    /// GitHub Actions' functions called with arguments were "`hashFiles()` takes no
    /// arguments" (as if it existed) or "unexpected character `,`"; `if: "TRUE"` got "did
    /// you mean `run`?". Each now says what is wrong.
    @Test func functionsFlowDoesNotHaveAndLiteralsInTheWrongCase() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            env: { LABELS: x }
            steps:
              - print: a
                if: "hashFiles('go.sum') != ''"
              - print: b
                if: "contains(env.LABELS, 'deploy')"
              - print: c
                if: "TRUE"
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr == """
            wf.yaml:4:10: error: unknown function `hashFiles()` [expression-syntax]
              |
            4 |     if: "hashFiles('go.sum') != ''"
              |          ^^^^^^^^^^^^^^^^^^^ the functions are success(), failure(), always() and cancelled()
            wf.yaml:6:10: error: unknown function `contains()` [expression-syntax]
              |
            6 |     if: "contains(env.LABELS, 'deploy')"
              |          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ the functions are success(), failure(), always() and cancelled()
            wf.yaml:8:10: error: unknown reference `TRUE` [unknown-reference]
              |
            8 |     if: "TRUE"
              |          ^^^^ did you mean `true`?
            3 errors in 1 file

            """, "\(validate)")
    }

    /// `<`, `>`, `<=` and `>=` were "unexpected character" with no help (`=` got "use
    /// `==`"): each now says flow compares only with `==`/`!=` and where numbers can be.
    @Test func orderingOperatorsSayWhatTheGrammarHas() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - print: a
                if: "vars.n >= 3"
              - print: "${{ vars.n < 2 }}"
              - shell: echo ${{ vars.n>1 }}
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr == """
            wf.yaml:3:17: error: unexpected `>=` [expression-syntax]
              |
            3 |     if: "vars.n >= 3"
              |                 ^^ flow compares only with `==` and `!=`; compare numbers in a shell step: `[ "$N" -ge 10 ]`
            wf.yaml:4:24: error: unexpected `<` [expression-syntax]
              |
            4 |   - print: "${{ vars.n < 2 }}"
              |                        ^ flow compares only with `==` and `!=`; compare numbers in a shell step: `[ "$N" -lt 10 ]`
            wf.yaml:5:27: error: unexpected `>` [expression-syntax]
              |
            5 |   - shell: echo ${{ vars.n>1 }}
              |                           ^ flow compares only with `==` and `!=`; compare numbers in a shell step: `[ "$N" -gt 10 ]`
            3 errors in 1 file

            """, "\(validate)")
    }

    /// `if: "success("` (and `success( && b`) said "`success()` takes no arguments": the
    /// `)` is missing, so that is what it says now, as for any unclosed `(`. A call with
    /// something between its parentheses still takes no arguments.
    @Test func anUnclosedStatusCallIsAMissingParenthesis() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - print: a
                if: "success("
              - print: b
                if: ${{ always( && true }}
              - print: c
                if: failure(1)
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr == """
            wf.yaml:3:18: error: expected `)`, found the end of the expression [expression-syntax]
              |
            3 |     if: "success("
              |                  ^ the `(` at column 17 is not closed
            wf.yaml:5:21: error: expected `)`, found `&&` [expression-syntax]
              |
            5 |     if: ${{ always( && true }}
              |                     ^^ the `(` at column 19 is not closed
            wf.yaml:7:16: error: `failure()` takes no arguments [expression-syntax]
              |
            7 |     if: failure(1)
              |                ^^
            3 errors in 1 file

            """, "\(validate)")
    }

    /// `${{ 100000000000000000000 }}` printed `1e+20`, `${{ 123456789012345678 }}` another
    /// number, and two 400-digit literals were both infinity (and equal). A literal beyond
    /// 2^53 is now an error; whole numbers up to it print as integers.
    @Test func numberLiteralsAreExactOrAnError() throws {
        let box = try RunSandbox()
        try box.write("big.yaml", """
            steps:
              - print: "${{ 123456789012345678 }}"
            """)
        try box.write("ok.yaml", """
            steps:
              - print: "${{ 9007199254740992 }} ${{ -1000000000000000 }} ${{ 2.50 }} ${{ 3.0 }}"
            """)
        let validate = try box.run(["validate", "big.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr.hasPrefix("big.yaml:2:17: error: number `123456789012345678` is too large [expression-syntax]\n"),
                "\(validate)")
        #expect(try box.run(["run", "big.yaml", "--no-journal"]).status == 2)
        let run = try box.run(["run", "ok.yaml", "--no-journal", "--output", "raw"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines == ["9007199254740992 -1000000000000000 2.5 3"], "\(run)")
    }

    /// The steps of an `undo` list run in order, so a later one may use an earlier one's
    /// outputs; validation said "later-reference" though `undo: {sequential: […]}` passed.
    @Test func anUndoListStepSeesTheEarlierOnes() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  - name: ub
                    shell: echo "k=z" >> "$FLOW_OUTPUT"
                  - name: ub2
                    print: "ub said ${{ steps.ub.outputs.k }}"
              - shell: exit 1
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 0 && validate.stderr.isEmpty, "\(validate)")
        let run = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdoutLines.contains("ub2     | ub said z"), "\(run)")
    }

    /// `with: { y: [1] }` on a required parameter gave `wrong-type` and a false
    /// `missing-param`; `outputs: [k, k]` was not reported at all.
    @Test func aWrongTypedParamIsNotMissingAndADuplicateOutputIsReported() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              a:
                params:
                  y: { required: true }
                steps:
                  - print: "${{ params.y }}"
            steps:
              - use: a
                with: { y: [1] }
              - shell: "true"
                outputs: [k, k]
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr == """
            wf.yaml:9:16: error: the value of `y` must be a string, found a list [wrong-type]
              |
            9 |     with: { y: [1] }
              |                ^^^
            wf.yaml:11:18: error: duplicate output key `k` [duplicate-key]
               |
            11 |     outputs: [k, k]
               |                  ^ remove one of the two
            wf.yaml:11:15: note: first `k` is here
               |
            11 |     outputs: [k, k]
               |               ^
            2 errors in 1 file

            """, "\(validate)")
    }

    /// make's and just's `@echo` (and `%`) at the start of a value was libyaml's bare "found
    /// character that cannot start any token", with no hint; the backtick hint looked at the
    /// byte at the column, so a non-ASCII character earlier on the line (columns count
    /// characters) lost it, as a non-ASCII key lost the too-deep-indentation hint. Each
    /// reserved character now gets its hint, wherever it is.
    @Test func aValueStartingWithAReservedCharacterGetsAHint() throws {
        let box = try RunSandbox()
        let cases: [(String, String, String)] = [
            ("steps:\n  - shell: @echo hi\n", "2:12",
             "quote values that start with `@`; in a command, drop make's and just's `@`: it is not shell syntax"),
            ("steps:\n  - @make test\n", "2:5",
             "quote values that start with `@`; in a command, drop make's and just's `@`: it is not shell syntax"),
            ("steps:\n  - print: %d done\n", "2:12", "quote values that start with `%`"),
            ("steps:\n  - { print: \"caf\u{E9} \u{1F680}\", shell: `date` }\n", "2:31",
             "quote values that start with a backtick"),
        ]
        for (index, (text, spot, help)) in cases.enumerated() {
            let file = "wf\(index).yaml"
            try box.write(file, text)
            let validate = try box.run(["validate", file])
            #expect(validate.status == 1, "\(validate)")
            #expect(validate.stderr.hasPrefix("\(file):\(spot): error: invalid YAML: found character that cannot start any "
                + "token while scanning for the next token [yaml-syntax]\n"), "\(validate)")
            #expect(validate.stderr.contains("^ \(help)\n"), "\(validate)")
            let github = try box.run(["validate", "--format", "github", file])
            // GitHub's workflow commands escape `%` as `%25`.
            let escaped = help.replacingOccurrences(of: "%", with: "%25")
            #expect(github.stdout.contains("line=\(spot.split(separator: ":")[0]),col=\(spot.split(separator: ":")[1]),")
                && github.stdout.contains("(\(escaped))"), "\(github)")
        }
        // The indentation hint finds the key before the colon by its column too.
        try box.write("deep.yaml", "steps:\n  - name: build\n    shell: make\n      d\u{E9}lai: 5m\n")
        let deep = try box.run(["validate", "deep.yaml"])
        #expect(deep.stderr.contains("^^^^^ `d\u{E9}lai` is indented 6 spaces, the line above 4: YAML reads it as more of "
            + "that line's value"), "\(deep)")
    }

    /// An empty `steps:` of the workflow said "add at least one step, or remove the group":
    /// there is no group, and without `steps` the workflow is invalid. An empty `finally`
    /// (the workflow's or a group's) said the same, where removing the group would throw
    /// its steps away with it. Each help now names what can go, if anything.
    @Test func anEmptyStepListSaysWhatToRemove() throws {
        let box = try RunSandbox()
        let cases: [(String, [String])] = [
            ("steps: []\n", ["wf0.yaml:1:8: error: `steps` is empty [empty-group]\n", "^^ add at least one step\n"]),
            ("steps:\n", ["wf1.yaml:1:1: error: `steps` is empty [empty-group]\n", "^^^^^ add at least one step\n"]),
            ("steps:\n  - print: hi\nfinally: []\n",
             ["wf2.yaml:3:10: error: `finally` is empty [empty-group]\n", "^^ add at least one step, or remove `finally`\n"]),
            ("steps:\n  - concurrent:\n      - print: hi\n    finally:\n",
             ["wf3.yaml:4:5: error: `finally` is empty [empty-group]\n", "^^^^^^^ add at least one step, or remove `finally`\n"]),
            ("steps:\n  - sequential: []\n",
             ["wf4.yaml:2:17: error: `sequential` is empty [empty-group]\n", "^^ add at least one step, or remove the group\n"]),
        ]
        for (index, (text, expected)) in cases.enumerated() {
            let file = "wf\(index).yaml"
            try box.write(file, text)
            let validate = try box.run(["validate", file])
            #expect(validate.status == 1, "\(validate)")
            #expect(validate.stderr.hasPrefix(expected[0]) && validate.stderr.contains(expected[1]), "\(validate)")
        }
    }

    /// `- delay:5s` (no space after the colon) is YAML for the string `delay:5s`: it was
    /// valid, planned as `shell: delay:5s` and failed at run time with "not found", exit
    /// 127. Now a warning says what happened; a quoted command, or one that does not start
    /// with a kind key, is left alone.
    @Test func aKindKeyRunIntoItsValueIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - print:hi
              - "use:deploy"
              - docker:build
            finally:
              - delay:1s
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 0, "\(validate)")
        #expect(validate.stdout == "wf.yaml: valid\n", "\(validate)")
        #expect(validate.stderr == """
            wf.yaml:2:5: warning: this step is the command `print:hi`: `print:` is a key only with a space after it [colon-without-space]
              |
            2 |   - print:hi
              |     ^^^^^^^^ write `print: hi`, or quote the command if it is one
            wf.yaml:6:5: warning: this step is the command `delay:1s`: `delay:` is a key only with a space after it [colon-without-space]
              |
            6 |   - delay:1s
              |     ^^^^^^^^ write `delay: 1s`, or quote the command if it is one
            2 warnings in 1 file

            """, "\(validate)")
        let json = try box.run(["validate", "--format", "json", "--strict", "wf.yaml"])
        #expect(json.status == 1, "\(json)")
        #expect(json.stdout.contains("\"line\": 2,\n    \"column\": 5,") && json.stdout.contains("\"code\": \"colon-without-space\""),
                "\(json)")
        // A warning does not stop a run: flow says it before the steps start.
        let run = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed"])
        #expect(run.stderr.hasPrefix("wf.yaml:2:5: warning: this step is the command `print:hi`"), "\(run)")
    }

    /// Docker Compose's `x-common: &c` (and GitLab CI's `.defaults: &d`) is where those
    /// users keep anchors; flow said only "unknown key `x-common` in the workflow", with no
    /// help. The help now says flow has no extension keys and what to do instead.
    @Test func anExtensionKeyForAnchorsSaysWhereAnchorsGo() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            x-common: &common
              timeout: 5s
            .hidden: &hidden
              retry: 2
            steps:
              - shell: "true"
                <<: [*common, *hidden]
            """)
        let help = "flow has no extension keys: options every shell step shares go in `defaults`; else anchor the first "
            + "step or value that uses it and reuse it with `*name` or `<<: *name`"
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr.hasPrefix("wf.yaml:1:1: error: unknown key `x-common` in the workflow [unknown-key]\n"),
                "\(validate)")
        #expect(validate.stderr.contains("^^^^^^^^ \(help)\n"), "\(validate)")
        #expect(validate.stderr.contains("wf.yaml:3:1: error: unknown key `.hidden` in the workflow [unknown-key]\n"),
                "\(validate)")
        #expect(validate.stderr.contains("^^^^^^^ \(help)\n") && validate.stderr.hasSuffix("2 errors in 1 file\n"),
                "\(validate)")
        let json = try box.run(["validate", "--format", "json", "wf.yaml"])
        #expect(json.stdout.components(separatedBy: "\"help\": \"\(help)\"").count == 3, "\(json)")
    }

    /// Two GitHub Actions habits got a wrong or no hint: `on: push` was "did you mean
    /// `env`?", and `name: Build app` (free text there) only listed the name rules. Now
    /// `on` says flow has no triggers and a name with a space says where free text goes.
    @Test func gitHubActionsTriggersAndStepTitlesGetAHint() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            on: push
            steps:
              - name: Build app
                shell: make
              - name: 1st
                shell: make
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr == """
            wf.yaml:1:1: error: unknown key `on` in the workflow [unknown-key]
              |
            1 | on: push
              | ^^ flow has no triggers: a workflow runs when `flow run` is called (from CI, a hook, a shell)
            wf.yaml:3:11: error: invalid step name `Build app` [invalid-name]
              |
            3 |   - name: Build app
              |           ^^^^^^^^^ names start with a letter or `_` and hold letters, digits, `_` and `-`; free text goes in `description`
            wf.yaml:5:11: error: invalid step name `1st` [invalid-name]
              |
            5 |   - name: 1st
              |           ^^^ names start with a letter or `_` and hold letters, digits, `_` and `-`
            3 errors in 1 file

            """, "\(validate)")
    }

    /// The help for a file that is not UTF-8 was "convert the file, e.g. with `iconv -t
    /// UTF-8`": iconv then reads it as the locale's encoding (UTF-8) and stops at the same
    /// byte, "illegal input sequence". The help now names a source encoding, UTF-16 when
    /// the file starts with its byte order mark. Each suggested command really converts.
    ///
    /// UTF-16 and UTF-32 without a byte order mark are ASCII and NUL bytes, valid UTF-8:
    /// libyaml said "control characters are not allowed" at the first NUL. They are named
    /// now, as YAML tells them (by the NUL bytes of the first character), with the `iconv`
    /// that converts them. Noticed among the fuzzer's inputs (Tests/fuzz).
    @Test func aFileThatIsNotUTF8GetsAConversionThatWorks() throws {
        let box = try RunSandbox()
        let script = """
            printf 'steps:\\n  - print: "caf\\351"\\n' > latin1.yaml
            printf '\\377\\376s\\000t\\000e\\000p\\000s\\000:\\000\\n\\000' > utf16.yaml
            printf 's\\000t\\000e\\000p\\000s\\000:\\000\\n\\000' > utf16le.yaml
            printf '\\000\\000\\000s\\000\\000\\000:\\000\\000\\000\\n' > utf32be.yaml
            for f in latin1 utf16 utf16le utf32be; do "$0" validate $f.yaml; echo "status $?"; done 2>&1
            iconv -f LATIN1 -t UTF-8 latin1.yaml > latin1-converted.yaml && iconv -f UTF-16 -t UTF-8 utf16.yaml > utf16-converted.yaml \\
                && iconv -f UTF-16LE -t UTF-8 utf16le.yaml > utf16le-converted.yaml \\
                && iconv -f UTF-32BE -t UTF-8 utf32be.yaml > utf32be-converted.yaml && echo converted
            """
        let result = try FlowBinary.run([], in: box.root, shellScript: script)
        #expect(result.stdout.contains("""
            2 |   - print: "caf\u{FFFD}"
              |                ^ flow reads workflows as UTF-8; convert the file from its encoding, e.g. with `iconv -f LATIN1 -t UTF-8`
            1 error in 1 file
            status 1
            """), "\(result)")
        #expect(result.stdout.contains("utf16.yaml:1:1: error: file is not valid UTF-8 (byte 0xFF) [invalid-utf8]\n"), "\(result)")
        #expect(result.stdout.contains("^ the file is UTF-16 (it starts with a UTF-16 byte order mark); flow reads workflows as "
            + "UTF-8: convert it with `iconv -f UTF-16 -t UTF-8`\n"), "\(result)")
        #expect(result.stdout.contains("""
            utf16le.yaml:1:1: error: file is not valid UTF-8: it reads as UTF-16LE (a NUL byte beside each character) [invalid-utf8]
              |
            1 | s\\u{0}t\\u{0}e\\u{0}p\\u{0}s\\u{0}:\\u{0}
              | ^ flow reads workflows as UTF-8: convert it with `iconv -f UTF-16LE -t UTF-8`
            1 error in 1 file
            status 1
            """), "\(result)")
        #expect(result.stdout.contains("convert it with `iconv -f UTF-32BE -t UTF-8`\n1 error in 1 file\nstatus 1\n"), "\(result)")
        #expect(result.stdout.hasSuffix("converted\n"), "\(result)")
        #expect(box.read("latin1-converted.yaml") == "steps:\n  - print: \"caf\u{E9}\"\n")
        #expect(box.read("utf16-converted.yaml") == "steps:\n")
        #expect(box.read("utf16le-converted.yaml") == "steps:\n")
        #expect(box.read("utf32be-converted.yaml") == "s:\n")
    }

    /// `tags: lint, unit` is YAML for the one tag `lint, unit`; `--tags` splits on commas
    /// and trims spaces, so no command line could select it: validate said "valid" and
    /// `flow run --tags lint` was refused ("unknown tag `lint`; the tags are `lint, unit`").
    /// Such a tag (and one with spaces around it, or an empty one) is now an error at the
    /// tag, and the schema says so too; a list of tags selects as it should.
    @Test func aTagThatTagsCouldNotNameIsAnError() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: echo a
                tags: lint, unit
              - shell: echo b
                tags: [" e2e", "", ok]
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        for (spot, message, help) in [
            ("3:11", "the tag `lint, unit` holds a comma, which `--tags` splits on", "^^^^^^^^^^ give one tag per item of a list: `tags: [lint, unit]`"),
            ("5:12", "the tag ` e2e` has spaces around it, which `--tags` drops", "^^^^^^ write `e2e`"),
            ("5:20", "a tag is empty", "^^ remove it, or name the tag"),
        ] {
            #expect(validate.stderr.contains("wf.yaml:\(spot): error: \(message) [invalid-value]\n"), "\(validate)")
            #expect(validate.stderr.contains(help + "\n"), "\(validate)")
        }
        #expect(validate.stderr.hasSuffix("3 errors in 1 file\n"), "\(validate)")
        try box.write("fixed.yaml", """
            steps:
              - shell: echo a
                tags: [lint, unit]
              - shell: echo b
                tags: e2e
            """)
        let run = try box.run(["run", "fixed.yaml", "--tags", "lint", "--no-journal", "--output", "prefixed"])
        #expect(run.status == 0 && run.stdout == "shell@1 | a\n", "\(run)")
        let schema = try box.run(["schema"])
        #expect(schema.stdout.contains(#""pattern": "^[^, ]([^,]*[^, ])?$""#), "\(schema.stdout)")
    }

    /// `delay: 10 s`, `timeout: 1min`, `retry: {delay: 7d}`: each got only "write e.g.
    /// `30s`, `1m30s`, `250ms` or a number of seconds", and the user had to find the
    /// difference. Each now gets "did you mean" with flow's spelling; a value that is no
    /// duration at all keeps the examples.
    @Test func aDurationWrittenAnotherWayGetsADidYouMean() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - delay: 10 s
              - shell: make
                timeout: 1min
                retry: { limit: 1, delay: 30m1h }
              - delay: soon
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        for (spot, value, what, help) in [
            ("2:12", "10 s", "`delay`", "^^^^ did you mean `10s`?"),
            ("4:14", "1min", "`timeout`", "^^^^ did you mean `1m`?"),
            ("5:31", "30m1h", "`delay`", "^^^^^ did you mean `1h30m`?"),
            ("6:12", "soon", "`delay`", "^^^^ write e.g. `30s`, `1m30s`, `250ms` or a number of seconds"),
        ] {
            #expect(validate.stderr.contains("wf.yaml:\(spot): error: invalid duration `\(value)` for \(what) [invalid-duration]\n"),
                    "\(validate)")
            #expect(validate.stderr.contains(help + "\n"), "\(validate)")
        }
        let json = try box.run(["validate", "--format", "json", "wf.yaml"])
        #expect(json.stdout.contains("\"help\": \"did you mean `10s`?\""), "\(json)")
    }

    /// A mapping where steps belong (`-print: hi` without the space, go-task's named tasks,
    /// a step without its `- `) got "`steps` must be a list of steps, found a mapping" and
    /// nothing else. Each now gets a help for what it likely was.
    @Test func aMappingWhereStepsBelongSaysWhatToWrite() throws {
        let box = try RunSandbox()
        let cases: [(String, String, String)] = [
            ("steps:\n  -print: hi\n", "wf0.yaml:2:3: error: `steps` must be a list of steps, found a mapping [wrong-type]\n",
             "^ a list item needs a space after its `-`: `- print: …`\n"),
            ("steps:\n  build:\n    shell: make\n", "wf1.yaml:2:3: error: `steps` must be a list of steps, found a mapping [wrong-type]\n",
             "^ write each step as a list item starting with `- `; a step's name goes in its `name:`\n"),
            ("steps:\n  - concurrent:\n      print: hi\n",
             "wf2.yaml:3:7: error: `concurrent` must be a list of steps, found a mapping [wrong-type]\n",
             "^ write each step as a list item: `- print: …`\n"),
        ]
        for (index, (text, message, help)) in cases.enumerated() {
            try box.write("wf\(index).yaml", text)
            let validate = try box.run(["validate", "wf\(index).yaml"])
            #expect(validate.status == 1, "\(validate)")
            #expect(validate.stderr.hasPrefix(message) && validate.stderr.contains(help), "\(validate)")
        }
    }

    /// An unclosed `[` or `{` is noticed by libyaml only at the next line's colon: the
    /// error pointed there ("did not find expected ',' or ']'"), a line after the mistake,
    /// with nothing at the bracket. A note now points at the bracket left open.
    @Test func anUnclosedBracketIsShownWhereItOpened() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - print: [a, b\n  - delay: 1s\n")
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr == """
            wf.yaml:3:10: error: invalid YAML: did not find expected ',' or ']' while parsing a flow sequence [yaml-syntax]
              |
            3 |   - delay: 1s
              |          ^
            wf.yaml:2:12: note: the `[` opened here is not closed
              |
            2 |   - print: [a, b
              |            ^
            1 error in 1 file

            """, "\(validate)")
        let json = try box.run(["validate", "--format", "json", "wf.yaml"])
        #expect(json.stdout.contains("""
                "notes": [
                  {
                    "message": "the `[` opened here is not closed",
                    "line": 2,
                    "column": 12
                  }
                ]
            """), "\(json)")
    }

    /// An unknown alias as near to several anchors is offered the first of them in the
    /// file, in every run: the anchors were taken in a dictionary's order, which Swift
    /// seeds anew in each process, so the help changed from one run to the next (found by
    /// the front-end fuzzer, comparing `--format github` with `--format json`).
    @Test func anUnknownAliasIsOfferedTheFirstNearAnchorEveryTime() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            a: &a 1
            b: &b 2
            c: &c 3
            d: &d 4
            steps:
              - print: *e
            """)
        for _ in 0..<12 {
            let validate = try box.run(["validate", "wf.yaml"])
            #expect(validate.status == 1, "\(validate)")
            #expect(validate.stderr.contains("unknown alias `*e`"), "\(validate)")
            #expect(validate.stderr.contains("did you mean `*a`?"), "\(validate)")
        }
    }

    /// A var named `end` (or `else`) does not make the `{{end}}` of a `docker --format`
    /// template a `foreign-template` warning, whose help (`${{ vars.end }}`) would break
    /// the command: there it closes `{{range …}}`. A Jinja-style `{{ end }}` alone still is.
    @Test func aGoTemplatesEndIsNotAForeignPlaceholder() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              end: 2026-12-31
              Else: fallback
            steps:
              - shell: docker inspect --format '{{range .Mounts}}{{.Source}}{{end}}' api
              - shell: docker ps --format '{{if .Names}}{{.Names}}{{else}}none{{end}}'
            """)
        let r = try box.run(["validate", "wf.yaml", "--strict", "--format", "json"])
        #expect(!r.stdout.contains("foreign-template"), "\(r.stdout)")
        try box.write("jinja.yaml", """
            vars:
              end: 2026-12-31
            steps:
              - shell: echo until {{ end }}
            """)
        let jinja = try box.run(["validate", "jinja.yaml"])
        #expect(jinja.stderr.contains("jinja.yaml:4:23: warning: `{{ end }}` is just's and Jinja's (Ansible) syntax"), "\(jinja.stderr)")
    }

    /// make's `$(VERSION)` naming a var or param is a `foreign-template` warning wherever
    /// flow would leave it as text (a `print`, `env`, `dir`, `with`), and in a shell command
    /// when upper case: there the shell runs a program `VERSION`, which fails on stderr while
    /// the command goes on with an empty word (`docker build -t app:`). Lower case in a
    /// command is the shell's own command substitution (`$(date)` with a var `date`).
    @Test func makesPlaceholderNamingAVarIsAForeignTemplate() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              version: 0.1.0
              date: today
            env:
              TAG: v$(VERSION)
            actions:
              deploy:
                params:
                  ENV: { default: staging }
                steps:
                  - ./deploy.sh $(ENV) "${{ vars.date }}"
            steps:
              - shell: docker build -t app:$(VERSION) . && echo "$(date)" $$(VERSION) $((1 + 2))
                dir: build-$(version)
              - print: "built $(version)"
              - use: deploy
                with: { ENV: "$(VERSION)" }
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        let warnings = r.stderr.components(separatedBy: "\n").filter { $0.contains("[foreign-template]") }
        #expect(warnings == [
            "wf.yaml:5:9: warning: `$(VERSION)` is make's syntax: flow leaves it as text [foreign-template]",
            "wf.yaml:11:21: warning: `$(ENV)` is make's syntax: the shell runs it as a command named `ENV` [foreign-template]",
            "wf.yaml:13:32: warning: `$(VERSION)` is make's syntax: the shell runs it as a command named `VERSION` [foreign-template]",
            "wf.yaml:14:16: warning: `$(version)` is make's syntax: flow leaves it as text [foreign-template]",
            "wf.yaml:15:19: warning: `$(version)` is make's syntax: flow leaves it as text [foreign-template]",
            "wf.yaml:17:19: warning: `$(VERSION)` is make's syntax: flow leaves it as text [foreign-template]",
        ], "\(r.stderr)")
        #expect(r.stderr.contains("^^^^^^^^^^ flow writes it `${{ vars.version }}`"), "\(r.stderr)")
        #expect(r.stderr.contains("^^^^^^ flow writes it `${{ params.ENV }}`"), "\(r.stderr)")
    }

    /// Where the shell's quoting keeps `$(VERSION)` text (single quotes, a backslash, a
    /// here-document with a quoted delimiter), it prints the text rather than running a
    /// program: still flow's var written make's way, but the warning says what happens.
    @Test func quotedMakesPlaceholderIsTextToTheShell() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            vars:
              version: 0.1.0
            steps:
              - shell: echo '$(VERSION)' \$(VERSION) "$(VERSION)" "${{ vars.version }}" '$(VERSION)'
              - shell: |
                  cat <<'EOF'
                  $(VERSION)
                  EOF
            """#)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        let warnings = r.stderr.components(separatedBy: "\n").filter { $0.contains("[foreign-template]") }
        #expect(warnings == [
            "wf.yaml:4:18: warning: `$(VERSION)` is make's syntax: inside single quotes the shell leaves it as text [foreign-template]",
            "wf.yaml:4:31: warning: `$(VERSION)` is make's syntax: after a backslash the shell leaves it as text [foreign-template]",
            "wf.yaml:4:43: warning: `$(VERSION)` is make's syntax: the shell runs it as a command named `VERSION` [foreign-template]",
            "wf.yaml:4:78: warning: `$(VERSION)` is make's syntax: inside single quotes the shell leaves it as text [foreign-template]",
            "wf.yaml:7:7: warning: `$(VERSION)` is make's syntax: in a here-document with a quoted delimiter the shell leaves it as text [foreign-template]",
        ], "\(r.stderr)")
    }
}

extension ValidationEndToEndTests {
    /// A step left out for its error (GitHub's `uses:`) still declares its name, but not
    /// the `name` of its `with:` input: a reference to a step `deploy`, which there is none
    /// of, is still reported (it was hidden), and `flow run` still refuses the file.
    @Test func aNameInALeftOutStepsWithIsNoStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                uses: greet
                with:
                  name: deploy
              - shell: echo ${{ steps.deploy.status }} ${{ steps.build.status }}
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("wf.yaml:3:5: error: unknown key `uses` in a step [unknown-key]"), "\(r)")
        #expect(r.stderr.contains("wf.yaml:6:27: error: no step named `deploy` in this workflow [unknown-reference]"), "\(r)")
        #expect(!r.stderr.contains("`build`") && r.stderr.hasSuffix("2 errors in 1 file\n"), "\(r)")
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 2 && run.stdout.isEmpty, "\(run)")
    }
}

extension ValidationEndToEndTests {
    /// A go-task habit: one var built from another (`image: "${{ vars.registry }}/app"`).
    /// flow's vars are literal, so the steps got the text `${{ vars.registry }}/app` and
    /// `flow validate` said the file was valid; a param default holding `${{` already got
    /// `unexpanded-expression`, and now a var's value does too (the run still runs;
    /// `--strict` refuses it).
    @Test func anExpressionInAVarsValueIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              registry: ghcr.io/acme
              image: "${{ vars.registry }}/app"
            steps:
              - print: "pushing ${{ vars.image }}"
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 0, "\(validate)")
        #expect(validate.stderr.contains(
            "wf.yaml:3:10: warning: the value of variable `image` is literal: its `${{ … }}` is not expanded [unexpanded-expression]"),
            "\(validate)")
        #expect(validate.stderr.contains("build it in `env:`, whose values are expanded, and use `${{ env.NAME }}`"), "\(validate)")
        #expect(try box.run(["validate", "--strict", "wf.yaml"]).status == 1)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 0 && run.stdout.contains("pushing ${{ vars.registry }}/app"), "\(run)")
    }
}

extension ValidationEndToEndTests {
    /// GitHub Actions habits: `continue-on-error: ${{ … }}`, `max-parallel: ${{ … }}`.
    /// flow reads booleans and counts before the run, so they are refused; the error said
    /// "found a string" (as if the quotes were the problem) where `timeout` already said
    /// that expressions are not allowed there, and each var named in them was also
    /// "never used, use it as `${{ vars.c }}`", which is what the user had written.
    @Test func anExpressionWhereABooleanOrCountIsReadSaysExpressionsAreNotAllowed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars: {soft: "true", n: "2", t: 5s}
            steps:
              - shell: "true"
                continue_on_error: ${{ vars.soft }}
                timeout: ${{ vars.t }}
              - concurrent: [echo a, echo b]
                max_parallel: ${{ vars.n }}
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains(
            "wf.yaml:4:24: error: `continue_on_error` must be `true` or `false`; expressions are not allowed here [wrong-type]"), "\(r)")
        #expect(r.stderr.contains(
            "wf.yaml:7:19: error: `max_parallel` must be a whole number; expressions are not allowed here [wrong-type]"), "\(r)")
        #expect(r.stderr.contains("flow reads it before the run starts: write the value itself"), "\(r)")
        #expect(!r.stderr.contains("never used"), "\(r)")
        #expect(r.stderr.hasSuffix("3 errors in 1 file\n"), "\(r)")
    }
}

extension ValidationEndToEndTests {
    /// `backoff` is read before the run too, as the rest of `retry` is: an expression
    /// there says so, as `limit`'s and `delay`'s do, where it said "found a string" and
    /// called the var it names "never used, use it as `${{ vars.b }}`".
    @Test func anExpressionForBackoffSaysExpressionsAreNotAllowed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              b: "2"
            steps:
              - shell: exit 1
                retry: { limit: 1, backoff: "${{ vars.b }}" }
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains(
            "wf.yaml:5:33: error: `backoff` must be a number; expressions are not allowed here [wrong-type]"), "\(r)")
        #expect(!r.stderr.contains("never used"), "\(r)")
        #expect(r.stderr.hasSuffix("1 error in 1 file\n"), "\(r)")
    }

    /// go-task's keys that flow has no key for (`dotenv`, `defer`, `preconditions`, the
    /// up-to-date checks, a task's `dir` and `env`, `vars` beside `task:`) say what flow
    /// does instead, rather than a bare "unknown key" or a workflow-level hint.
    @Test func goTasksKeysWithoutACounterpartSayWhatToWrite() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            dotenv: ['.env']
            includes: { docs: ./docs }
            actions:
              build:
                dir: src
                env: { A: b }
                requires: { vars: [X] }
                preconditions: [test -f go.mod]
                steps:
                  - go build
            steps:
              - use: build
                vars: { X: 1 }
              - shell: ./deploy.sh
                defer: ./rollback.sh
              - shell: go build
                sources: ["**/*.go"]
                generates: [bin/app]
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        let helps = [
            (1, "^^^^^^ flow reads no `.env` file: export it before `flow run` (`set -a; . ./.env; set +a`), or write the variables under `env:`"),
            (2, "^^^^^^^^ flow has no includes:"),
            (5, "^^^ an action has no `dir`: set `dir` on its shell steps"),
            (6, "^^^ an action has no `env`: set `env` on the `use` step"),
            (7, "^^^^^^^^ a value the action needs is a parameter: `params: { NAME: { required: true } }`"),
            (8, "^^^^^^^^^^^^^ flow has no preconditions:"),
            (13, "^^^^ pass the action's parameters under `with:`"),
            (15, "^^^^^ flow calls this a group's `finally`"),
            (17, "^^^^^^^ flow has no up-to-date checks: every selected step runs"),
            (18, "^^^^^^^^^ flow has no up-to-date checks: every selected step runs"),
        ]
        for (line, help) in helps {
            #expect(r.stderr.contains("wf.yaml:\(line):"), "line \(line): \(r.stderr)")
            #expect(r.stderr.contains(help), "\(help)\n\(r.stderr)")
        }
        #expect(r.stderr.hasSuffix("10 errors in 1 file\n"), "\(r.stderr)")
    }

    /// A Taskfile given to `flow run` by mistake (or as the start of a port): its quoted
    /// `version: '3'` said only "found a string". The help says it is another tool's file
    /// and where the migration table is; a quoted `"1"` is told to drop the quotes.
    @Test func aQuotedVersionSaysWhatItIs() throws {
        let box = try RunSandbox()
        try box.write("Taskfile.yml", """
            version: '3'
            tasks:
              build:
                cmds: [go build]
            """)
        let run = try box.run(["run", "Taskfile.yml"])
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("""
            Taskfile.yml:1:10: error: `version` must be a whole number, found a string [wrong-type]
              |
            1 | version: '3'
              |          ^^^ flow's only version is `1`; this looks like another tool's file (a go-task Taskfile has `version: '3'`): see "Coming from another tool" in docs/workflow-format.md
            """), "\(run)")
        try box.write("one.yaml", "version: \"1\"\nsteps: [echo]\n")
        let one = try box.run(["validate", "one.yaml"])
        #expect(one.status == 1 && one.stderr.contains("^^^ write it unquoted: `version: 1`"), "\(one)")
    }

    /// Another tool's placeholder where flow reads an expression (`if:`) said only
    /// "unexpected character `{`" (or `$`): it now names whose syntax it is, points at all
    /// of it, and says to write the reference itself.
    @Test func aForeignPlaceholderInAConditionSaysWhatToWrite() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              deploy: "true"
            steps:
              - shell: ./deploy.sh
                if: "{{.deploy}} == 'true'"
              - shell: ./deploy.sh
                if: $(DEPLOY)
              - print: x
                if: "!{{ deploy }}"
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("""
            wf.yaml:5:10: error: `{{.deploy}}` is go-task's (Go template) syntax, not a flow expression [expression-syntax]
              |
            5 |     if: "{{.deploy}} == 'true'"
              |          ^^^^^^^^^^^ write the reference itself: `vars.deploy` (a parameter of the action: `params.deploy`)
            """), "\(r.stderr)")
        #expect(r.stderr.contains("wf.yaml:7:9: error: `$(DEPLOY)` is make's syntax, not a flow expression [expression-syntax]"), "\(r.stderr)")
        #expect(r.stderr.contains("wf.yaml:9:11: error: `{{ deploy }}` is just's and Jinja's (Ansible) syntax, not a flow expression [expression-syntax]"), "\(r.stderr)")
    }

    /// A `#!/usr/bin/env bash` script pasted into a step of a workflow that runs `sh`: the
    /// line is a comment to `sh -c`, and the script's bash-isms failed there (`[[: not
    /// found`); a warning at the `#!` line names the shell the step runs with and the
    /// `shell:` to set. Not where the step's shell is the one named (the workflow's or a
    /// group's `shell`), nor a `#!/bin/sh` under `bash`.
    @Test func aShebangOfAnotherShellThanTheStepsIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: |
                  #!/usr/bin/env bash
                  [[ -n x ]] && echo ok
              - sequential:
                  - shell: |
                      #!/bin/bash
                      echo ok
                shell: bash
              - sequential:
                  - "#!/bin/zsh\necho ok"
                shell: zsh
              - "#!/bin/sh\necho ok"
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr == """
            wf.yaml:3:7: warning: the command's `#!` line names `bash`, but the step runs with `sh`, to which that line is a comment [foreign-shebang]
              |
            3 |       #!/usr/bin/env bash
              |       ^^^^^^^^^^^^^^^^^^^ set `shell: bash` in `defaults`, for every step, or on a `sequential` group around this one
            1 warning in 1 file

            """, "\(r.stderr)")
        try box.write("bash.yaml", "shell: bash\nsteps:\n  - \"#!/usr/bin/env bash\\necho ok\"\n  - \"#!/bin/sh\\necho ok\"\n  - sequential:\n      - \"#!/bin/bash\\necho ok\"\n    shell: sh\n")
        let bash = try box.run(["validate", "bash.yaml"])
        #expect(bash.stderr.hasPrefix("bash.yaml:6:10: warning: the command's `#!` line names `bash`, but the step runs with `sh`"), "\(bash)")
        #expect(bash.stderr.hasSuffix("1 warning in 1 file\n"), "\(bash)")
        // The `sh` is the group's: its help says to change the group's, and, as above,
        // never to set `shell:` on the step, whose `shell:` is its command.
        #expect(bash.stderr.contains("set the enclosing group's `shell:` to `bash`, or put the step in a `sequential` group of its own with `shell: bash`"), "\(bash)")
        try box.write("followed.yaml", "steps:\n  - sequential:\n      - \"#!/bin/bash\\n[[ -n x ]] && echo ok\"\n    shell: bash\n")
        #expect(try box.run(["validate", "followed.yaml"]).stdout == "followed.yaml: valid\n")
        #expect(try box.run(["run", "followed.yaml"]).status == 0)
    }

    /// `PATH: "$HOME/bin:$PATH"` and `dir: $HOME/src` are passed as written (no shell reads
    /// them): the step found no program, or no directory, without a word before the run. A
    /// warning at the first `$NAME` or `~` gives flow's form; a variable that may hold a
    /// command run through a shell (`GIT_SSH_COMMAND`) and flow's own `${{ env.HOME }}` are
    /// left alone.
    @Test func aShellVariableInAPathOrDirIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            env:
              PATH: "$HOME/bin:$PATH"
              GIT_SSH_COMMAND: ssh -i $HOME/.ssh/key
              PYTHONPATH: "${{ env.HOME }}/lib"
            defaults:
              dir: ~/src
            steps:
              - shell: echo "$PATH"
                env:
                  JAVA_HOME: ${JDK}/jre
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("""
            wf.yaml:2:10: warning: `$HOME` in the value of `PATH` is passed as written: no shell expands it there [unexpanded-variable]
              |
            2 |   PATH: "$HOME/bin:$PATH"
              |          ^^^^^ write `${{ env.HOME }}`: outside a shell command flow expands only `${{ … }}`
            """), "\(r.stderr)")
        #expect(r.stderr.contains("wf.yaml:6:8: warning: `~` in `dir` is passed as written"), "\(r.stderr)")
        #expect(r.stderr.contains("wf.yaml:10:18: warning: `${JDK}` in the value of `JAVA_HOME` is passed as written"), "\(r.stderr)")
        #expect(r.stderr.contains("^^^^^^ write `${{ env.JDK }}`"), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("3 warnings in 1 file\n"), "\(r.stderr)")
    }

    /// A `$` written escaped (`$$HOME`, Make's and Compose's way, or `\$HOME`, a shell's) is
    /// meant as written, which is what flow passes: no `unexpanded-variable` for it, while
    /// an unescaped one after it in the same value still is.
    @Test func anEscapedDollarInAPathIsNotAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            env:
              CACHE_DIR: /srv/$$HOME/cache
              DATA_DIR: '\$HOME/data'
              LIB_PATH: "$${{ env.HOME }}/lib"
              OUT_DIR: '$$X/\$Y/$Z'
            steps:
              - echo hi
            """#)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("wf.yaml:5:21: warning: `$Z` in the value of `OUT_DIR` is passed as written"), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("1 warning in 1 file\n"), "\(r.stderr)")
    }

    /// `$ORIGIN` in `LD_LIBRARY_PATH` is the dynamic linker's (ld.so expands it, as in an
    /// rpath): meant as written, not flagged; a `$HOME` after it still is.
    @Test func theDynamicLinkersOwnVariablesInItsPathAreNotAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            env:
              LD_LIBRARY_PATH: "$ORIGIN/../lib:${PLATFORM}/x:$LIB"
            steps:
              - shell: echo hi
                env:
                  LD_LIBRARY_PATH: "$ORIGIN/lib:$HOME/lib"
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.hasPrefix("wf.yaml:6:37: warning: `$HOME` in the value of `LD_LIBRARY_PATH` is passed as written"), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("1 warning in 1 file\n"), "\(r.stderr)")
    }

    /// `${HOME:-/tmp}` (a shell's default) is no more expanded than `${HOME}`: the warning
    /// spans it to its `}`.
    @Test func aShellVariableWithADefaultInAPathIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: echo hi
                dir: "${WORKSPACE:-/tmp}/src"
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("""
            wf.yaml:3:11: warning: `${WORKSPACE:-/tmp}` in `dir` is passed as written: no shell expands it there [unexpanded-variable]
              |
            3 |     dir: "${WORKSPACE:-/tmp}/src"
              |           ^^^^^^^^^^^^^^^^^^ write `${{ env.WORKSPACE || '/tmp' }}`: outside a shell command flow expands only `${{ … }}`
            """), "\(r.stderr)")
    }

    /// `if: !vars.deploy` is read as its text after the `unsupported-tag` error; a second
    /// error inside that text (the variable is not declared) points at the name, as it
    /// does when the value is quoted, not at the `!` alone.
    @Test func anErrorInsideAnUnquotedNegationPointsAtItsPlace() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - print: hi
                if: !vars.deploy
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status != 0, "\(r)")
        #expect(r.stderr.contains("""
            wf.yaml:3:15: error: unknown variable `deploy` [unknown-reference]
              |
            3 |     if: !vars.deploy
              |               ^^^^^^ declare it under `vars:`
            """), "\(r.stderr)")
    }

    /// just's shebang recipes ported as they are (`#!/usr/bin/env python3` first in a
    /// command) ran as `sh` and failed on the script's first line (`import: not found`):
    /// a warning at the `#!` line says so. A shell's own `#!` is flagged only when it is
    /// not the step's shell (the test above).
    @Test func aShebangOfAnotherLanguageIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: |
                  #!/usr/bin/env python3
                  import sys
              - shell: |
                  #!/usr/bin/env sh
                  echo ok
              - "#!/bin/sh\necho ok"
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr == """
            wf.yaml:3:7: warning: `#!/usr/bin/env python3` is a comment here: flow runs the command with the step's shell, not `python3` [foreign-shebang]
              |
            3 |       #!/usr/bin/env python3
              |       ^^^^^^^^^^^^^^^^^^^^^^ feed the script to it: `python3 - <<'EOF'` before it and `EOF` after it (or save it as a file and run that)
            1 warning in 1 file

            """, "\(r.stderr)")
        // GitHub Actions' `shell: python`: the help says where such a script goes.
        try box.write("python.yaml", "shell: python3\nsteps: [echo]\n")
        let python = try box.run(["validate", "python.yaml"])
        #expect(python.status == 1, "\(python)")
        #expect(python.stderr.contains("^^^^^^^ use one of sh, bash, zsh, dash, ksh, or a path to one of them; a script in another language goes in a command: `python3 - <<'EOF'` … `EOF`"),
                "\(python.stderr)")
    }

    /// A `#!` line ended by CRLF (a quoted command with `\r\n`, pasted from Windows) ends
    /// there: Swift reads `\r\n` as one character, neither `\r` nor `\n`, so the line ran
    /// on into the next and a shell's own `#!/bin/sh` was flagged as the program
    /// `sh\r\necho`, another language's named with the rest of the script.
    @Test func aShebangEndedByCRLFEndsThere() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            steps:
              - "#!/bin/sh\r\necho ok"
              - "#!/usr/bin/python3\r\nprint(1)"
            """#)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.hasPrefix("""
            wf.yaml:3:6: warning: `#!/usr/bin/python3` is a comment here: flow runs the command with the step's shell, not `python3` [foreign-shebang]
            """), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("1 warning in 1 file\n"), "\(r.stderr)")
    }

    /// go-task's short task forms (`build: go build`, `build: [go build]`) as actions said
    /// only "must be a mapping": the help says the steps go under `steps:`, and the `use`
    /// of the action is not also an unknown action.
    @Test func anActionWrittenAsGoTasksShortFormSaysWhereItsStepsGo() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              build: go build
              test:
                - go test ./...
            steps:
              - use: build
              - use: test
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("  |          ^^^^^^^^ put its steps under `steps:` (`build:` then `steps: [go build]` indented under it)"), "\(r.stderr)")
        #expect(r.stderr.contains("  |     ^ put its steps under `steps:` (`test:` then `steps: […]` indented under it)"), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("2 errors in 1 file\n"), "\(r.stderr)")
    }

    /// go-task builds vars from vars (`IMAGE: "{{.REGISTRY}}/app"`); flow's are literal, so
    /// the value kept its braces and `registry` looked unused with no word about why. The
    /// placeholder is now `unexpanded-expression`, with the `env:` entry to write; another
    /// program's template in a var (`{{.Names}}`, no var of that name) is left alone.
    @Test func aVarBuiltFromAnotherVarTheGoTaskWayIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              registry: ghcr.io/acme
              image: "{{.REGISTRY}}/app"
              format: "{{.Names}}"
            steps:
              - echo "${{ vars.image }}" && docker ps --format "${{ vars.format }}"
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("""
            wf.yaml:3:11: warning: the value of variable `image` is literal: its `{{.REGISTRY}}` is not expanded [unexpanded-expression]
              |
            3 |   image: "{{.REGISTRY}}/app"
              |           ^^^^^^^^^^^^^ build it in `env:`, whose values are expanded (`IMAGE: "${{ vars.registry }}/app"`), and use `${{ env.IMAGE }}`
            """), "\(r.stderr)")
        #expect(!r.stderr.contains("{{.Names}}"), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("2 warnings in 1 file\n"), "\(r.stderr)")
    }

    /// go-task's own variables (`{{.CLI_ARGS}}`, `{{.ITEM}}`…) are no var of the file, so
    /// they passed as text (`go test {{.CLI_ARGS}}`); they are `foreign-template` with what
    /// flow has instead. A program's template (`{{.Names}}`) still is not.
    @Test func goTasksSpecialVariablesAreForeignTemplates() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - go test {{.CLI_ARGS}}
              - echo {{.ITEM}} {{.ROOT_DIR}}
              - docker ps --format "{{.Names}}"
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("""
            wf.yaml:2:13: warning: `{{.CLI_ARGS}}` is go-task's (Go template) syntax: flow leaves it as text [foreign-template]
              |
            2 |   - go test {{.CLI_ARGS}}
              |             ^^^^^^^^^^^^^ flow passes no words on to the steps: declare a var and give it with `--var NAME=…`
            """), "\(r.stderr)")
        #expect(r.stderr.contains("^^^^^^^^^ flow has no loops: write one step per value"), "\(r.stderr)")
        #expect(r.stderr.contains("^^^^^^^^^^^^^ steps run in the directory flow runs in (`$PWD`), not the workflow's"), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("3 warnings in 1 file\n"), "\(r.stderr)")
    }

    /// Half-converted placeholders: `${{ version }}` (just's `{{version}}` with a `$`) and
    /// `${{ .VERSION }}` (go-task's) said only "references start with `vars.`…" and
    /// "expected a value, found `.`"; the help now names the var or param to write.
    @Test func aHalfConvertedPlaceholderIsOfferedTheReference() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              VERSION: 1
            actions:
              a:
                params:
                  region: {}
                steps:
                  - echo ${{ region }}
            steps:
              - echo ${{ .VERSION }}
              - echo ${{ version }}
              - use: a
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("""
            wf.yaml:10:14: error: expected a value, found `.` [expression-syntax]
               |
            10 |   - echo ${{ .VERSION }}
               |              ^ flow's references have no leading `.`: `vars.VERSION` (a parameter: `params.VERSION`)
            """), "\(r.stderr)")
        #expect(r.stderr.contains("""
            wf.yaml:11:14: error: unknown reference `version` [unknown-reference]
               |
            11 |   - echo ${{ version }}
               |              ^^^^^^^ did you mean `vars.VERSION`?
            """), "\(r.stderr)")
        #expect(r.stderr.contains("^^^^^^ did you mean `params.region`?"), "\(r.stderr)")
    }

    /// `with: { env: ${{ vars.target }} }` and `- { name: t, shell: echo "v ${{ vars.a }}" }`:
    /// in a flow mapping the `{` of an unquoted `${{` ends the value, and libyaml's error
    /// came a few columns on ("did not find expected ',' or '}'", or "end of stream while
    /// scanning a quoted scalar" at the closing quote), with a note that the `{` was not
    /// closed though it was. The error now points at the `${{` and says to quote the
    /// value or use block style; the misleading note is gone. A quoted value is valid.
    @Test func anUnquotedExpressionInAFlowMappingIsPointedAt() throws {
        let box = try RunSandbox()
        let help = "inside `{ … }` or `[ … ]`, a `{` ends an unquoted value: quote the value"
        try box.write("with.yaml", """
            vars:
              a: x
            actions:
              d:
                params:
                  env: {}
                steps:
                  - print: "${{ params.env }}"
            steps:
              - use: d
                with: { env: ${{ vars.a }} }

            """)
        let with = try box.run(["validate", "with.yaml"])
        #expect(with.status == 1, "\(with)")
        #expect(with.stderr.hasPrefix("with.yaml:11:18: error: invalid YAML: did not find expected ',' or '}' while parsing a flow mapping [yaml-syntax]\n"), "\(with)")
        #expect(with.stderr.contains("   |                  ^^^ " + help), "\(with)")
        #expect(!with.stderr.contains("is not closed"), "\(with)")
        try box.write("quoted.yaml", """
            vars:
              a: x
            steps:
              - { name: t, shell: echo "testing ${{ vars.a }}" }
              - print: done

            """)
        let quoted = try box.run(["validate", "quoted.yaml"])
        #expect(quoted.stderr.hasPrefix("quoted.yaml:4:37: error: invalid YAML:"), "\(quoted)")
        #expect(quoted.stderr.contains("  |                                     ^^^ " + help), "\(quoted)")
        try box.write("ok.yaml", """
            vars:
              a: x
            steps:
              - { name: t, shell: 'echo "testing ${{ vars.a }}"' }
              - [ "${{ vars.a }}" ]

            """)
        // Quoted, the same values are YAML; the list is then a step of its own kind error,
        // not a syntax error.
        let ok = try box.run(["validate", "ok.yaml"])
        #expect(!ok.stderr.contains("yaml-syntax"), "\(ok)")
    }
}
