@testable import FlowKit
import Testing

/// YAML nodes → `Workflow`: the model built, and every shape problem at its position.
@Suite struct WorkflowParserTests {
    // MARK: The model

    @Test func fullWorkflowBuildsTheModel() throws {
        let workflow = try valid("""
            version: 1
            name: release
            description: Build and ship
            shell: bash
            env:
              GREETING: hello
            vars:
              target: world
            defaults:
              timeout: 10m
              retry: 2
            rollback: false
            actions:
              deploy:
                description: Deploy one environment
                params:
                  env: { required: true, allowed: [staging, prod] }
                  region: { default: eu-west-1 }
                steps:
                  - shell: ./deploy.sh --env "${{ params.env }}" --region "${{ params.region }}"
            steps:
              - print: "Building ${{ vars.target }}"
                stream: stderr
              - make test
              - name: wait
                delay: 1.5s
              - use: deploy
                with: { env: prod }
            finally:
              - print: "done: ${{ run.status }}"
            """)
        #expect(workflow.version?.value == 1)
        #expect(workflow.displayName == "release")
        #expect(workflow.shell?.value.name == "bash")
        #expect(workflow.env.map(\.name.value) == ["GREETING"])
        #expect(workflow.vars.map(\.value.value) == ["world"])
        #expect(workflow.defaults.timeout?.value == .seconds(600))
        #expect(workflow.defaults.retry?.value.limit == 2)
        #expect(workflow.rollback?.value == false)
        let action = try #require(workflow.action(named: "deploy"))
        #expect(action.params.map(\.name.value) == ["env", "region"])
        #expect(action.param(named: "env")?.required == true)
        #expect(action.param(named: "env")?.allowed?.map(\.value) == ["staging", "prod"])
        #expect(action.param(named: "region")?.defaultValue?.value == "eu-west-1")
        #expect(workflow.steps.count == 4)
        guard case .print(let p) = workflow.steps[0].kind else { Issue.record("not a print step"); return }
        #expect(p.stream == .stderr)
        #expect(p.message.expressions.count == 1)
        guard case .shell(let s) = workflow.steps[1].kind else { Issue.record("a bare string is a shell step"); return }
        #expect(s.command.raw == "make test")
        #expect(at(workflow.steps[1].kindSpan) == "24:5")
        guard case .delay(let d) = workflow.steps[2].kind else { Issue.record("not a delay"); return }
        #expect(d.value == .milliseconds(1500))
        #expect(workflow.steps[2].name?.value == "wait")
        guard case .use(let u) = workflow.steps[3].kind else { Issue.record("not a use step"); return }
        #expect(u.action.value == "deploy")
        #expect(u.with.map(\.name.value) == ["env"])
        #expect(workflow.finally.count == 1)
    }

    @Test func nameDefaultsToTheFileName() throws {
        let loaded = LoadedWorkflow.load(SourceFile(path: "dir/my-build.yaml", text: "steps: [echo]\n"))
        #expect(loaded.workflow?.displayName == "my-build")
    }

    @Test func groupsKeepTheirOptionsAndFinally() throws {
        let workflow = try valid("""
            steps:
              - concurrent:
                  - shell: a
                  - shell: b
                max_parallel: 2
                fail_fast: false
                shell: bash
                finally:
                  - print: cleanup
              - sequential:
                  - shell: c
                finally: [{print: done}]
            """)
        guard case .concurrent(let g) = workflow.steps[0].kind else { Issue.record("not concurrent"); return }
        #expect(g.steps.count == 2)
        #expect(g.maxParallel?.value == 2)
        #expect(g.failFast?.value == false)
        #expect(g.finally.count == 1)
        #expect(workflow.steps[0].shell?.value.name == "bash", "`shell` on a group is the shell program")
        #expect(workflow.steps[1].finallySteps.count == 1)
    }

    @Test func retryShortAndLongForms() throws {
        let workflow = try valid("""
            steps:
              - shell: a
                retry: 3
              - shell: b
                retry: {limit: 2, delay: 1s, backoff: 2.5, max_delay: 30s, exit_codes: [75, 1]}
            """)
        #expect(workflow.steps[0].retry?.value == RetryPolicy(limit: 3))
        let long = try #require(workflow.steps[1].retry?.value)
        #expect(long.limit == 2)
        #expect(long.delay == .seconds(1))
        #expect(long.backoff == 2.5)
        #expect(long.maxDelay == .seconds(30))
        #expect(long.exitCodes == [75, 1])
    }

    @Test func retryDelaySchedule() {
        var policy = RetryPolicy(limit: 5)
        policy.delay = .seconds(1)
        policy.backoff = 2
        policy.maxDelay = .seconds(5)
        // Attempt n waits delay × backoff^(n-1), capped: 2s, 4s, then 8s capped at 5s.
        #expect(policy.delay(beforeAttempt: 2) == .seconds(2))
        #expect(policy.delay(beforeAttempt: 3) == .seconds(4))
        #expect(policy.delay(beforeAttempt: 4) == .seconds(5))
        #expect(policy.delay(beforeAttempt: 5) == .seconds(5))
        policy.backoff = 1
        #expect(policy.delay(beforeAttempt: 2) == .seconds(1))
        #expect(policy.delay(beforeAttempt: 5) == .seconds(1))
        policy.exitCodes = [75]
        #expect(policy.retries(exitCode: 75))
        #expect(!policy.retries(exitCode: 1))
        #expect(policy.retries(exitCode: nil), "a group whose step failed has no exit code")
        policy.exitCodes = nil
        #expect(policy.retries(exitCode: 1) && policy.retries(exitCode: 137))
        #expect(!policy.retries(exitCode: 0), "every non-zero code: a failure that exited 0 is final")
    }

    @Test func undoTakesOneStepOrAList() throws {
        let workflow = try valid("""
            steps:
              - shell: a
                undo:
                  shell: undo-a
              - shell: b
                undo:
                  - shell: undo-b1
                  - shell: undo-b2
            """)
        #expect(workflow.steps[0].undo?.count == 1)
        #expect(workflow.steps[1].undo?.count == 2)
    }

    @Test func tagsAcceptAListOrOneString() throws {
        let workflow = try valid("""
            steps:
              - shell: a
                tags: [x, y]
              - shell: b
                tags: z
            """)
        #expect(workflow.steps[0].tags.map(\.value) == ["x", "y"])
        #expect(workflow.steps[1].tags.map(\.value) == ["z"])
    }

    @Test func ifAcceptsABooleanAnExpressionOrAWrappedExpression() throws {
        let workflow = try valid("""
            vars: {v: '1'}
            steps:
              - shell: a
                if: false
              - shell: b
                if: vars.v == '1'
              - shell: c
                if: ${{ vars.v == '1' }}
            """)
        #expect(workflow.steps.map { $0.condition?.value.text } == ["false", "vars.v == '1'", "vars.v == '1'"])
    }

    /// The wrapped form may have spaces, tabs and line breaks around its `${{ }}` (a block
    /// scalar ends with a line break), and its `}}` is the first outside a string literal;
    /// a bare condition may hold `${{` in a string literal.
    @Test func ifWrappedAcrossLinesOrWithBracesInAString() throws {
        let workflow = try valid(#"""
            vars: {v: '1'}
            steps:
              - shell: a
                if: |
                  ${{ vars.v == '1' }}
              - shell: b
                if: "${{ vars.v == '1' }}\n"
              - shell: c
                if: "\n\t ${{ vars.v == '1' }} \r\n"
              - shell: d
                if: >-
                  ${{ vars.v ==
                  '1' }}
              - shell: e
                if: "${{ vars.v != '${{' }}"
              - shell: f
                if: "${{ vars.v != '}}' }}"
              - shell: g
                if: vars.v != '${{'
            """#)
        #expect(workflow.steps.map { $0.condition?.value.text } == [
            "vars.v == '1'", "vars.v == '1'", "vars.v == '1'", "vars.v == '1'", "vars.v != '${{'", "vars.v != '}}'",
            "vars.v != '${{'",
        ])
        // Positions inside a block scalar are exact.
        expectDiagnostics("""
            steps:
              - print: x
                if: |
                  ${{ vars.⟦unknown-reference⟧nope }}
            """)
    }

    /// More than one `${{ }}`, text beside one, or one left open is still an error.
    @Test func ifMixingOrUnterminatedIsAnError() {
        expectDiagnostics(#"""
            steps:
              - print: a
                if: ⟦expression-syntax⟧"${{ true }}\n&& ${{ false }}"
              - print: b
                if: ⟦expression-syntax⟧"x ${{ true }}"
              - print: c
                if: ⟦expression-syntax⟧"${{ true }} '${{'"
              - print: d
                if: "  ⟦expression-syntax⟧${{ true == 'a'"
            """#)
    }

    @Test func shellProgramsMayBePaths() throws {
        let workflow = try valid("shell: /usr/local/bin/bash\nsteps: [echo]\n")
        #expect(workflow.shell?.value.name == "bash")
        #expect(workflow.shell?.value.spec == "/usr/local/bin/bash")
        #expect(ShellProgram("/bin/fish") == nil)
        #expect(ShellProgram("bash/") == nil)
    }

    // MARK: Top level problems

    @Test func emptyFileIsAnEmptyWorkflow() {
        expectDiagnostics("⟦empty-workflow⟧")
        expectDiagnostics("⟦empty-workflow⟧# only a comment\n")
        expectDiagnostics("⟦empty-workflow⟧~\n")
    }

    @Test func rootMustBeAMapping() {
        expectDiagnostics("⟦wrong-type⟧- print: x\n")
        expectDiagnostics("⟦wrong-type⟧just text\n")
    }

    @Test func missingSteps() {
        expectDiagnostics("""
            ⟦missing-key⟧name: x
            """)
    }

    @Test func unknownTopLevelKeys() throws {
        let loaded = expectDiagnostics("""
            ⟦unknown-key⟧step:
              - print: x
            steps:
              - print: y
            ⟦unknown-key⟧finaly: []
            """)
        #expect(loaded.diagnostics.map(\.help) == ["did you mean `steps`?", "did you mean `finally`?"])
    }

    @Test func versionMustBeOne() {
        expectDiagnostics("""
            version: ⟦unsupported-version⟧2
            steps: [echo]
            """)
        expectDiagnostics("""
            version: ⟦wrong-type⟧one
            steps: [echo]
            """)
    }

    @Test func wrongTypesAtTopLevel() {
        expectDiagnostics("""
            name: ⟦wrong-type⟧[a]
            description: ⟦wrong-type⟧{a: 1}
            env: ⟦wrong-type⟧[A]
            vars: ⟦wrong-type⟧x
            defaults: ⟦wrong-type⟧1
            rollback: ⟦wrong-type⟧yes
            actions: ⟦wrong-type⟧[]
            steps: ⟦wrong-type⟧5
            """)
    }

    @Test func invalidNames() {
        expectDiagnostics("""
            name: ⟦invalid-name⟧any text is not a workflow name
            env:
              ⟦invalid-name⟧MY-VAR: x
              ⟦invalid-name⟧1ABC: y
            vars:
              ⟦invalid-name⟧"a b": 1
            actions:
              ⟦invalid-name⟧bad.name:
                steps: [echo]
            steps:
              - name: ⟦invalid-name⟧9lives
                shell: x
                outputs: [ok, ⟦invalid-name⟧"not ok"]
            """)
    }

    @Test func unsupportedShell() {
        expectDiagnostics("""
            shell: ⟦invalid-value⟧fish
            defaults:
              shell: ⟦invalid-value⟧/bin/csh
            steps: [echo]
            """)
    }

    @Test func defaultsKeys() {
        expectDiagnostics("""
            defaults:
              timeout: ⟦invalid-duration⟧soon
              retry: ⟦invalid-value⟧-1
              ⟦unknown-key⟧retries: 2
              ⟦unknown-key⟧tags: [x]
            steps: [echo]
            """)
    }

    // MARK: Steps

    @Test func stepWithoutKind() {
        expectDiagnostics("""
            steps:
              - ⟦missing-kind⟧name: x
                timeout: 1s
            """)
    }

    @Test func unknownKeyThatLooksLikeAKindIsNotAlsoMissingKind() throws {
        let loaded = expectDiagnostics("""
            steps:
              - ⟦unknown-key⟧shel: echo hi
            """)
        #expect(loaded.diagnostics.first?.help == "did you mean `shell`?")
    }

    @Test func unknownKeysOnSteps() {
        expectDiagnostics("""
            steps:
              - print: x
                ⟦unknown-key⟧timout: 1s
              - sequential: [echo]
                ⟦unknown-key⟧max-parallel: 2
            """)
    }

    @Test func twoKindsInOneStep() throws {
        let loaded = expectDiagnostics("""
            steps:
              - print: x
                ⟦multiple-kinds⟧shell: echo
            """)
        let d = try only(.multipleKinds, in: loaded)
        #expect(d.notes.map { at($0.span) } == ["2:5"])
    }

    @Test func threeKindsInOneStepReportEachExtraKind() {
        expectDiagnostics("""
            steps:
              - delay: 1s
                ⟦multiple-kinds⟧print: x
                ⟦multiple-kinds⟧use: a
            """)
    }

    @Test func optionsOfAnotherKind() {
        expectDiagnostics("""
            steps:
              - shell: x
                ⟦misplaced-option⟧stream: stderr
              - print: x
                ⟦misplaced-option⟧max_parallel: 2
                ⟦misplaced-option⟧outputs: [a]
              - delay: 1s
                ⟦misplaced-option⟧with: {a: 1}
              - concurrent: [a]
                ⟦misplaced-option⟧stdin: hi
              - print: x
                ⟦misplaced-option⟧finally: [echo]
            """)
    }

    @Test func shellKeyOnShellAndPrintSteps() throws {
        // `shell: bash` on a shell step is the same key twice: YAML reports the duplicate.
        expectDiagnostics("""
            steps:
              - shell: echo
                ⟦duplicate-key⟧shell: bash
            """)
        // On a print step `shell` is a second kind.
        expectDiagnostics("""
            steps:
              - print: x
                ⟦multiple-kinds⟧shell: bash
            """)
    }

    @Test func nullAndWrongTypedSteps() {
        expectDiagnostics("""
            steps:
              -⟦wrong-type⟧
              - ⟦wrong-type⟧[a, b]
              - print: ⟦wrong-type⟧[a]
              - shell: ⟦invalid-value⟧"  "
              - use: ⟦wrong-type⟧{a: 1}
            """)
    }

    /// What reaches the kernel as a C string (a command, `dir`, an `env` value, a shell
    /// path) cannot hold a NUL, which would end it there: reported at the NUL itself, in
    /// every quoting style. `stdin` and messages are written as bytes and may hold one.
    @Test func nulCharactersWhereCStringsAreDue() {
        expectDiagnostics(#"""
            shell: "/bin⟦invalid-value⟧\0/bash"
            env: { W: "a⟦invalid-value⟧\0b" }
            defaults: { dir: "/tmp⟦invalid-value⟧\x00x" }
            steps:
              - shell: "echo kept⟦invalid-value⟧\0; echo dropped"
              - shell: echo "$V"
                env: { V: "kept⟦invalid-value⟧\u0000dropped" }
              - shell: pwd
                dir: "/tmp⟦invalid-value⟧\0"
              - "echo ⟦invalid-value⟧\0"
              - sequential:
                  - shell: "echo one
                      two⟦invalid-value⟧\0"
                shell: bash
              - shell: cat
                stdin: "a\0b"
              - print: "a\0b"
            """#)
    }

    /// An empty `dir` names no directory: every run of the step failed on it. Like an empty
    /// command, it is `invalid-value` (a blank one may name a directory, and is kept).
    @Test func emptyDir() {
        expectDiagnostics("""
            defaults: {dir: ⟦invalid-value⟧""}
            steps:
              - shell: pwd
                dir: ⟦invalid-value⟧''
              - shell: pwd
                dir: " "
            """)
    }

    /// An output key listed twice is reported as a key written twice is: at the second,
    /// with a note at the first; the step keeps one.
    @Test func duplicateOutputKeys() throws {
        let loaded = expectDiagnostics("""
            steps:
              - shell: x
                outputs: [k, j, ⟦duplicate-key⟧k, ⟦duplicate-key⟧j]
            """)
        #expect(loaded.diagnostics.map { $0.notes.map { at($0.span) } } == [["3:15"], ["3:18"]])
        #expect(loaded.workflow?.steps.first?.outputs?.map(\.value) == ["k", "j"])
    }

    @Test func emptyGroups() {
        expectDiagnostics("""
            steps:
              - sequential: ⟦empty-group⟧[]
              - ⟦empty-group⟧concurrent:
              - print: x
                ⟦empty-group⟧undo:
              - sequential: [echo]
                finally: ⟦empty-group⟧[]
            finally: ⟦empty-group⟧[]
            """)
        expectDiagnostics("⟦empty-group⟧steps:\n")
        expectDiagnostics("steps: ⟦empty-group⟧[]\n")
    }

    @Test func actionWithoutSteps() {
        expectDiagnostics("""
            actions:
              ⟦missing-key⟧a:
                description: nothing
              b:
                steps: ⟦empty-group⟧[]
              c: ⟦wrong-type⟧[echo]
              d:
                ⟦unknown-key⟧step: [echo]
                steps: [echo]
            steps: [echo]
            """)
    }

    @Test func paramDeclarations() throws {
        let loaded = expectDiagnostics("""
            actions:
              a:
                params:
                  p: {required: true, default: ⟦conflicting-options⟧x}
                  q: {allowed: [x, y], default: ⟦disallowed-param⟧z}
                  r: {allowed: ⟦wrong-type⟧[]}
                  s: {⟦unknown-key⟧requird: true}
                  t: ⟦wrong-type⟧5
                  u: {required: ⟦wrong-type⟧maybe}
                steps:
                  - print: ${{ params.p }} ${{ params.q }} ${{ params.r }} ${{ params.s }} ${{ params.t }} ${{ params.u }}
            steps: [echo]
            """)
        #expect(loaded.diagnostics.first { $0.code == .unknownKey }?.help == "did you mean `required`?")
    }

    @Test func durations() {
        expectDiagnostics("""
            steps:
              - delay: ⟦invalid-duration⟧-5s
              - delay: ⟦invalid-duration⟧""
              - delay: ⟦invalid-duration⟧5 minutes
              - delay: ⟦invalid-duration⟧30m1h
              - delay: ⟦invalid-duration⟧${{ vars.x }}
              - delay: ⟦wrong-type⟧[1s]
              - delay:⟦wrong-type⟧
              - delay: 0
              - shell: x
                timeout: ⟦invalid-duration⟧0s
              - shell: x
                retry: {limit: 1, delay: ⟦invalid-duration⟧fast, max_delay: ⟦invalid-duration⟧-1}
            """)
    }

    /// Beyond the documented grammar, or longer than `Duration.maximum`: located errors,
    /// in every place a duration goes (these used to trap or pass unchecked).
    @Test func durationsOutsideTheGrammarOrTooLong() {
        let loaded = expectDiagnostics("""
            defaults:
              timeout: ⟦invalid-duration⟧1000001h
            steps:
              - delay: ⟦invalid-duration⟧99999999999999999999999h
              - delay: ⟦invalid-duration⟧1e300
              - delay: ⟦invalid-duration⟧9223372036854775807
              - delay: ⟦invalid-duration⟧1e20
              - delay: ⟦invalid-duration⟧.5s
              - delay: ⟦invalid-duration⟧5.s
              - delay: ⟦invalid-duration⟧"1e3"
              - delay: ⟦invalid-duration⟧"-0"
              - delay: ⟦invalid-duration⟧0x10
              - delay: 1000000h
              - shell: x
                timeout: ⟦invalid-duration⟧3600000001
              - shell: x
                retry: {limit: 1, delay: ⟦invalid-duration⟧1e9999, max_delay: ⟦invalid-duration⟧99999999999999h}
            """)
        let tooLong = loaded.diagnostics.filter { $0.message.contains("longer than the maximum") }
        #expect(tooLong.count == 5)
        #expect(tooLong.allSatisfy { $0.message.contains(Duration.maximumText) })
        #expect(loaded.diagnostics.contains { $0.message.contains("`9223372036854775807`") })
    }

    /// An empty duration says so (the message used to read "invalid duration an empty value").
    @Test func emptyDurationMessage() {
        let loaded = expectDiagnostics("""
            steps:
              - delay: ⟦invalid-duration⟧""
            """)
        #expect(loaded.diagnostics.first?.message == "`delay` is empty; expected a duration such as `5s`")
    }

    /// Only a string is shorthand for a shell step; the schema agrees.
    @Test func bareNumbersAndBooleansAreNotSteps() {
        let loaded = expectDiagnostics("""
            steps:
              - ⟦wrong-type⟧5
              - ⟦wrong-type⟧true
              - ⟦wrong-type⟧1.5
              - "5"
              - 'true'
              - yes
              - ⟦wrong-type⟧.inf
              - ⟦wrong-type⟧-.inf
              - ⟦wrong-type⟧.nan
              - ⟦wrong-type⟧0o17
              - ⟦wrong-type⟧0x1F
              - ⟦wrong-type⟧!!float 1
              - ⟦invalid-value⟧""
              - ⟦invalid-value⟧"   "
            finally:
              - ⟦wrong-type⟧false
            """)
        #expect(loaded.diagnostics.first?.message == "a step must be a mapping or a command string, found a number")
    }

    /// A number that does not fit says how (it used to say "must be a number, found a number").
    @Test func numbersThatDoNotFitSayHow() {
        let loaded = expectDiagnostics("""
            steps:
              - shell: "true"
                retry: ⟦invalid-value⟧99999999999999999999
              - shell: "true"
                retry: { limit: 1, backoff: ⟦invalid-value⟧1e400 }
              - shell: "true"
                retry: ⟦wrong-type⟧1.5
            """)
        #expect(loaded.diagnostics.map(\.message) == [
            "`retry` is too large, found 99999999999999999999", "`backoff` must be a finite number, found 1e400",
            "`retry` must be a whole number, found 1.5",
        ])
    }

    /// Code and names must be strings (as `flow schema` says): a YAML number or boolean
    /// there is `wrong-type`, with a help that says to quote it. They used to be taken as
    /// text, so `shell: 5` ran a command named `5`.
    @Test func codeAndNamesMustBeStrings() throws {
        let loaded = expectDiagnostics("""
            name: ⟦wrong-type⟧true
            shell: ⟦wrong-type⟧5
            defaults: {dir: ⟦wrong-type⟧5}
            steps:
              - shell: ⟦wrong-type⟧5
              - shell: ⟦wrong-type⟧!!int 5
              - shell: !!str 5
              - print: x
                if: ⟦wrong-type⟧1
                tags: [⟦wrong-type⟧1, "2", three]
                name: ⟦wrong-type⟧false
              - print: x
                tags: ⟦wrong-type⟧1.5
                stream: ⟦wrong-type⟧0
              - shell: x
                dir: ⟦wrong-type⟧2024
                outputs: [⟦wrong-type⟧1]
              - shell: y
                outputs: ⟦wrong-type⟧true
              - use: ⟦wrong-type⟧5
              - sequential: [a]
                shell: ⟦wrong-type⟧0x1F
            """)
        #expect(loaded.diagnostics.first?.help == "quote it if it is meant as text: `\"true\"`")
        #expect(loaded.diagnostics.contains { $0.message == "`if` must be an expression or `true` or `false`, found a number" })
    }

    /// Data takes any scalar as its text, as written (`PORT: 8080`, `print: 42`).
    @Test func dataTakesAnyScalarAsText() throws {
        let workflow = try valid("""
            description: 5
            env: {PORT: 8080, DEBUG: true}
            vars: {n: 1.50}
            actions:
              a:
                description: 1
                params: {p: {description: 2, default: 3, allowed: [3, 4, true]}}
                steps: ['echo "${{ params.p }}"']
            steps:
              - print: 5
                description: 1.5
              - shell: cat
                stdin: 0x10
              - use: a
                with: {p: true}
              - print: "${{ vars.n }}"
            """)
        #expect(workflow.env.map(\.value.raw) == ["8080", "true"])
        #expect(workflow.vars.first?.value.value == "1.50")
        #expect(workflow.actions.first?.params.first?.allowed?.map(\.value) == ["3", "4", "true"])
    }

    /// A whole number may be written as a float (`3.0`, `1e2`): JSON Schema's `integer`
    /// takes it, so flow does too. It used to say "too large, found 3.0".
    @Test func wholeNumbersWrittenAsFloats() throws {
        let workflow = try valid("""
            version: 1.0
            steps:
              - shell: x
                retry: 3.0
              - shell: y
                retry: {limit: 1e2, exit_codes: [75.0]}
              - concurrent: [a]
                max_parallel: 2.0
            """)
        #expect(workflow.steps[0].retry?.value.limit == 3)
        #expect(workflow.steps[1].retry?.value.limit == 100)
        #expect(workflow.steps[1].retry?.value.exitCodes == [75])
        expectDiagnostics("""
            version: ⟦unsupported-version⟧2.0
            steps:
              - shell: x
                retry: ⟦wrong-type⟧3.5
              - shell: x
                retry: ⟦invalid-value⟧1e30
            """)
    }

    /// An explicit core tag types a scalar whatever its style (`!!int "3"` is 3), as in
    /// YAML 1.2 and the schema; it used to be read as "a string" where a number was due.
    @Test func coreTagsTypeScalars() throws {
        let workflow = try valid("""
            version: !!int 1
            steps:
              - shell: x
                retry: !!int "3"
                continue_on_error: !!bool "true"
                timeout: !!str 5s
              - delay: !!float 1.5
            """)
        #expect(workflow.steps[0].retry?.value.limit == 3)
        #expect(workflow.steps[0].continueOnError?.value == true)
        expectDiagnostics("""
            steps:
              - shell: x
                retry: ⟦wrong-type⟧!!int x
                continue_on_error: ⟦wrong-type⟧!!bool yes
              - delay: ⟦wrong-type⟧!!bool true
              - delay: ⟦wrong-type⟧true
            """)
    }

    /// An empty `allowed` list is named as such (it used to say "found a list").
    @Test func emptyAllowedListMessage() {
        let loaded = expectDiagnostics("""
            actions:
              a:
                params:
                  p: {allowed: ⟦wrong-type⟧[]}
                steps: ['echo "${{ params.p }}"']
            steps:
              - use: a
                with: {p: x}
            """)
        #expect(loaded.diagnostics.first?.message == "`allowed` must be a non-empty list of values, found an empty list")
    }

    @Test func retryProblems() {
        expectDiagnostics("""
            steps:
              - shell: a
                retry: ⟦invalid-value⟧-1
              - shell: b
                retry: ⟦wrong-type⟧often
              - shell: c
                retry: ⟦missing-key⟧{delay: 1s}
              - shell: d
                retry: {limit: ⟦invalid-value⟧-2, backoff: ⟦invalid-value⟧0.5, exit_codes: [⟦invalid-value⟧0, 75, ⟦invalid-value⟧256, ⟦wrong-type⟧x]}
              - shell: e
                retry: {limit: 1, ⟦unknown-key⟧delays: 1s, backoff: ⟦wrong-type⟧fast, exit_codes: ⟦wrong-type⟧75}
            """)
    }

    @Test func groupOptionValues() {
        expectDiagnostics("""
            steps:
              - concurrent: [a, b]
                max_parallel: ⟦invalid-value⟧0
                fail_fast: ⟦wrong-type⟧no
              - concurrent: [a, b]
                max_parallel: ⟦wrong-type⟧two
              - print: x
                stream: ⟦invalid-value⟧stdrr
              - shell: x
                interactive: ⟦wrong-type⟧1
                continue_on_error: ⟦wrong-type⟧"true"
              - shell: y
                if: ⟦wrong-type⟧yes
            """)
    }

    @Test func streamSuggestion() throws {
        let loaded = load("steps:\n  - print: x\n    stream: stdrr\n")
        #expect(try only(.invalidValue, in: loaded).help == "did you mean `stderr`?")
    }

    @Test func withMustBeAMapping() {
        expectDiagnostics("""
            actions:
              a:
                steps: [echo]
            steps:
              - use: a
                with: ⟦wrong-type⟧[x]
            """)
    }

    @Test func interactiveWithStdinConflicts() throws {
        let loaded = expectDiagnostics("""
            steps:
              - shell: cat
                stdin: ⟦conflicting-options⟧hello
                interactive: true
            """)
        #expect(try only(.conflictingOptions, in: loaded).notes.map { at($0.span) } == ["4:18"])
    }

    @Test func nonScalarKeys() {
        expectDiagnostics("""
            steps:
              - print: x
                ⟦wrong-type⟧[a]: 1
            """)
    }

    @Test func everyProblemIsReportedNotOnlyTheFirst() {
        let loaded = load("""
            version: 3
            steps:
              - shel: a
              - delay: never
              - print: x
                stream: up
            finally:
              - print: ${{ vars.nope }}
            """)
        #expect(loaded.errorCount == 5)
    }

    @Test func expressionSyntaxErrorsInEveryTemplatedPlace() {
        expectDiagnostics("""
            env:
              A: "${{ ⟦expression-syntax⟧= }}"
            defaults:
              dir: "${{ ⟦expression-syntax⟧) }}"
            steps:
              - shell: "echo ${{ 'x' ⟦expression-syntax⟧'y' }}"
                dir: "${{⟦expression-syntax⟧ }}"
                stdin: "${{ a ⟦expression-syntax⟧& b }}"
                env:
                  B: ${{ ⟦expression-syntax⟧"x" }}
              - print: ${{ ⟦expression-syntax⟧foo() }}
                if: ⟦expression-syntax⟧${{ true }} && false
              - print: x
                if: a ==⟦expression-syntax⟧=
            """)
    }

    @Test func unterminatedExpression() {
        expectDiagnostics("""
            steps:
              - print: "a ⟦expression-syntax⟧${{ b"
            """)
    }
}
