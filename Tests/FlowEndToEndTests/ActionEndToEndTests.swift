import Foundation
import Testing

/// Reusable actions (`actions:`, `use:`, `with:`, `flow run FILE ACTION --with`) seen
/// through the built binary, as a user of GitHub Actions' composite actions or go-task
/// meets them: what validation says at the `use` site, and what plan and run do.
@Suite struct ActionEndToEndTests {
    /// `flow validate wf.yaml` in `box` fails (exit 1), its stderr holding each of `lines`.
    @discardableResult
    static func expectInvalid(_ box: RunSandbox, _ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> FlowOutcome {
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)", sourceLocation: sourceLocation)
        for line in lines {
            #expect(validate.stderr.contains(line), "\(line)\n\(validate)", sourceLocation: sourceLocation)
        }
        return validate
    }

    /// Only a shell step writes outputs: `steps.X.outputs.K` of a `use` step (GitHub
    /// Actions' composite actions have outputs, flow's actions do not), a group, a `print`
    /// or a `delay` was always empty at run time, without a word. Now an error that says
    /// what to do instead.
    @Test func outputsOfAStepThatIsNoShellStepAreAnError() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              build:
                steps:
                  - name: compile
                    shell: echo "art=bin" >> "$FLOW_OUTPUT"
                    outputs: [art]
            steps:
              - use: build
                name: b
              - name: g
                sequential:
                  - shell: "true"
              - name: p
                print: hi
              - print: "${{ steps.b.outputs.art }} ${{ steps.g.outputs.x }} ${{ steps.p.outputs.y }} ${{ steps.b.status }}"
            """)
        let validate = try Self.expectInvalid(box, [
            "wf.yaml:15:33: error: step `b` is a `use` step, which has no outputs [undeclared-output]",
            "actions pass no outputs back: compute the value in a shell step before the `use` and pass it in with `with:`",
            "wf.yaml:15:60: error: step `g` is a `sequential` step, which has no outputs [undeclared-output]",
            "only shell steps write outputs: refer to the shell step inside the group that writes it",
            "wf.yaml:15:85: error: step `p` is a `print` step, which has no outputs [undeclared-output]",
            "wf.yaml:9:11: note: `b` is here",
        ])
        #expect(validate.stderr.hasSuffix("3 errors in 1 file\n"), "\(validate)")
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 2 && run.stdout.isEmpty, "\(run)")
    }

    /// An action's steps and the workflow's are separate scopes; a reference across them
    /// said only "no step named `x`", as if the name were a typo. The help now says where
    /// the step is.
    @Test func aStepOfAnotherScopeIsNamedInTheHelp() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              a:
                steps:
                  - name: inner
                    shell: echo "v=1" >> "$FLOW_OUTPUT"
                  - print: "${{ steps.top.status }}"
            steps:
              - name: top
                print: top
              - use: a
              - print: "${{ steps.inner.outputs.v }}"
            """)
        try Self.expectInvalid(box, [
            "wf.yaml:6:27: error: no step named `top` in action `a` [unknown-reference]",
            "^^^ `top` is a step of the workflow, which an action's steps cannot see: pass what they need in with `with:` on the `use` step",
            "wf.yaml:11:23: error: no step named `inner` in this workflow [unknown-reference]",
            "^^^^^ `inner` is a step of action `a`, seen only inside that action",
        ])
    }

    /// `--with` naming no parameter of ACTION, with nothing close to suggest, had no help;
    /// `with:` in the file lists the parameters, so the command line does too.
    @Test func anUnknownWithOnTheCommandLineListsTheParameters() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true }
                  region: { default: eu }
                steps:
                  - print: "${{ params.env }} ${{ params.region }}"
              bare:
                steps:
                  - print: bare
            steps:
              - print: main
            """)
        let run = try box.run(["run", "wf.yaml", "deploy", "--with", "zzz=1", "--with", "env=prod"])
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr == "error: action `deploy` has no parameter `zzz`\nhelp: its parameters are `env`, `region`\n", "\(run)")
        let bare = try box.run(["plan", "wf.yaml", "bare", "--with", "x=1"])
        #expect(bare.status == 2, "\(bare)")
        #expect(bare.stderr.hasSuffix("help: it takes no parameters\n"), "\(bare)")
    }

    /// A variable `version` and an action `release` with a parameter `tag`: the words a
    /// go-task user passes as `release tag=v1` or `VERSION=2`.
    static let releaseWithAVariable = """
        vars:
          version: dev
        actions:
          release:
            params:
              tag: { required: true }
            steps:
              - print: "${{ params.tag }} ${{ vars.version }}"
        steps:
          - print: main
        """

    /// go-task (`task release TAG=v1`), make and just take variables as `key=value` words
    /// and pass a task's variables and the file's the same way. A user porting such a
    /// setup writes `release tag=v1`, `--var tag=…` for a parameter or `--with` for a
    /// variable: flow said "Unexpected argument" or "declare it under `vars:`", not which
    /// option to use (found in the new-user audit, porting a Taskfile).
    @Test func aKeyValueArgumentOrTheOtherOptionSaysWhichOptionToUse() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.releaseWithAVariable)
        let word = try box.run(["run", "wf.yaml", "release", "tag=v1"])
        #expect(word.status == 2, "\(word)")
        #expect(word.stderr.hasPrefix("""
            Error: Unexpected argument 'tag=v1'
            Help:  --var tag=v1  Override a workflow variable.
                   --with tag=v1  Set a parameter of ACTION.

            """), "\(word)")
        let variable = try box.run(["run", "wf.yaml", "release", "--var", "tag=v1"])
        #expect(variable.status == 2, "\(variable)")
        #expect(variable.stderr == "error: unknown variable `tag` in --var\nhelp: `tag` is a parameter of action `release`: pass it with --with tag=v1\n", "\(variable)")
        let noAction = try box.run(["plan", "wf.yaml", "--var", "tag=v1"])
        #expect(noAction.status == 2, "\(noAction)")
        #expect(noAction.stderr.hasSuffix("help: `tag` is a parameter of action `release`: run it alone with FILE release --with tag=v1\n"), "\(noAction)")
        let param = try box.run(["run", "wf.yaml", "release", "--with", "tag=v1", "--with", "version=2"])
        #expect(param.status == 2, "\(param)")
        #expect(param.stderr == "error: action `release` has no parameter `version`\nhelp: `version` is a variable of the workflow: set it with --var version=2\n", "\(param)")
    }

    /// The same habit without an action: `flow run wf.yaml tag=v1` (as `task TAG=v1`) takes
    /// the word for ACTION. No action's name has a `=`, so the help says which option sets
    /// it, as for a word after ACTION; it said "this workflow declares no actions", or
    /// listed the actions.
    @Test func aKeyValueWordWhereTheActionGoesSaysWhichOptionToUse() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.releaseWithAVariable)
        let variable = try box.run(["run", "wf.yaml", "version=2"])
        #expect(variable.status == 2, "\(variable)")
        #expect(variable.stderr == "error: unknown action `version=2`\nhelp: `version` is a variable of the workflow: set it with --var version=2\n",
                "\(variable)")
        let param = try box.run(["plan", "wf.yaml", "tag=v1"])
        #expect(param.status == 2, "\(param)")
        #expect(param.stderr == "error: unknown action `tag=v1`\nhelp: `tag` is a parameter of action `release`: run it alone with FILE release --with tag=v1\n",
                "\(param)")
        let neither = try box.run(["graph", "wf.yaml", "region=eu"])
        #expect(neither.status == 2, "\(neither)")
        #expect(neither.stderr == "error: unknown action `region=eu`\nhelp: flow takes no `key=value` words: --var region=eu sets a variable of the workflow, FILE ACTION --with region=eu a parameter of ACTION\n",
                "\(neither)")
    }

    /// make's `VERSION=2` for a Makefile ported as the migration guide says (`$(VERSION)` →
    /// `vars.version`): names are case-sensitive, and the help said `--var VERSION=2`, which
    /// was then refused as an unknown variable. It names the spelling that sets one.
    @Test func aKeyValueWordInAnotherCaseNamesTheVariableItMeans() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.releaseWithAVariable)
        let variable = try box.run(["run", "wf.yaml", "VERSION=2"])
        #expect(variable.status == 2, "\(variable)")
        #expect(variable.stderr == "error: unknown action `VERSION=2`\nhelp: `version` is a variable of the workflow (names are case-sensitive): set it with --var version=2\n",
                "\(variable)")
        let param = try box.run(["plan", "wf.yaml", "TAG=v1"])
        #expect(param.status == 2, "\(param)")
        #expect(param.stderr == "error: unknown action `TAG=v1`\nhelp: `tag` is a parameter of action `release` (names are case-sensitive): run it alone with FILE release --with tag=v1\n",
                "\(param)")
    }

    /// `task clean build`, `just lint test`, `make clean all` run several targets in one
    /// command; flow runs one ACTION. The error said only "Unexpected argument 'build'":
    /// it now names the argument it would have been and says to give it its own command.
    @Test func aSecondActionSaysThatRunTakesOne() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.releaseWithAVariable)
        let second = try box.run(["run", "wf.yaml", "release", "release"])
        #expect(second.status == 2, "\(second)")
        #expect(second.stderr.hasPrefix("""
            Error: Unexpected argument 'release'
            Help:  <action>  Run only this action of the workflow (its params come from --with).
                   'flow run' takes one <action>: give 'release' a command of its own; a value goes in with --var NAME=release or --with NAME=release
            Usage: flow run [<options>] <file> [<action>]

            """), "\(second)")
        // go-task's `task test -- -v` (CLI_ARGS): nothing is passed through to the steps.
        let passed = try box.run(["run", "wf.yaml", "release", "--", "-v"])
        #expect(passed.status == 2, "\(passed)")
        #expect(passed.stderr.hasPrefix("""
            Error: Unexpected argument '-v'
            Help:  --var <key=value>  Override a workflow variable.
                   'flow run' passes no words on to the commands it runs: give values as variables

            """), "\(passed)")
    }

    /// go-task's `task -- -v` (the default task, `-v` for `{{.CLI_ARGS}}`): after `--` the
    /// word lands in ACTION's place, and the error listed the actions, where `flow run
    /// wf.yaml release -- -v` says that flow passes no words on. It says so here too.
    @Test func aDashWordAfterDoubleDashInActionsPlaceSaysNothingIsPassedOn() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.releaseWithAVariable)
        let run = try box.run(["run", "wf.yaml", "--", "-v"])
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr == "error: unknown action `-v`\nhelp: flow took `-v`, after `--`, for ACTION; it passes no words on to the commands it runs: give values as variables (--var NAME=VALUE, read as ${{ vars.NAME }})\n",
                "\(run)")
    }

    /// workflows/makefile.yaml, the Makefile port, does what its comments say: `release`
    /// passes the version it finds to `deploy`, a failing smoke test rolls the deploy back,
    /// and `clean` of a clean tree is an allowed failure.
    @Test func theMakefileExampleRunsAsItsCommentsSay() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("flow-makefile-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        func run(_ words: [String]) throws -> FlowBinary.Result {
            try FlowBinary.run(["run", "workflows/makefile.yaml"] + words + ["--var", "out=\(out)", "--no-journal", "--output", "prefixed"],
                               in: FlowBinary.packageRoot)
        }
        let release = try run(["release"])
        #expect(release.status == 0, "\(release)")
        #expect(release.stdout.contains("live ghcr.io/acme/app:v1.4.0"), "\(release)")
        let failed = try run(["deploy", "--with", "tag=v2", "--with", "smoke=fail"])
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.stdout.contains("rolled back v2"), "\(failed)")
        #expect(failed.stderr.contains("↺ ship undone"), "\(failed)")
        #expect(!FileManager.default.fileExists(atPath: out + "/live"))
        #expect(try run(["clean"]).status == 0)
        let again = try run(["clean"])
        #expect(again.status == 0 && again.stderr.contains("(allowed to fail)"), "\(again)")
    }

    /// A graph of one action says which, as the plan's header does (`wf · action deploy`):
    /// before, its start node named the workflow alone, as if the graph were the whole run.
    @Test(arguments: ["mermaid", "dot"]) func aGraphOfOneActionNamesIt(format: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: shop
            actions:
              deploy:
                steps:
                  - print: deploying
            steps:
              - print: main
            """)
        let graph = try box.run(["graph", "wf.yaml", "deploy", "--format", format])
        #expect(graph.status == 0, "\(graph)")
        #expect(graph.stdout.contains(format == "dot" ? "[label=\"shop · action deploy\"" : "([\"shop · action deploy\"])"), "\(graph)")
        let plan = try box.run(["plan", "wf.yaml", "deploy"])
        #expect(plan.stdoutLines.first == "shop · action deploy (wf.yaml)", "\(plan)")
        let whole = try box.run(["graph", "wf.yaml", "--format", format])
        #expect(!whole.stdout.contains("action") && whole.stdout.contains("shop"), "\(whole)")
    }

    /// An action passing its own parameter on to another whose `allowed` refuses the value
    /// known before the run (a literal, a var, `--with`, a declared env): `flow plan` showed
    /// `inner(env=dev)` and exited 0, and `flow run` ran the outer action's first steps
    /// before failing at the inner `use`. Now plan and run refuse it before anything runs
    /// (exit 2), naming the `with` value and where the `params` came from.
    @Test func aKnownValuePassedOnThroughParamsIsCheckedBeforeTheRun() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            env:
              TARGET: evil
            actions:
              outer:
                params:
                  env: { required: true }
                steps:
                  - shell: echo side effect >> log
                  - use: inner
                    with: { env: "${{ params.env }}" }
              inner:
                params:
                  env: { required: true, allowed: [staging, prod] }
                steps:
                  - print: "inner ${{ params.env }}"
            steps:
              - use: outer
                with: { env: dev }
            """)
        #expect(try box.run(["validate", "wf.yaml"]).status == 0)
        let message = "error: wf.yaml:10:22: `dev` (from `${{ params.env }}`) is not an allowed value of `env` of action `inner`\n"
        for arguments in [["plan", "wf.yaml"], ["run", "wf.yaml", "--output", "prefixed"]] {
            let r = try box.run(arguments)
            #expect(r.status == 2 && r.stdout.isEmpty, "\(r)")
            #expect(r.stderr == message + "help: allowed: staging, prod; `params` are those of the use of `outer` at wf.yaml:17:5\n", "\(r)")
        }
        let action = try box.run(["run", "wf.yaml", "outer", "--with", "env=dev"])
        #expect(action.status == 2, "\(action)")
        #expect(action.stderr == message + "help: allowed: staging, prod; `params` are those of `outer` given on the command line\n", "\(action)")
        #expect(!box.exists("log"), "nothing ran")
        // A value known now that is allowed runs; one from the declared env is checked too.
        #expect(try box.run(["run", "wf.yaml", "outer", "--with", "env=prod"]).status == 0)
        #expect(box.lines("log") == ["side effect"])
        try box.write("env.yaml", """
            env:
              TARGET: evil
            actions:
              inner:
                params:
                  env: { required: true, allowed: [staging, prod] }
                steps:
                  - print: "inner ${{ params.env }}"
            steps:
              - shell: echo side effect >> log2
              - use: inner
                with: { env: "${{ env.TARGET }}" }
              - use: inner
                env: { TARGET: prod }
                with: { env: "${{ env.TARGET }}" }
            """)
        let env = try box.run(["run", "env.yaml"])
        #expect(env.status == 2, "\(env)")
        #expect(env.stderr == "error: env.yaml:12:18: `evil` (from `${{ env.TARGET }}`) is not an allowed value of `env` of action `inner`\nhelp: allowed: staging, prod\n", "\(env)")
        #expect(!box.exists("log2"), "nothing ran")
    }

    /// `use: ""` said "unknown action ``" with a "did you mean" of the nearest short name;
    /// an action with `steps: []` said "the steps of action `x` is empty", with the help
    /// "remove the group" (there is none). Both now say what is wrong and what to do.
    @Test func anEmptyUseOrActionSaysSo() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              a:
                steps: []
            steps:
              - use: ""
            """)
        try Self.expectInvalid(box, [
            "wf.yaml:3:12: error: `steps` of action `a` is empty [empty-group]",
            "^^ add at least one step, or remove the action\n",
            "wf.yaml:5:10: error: `use` names no action [unknown-action]",
            "^^ name one of `a`\n",
        ])
    }

    /// A GitHub Actions habit: `default: "${{ env.USER }}"`. flow's defaults are literal,
    /// so the steps got the text `${{ env.USER }}` without a word; now a warning says so
    /// (the run still runs, as the format says; `--strict` refuses it).
    @Test func anExpressionInAParamDefaultIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              greet:
                params:
                  who: { default: "${{ env.USER }}" }
                steps:
                  - print: "hello ${{ params.who }}"
            steps:
              - use: greet
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 0, "\(validate)")
        #expect(validate.stderr.contains(
            "wf.yaml:4:23: warning: the default of `who` is literal: its `${{ … }}` is not expanded [unexpanded-expression]"), "\(validate)")
        #expect(validate.stderr.contains("give the value at the `use` site instead: `with: {who: \"${{ … }}\"}`"), "\(validate)")
        #expect(try box.run(["validate", "--strict", "wf.yaml"]).status == 1)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 0 && run.stdout.contains("hello ${{ env.USER }}"), "\(run)")
    }

    /// A misspelt allowed value (`prdo`, `Prod`) got only the list of allowed values, where
    /// a misspelt key, action or parameter gets "did you mean": in the file, in a default,
    /// on the command line (`--with`) and from a `--var` the plan judges.
    @Test func aMisspeltAllowedValueGetsADidYouMean() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars:
              target: staging
            actions:
              deploy:
                params:
                  env: { required: true, allowed: [staging, prod] }
                  mode: { default: fsat, allowed: [fast, safe] }
                steps:
                  - print: "${{ params.env }} ${{ params.mode }}"
            steps:
              - use: deploy
                with: { env: prdo }
              - use: deploy
                with: { env: Prod, mode: safe }
              - use: deploy
                with: { env: "${{ vars.target }}", mode: safe }
            """)
        try Self.expectInvalid(box, [
            "wf.yaml:7:24: error: the default `fsat` of `mode` is not an allowed value [disallowed-param]",
            "^^^^ did you mean `fast`? allowed: `fast`, `safe`\n",
            "wf.yaml:12:18: error: `prdo` is not an allowed value of `env` [disallowed-param]",
            "^^^^ did you mean `prod`? allowed: `staging`, `prod`\n",
            "wf.yaml:14:18: error: `Prod` is not an allowed value of `env` [disallowed-param]",
            "^^^^ did you mean `prod`? allowed: `staging`, `prod`\n",
            "3 errors in 1 file\n",
        ])
        try box.write("ok.yaml", """
            vars:
              target: staging
            actions:
              deploy:
                params:
                  env: { required: true, allowed: [staging, prod] }
                steps:
                  - print: "${{ params.env }}"
            steps:
              - use: deploy
                with: { env: "${{ vars.target }}" }
            """)
        let with = try box.run(["run", "ok.yaml", "deploy", "--with", "env=prdo"])
        #expect(with.status == 2, "\(with)")
        #expect(with.stderr == "error: `prdo` is not an allowed value of `env`\nhelp: did you mean `prod`? allowed: staging, prod\n", "\(with)")
        let variable = try box.run(["plan", "ok.yaml", "--var", "target=stagin"])
        #expect(variable.status == 2, "\(variable)")
        #expect(variable.stderr.hasSuffix("help: did you mean `staging`? allowed: staging, prod\n"), "\(variable)")
    }

    /// An action is a list of steps, not a step: a library author who writes `undo:`,
    /// `finally:`, `timeout:` or `outputs:` on the action itself (as on a GitHub composite
    /// action's `outputs`, or the rollback of a `deploy`) got "unknown key" with no help.
    /// Now the help says where the option goes.
    @Test func aStepOptionOnAnActionSaysWhereItGoes() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                undo: ./rollback.sh
                finally:
                  - print: done
                outputs: [url]
                timeout: 5m
                name: deploy
                steps:
                  - shell: ./deploy.sh
            steps:
              - use: deploy
            """)
        let validate = try Self.expectInvalid(box, [
            "wf.yaml:3:5: error: unknown key `undo` in action `deploy` [unknown-key]",
            "^^^^ `undo` is an option of a step: give the action's steps their own `undo` (each reverses its step, "
                + "seeing the params of its use), or set it on the `use` step\n",
            "wf.yaml:4:5: error: unknown key `finally` in action `deploy` [unknown-key]",
            "^^^^^^^ an action has no `finally`: wrap its steps in a `sequential` group with `finally:` "
                + "(those steps run after the group's, whatever happened)\n",
            "wf.yaml:6:5: error: unknown key `outputs` in action `deploy` [unknown-key]",
            "^^^^^^^ actions pass no outputs back: its steps' outputs are seen only inside it; compute the value "
                + "in a shell step before the `use` and pass it in with `with:`\n",
            "wf.yaml:7:5: error: unknown key `timeout` in action `deploy` [unknown-key]",
            "^^^^^^^ `timeout` is an option of a step: set it on the `use` step (it then covers the action's steps "
                + "as one group), or on steps inside the action\n",
            "wf.yaml:8:5: error: unknown key `name` in action `deploy` [unknown-key]",
            "^^^^ an action is named by its key under `actions:`; `name` on a `use` step names that one use\n",
        ])
        #expect(validate.stderr.hasSuffix("5 errors in 1 file\n"), "\(validate)")
    }

    /// `flow run FILE deploy` with two required parameters missing named only the first:
    /// the user added it and ran again to learn of the second. `flow validate` reports
    /// each at the `use` site at once; the command line now names them all too.
    @Test func everyMissingParameterOfActionIsNamedAtOnce() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true }
                  region: { default: eu }
                  version: { required: true }
                steps:
                  - print: "${{ params.env }} ${{ params.region }} ${{ params.version }}"
            steps:
              - print: main
            """)
        let both = try box.run(["run", "wf.yaml", "deploy"])
        #expect(both.status == 2 && both.stdout.isEmpty, "\(both)")
        #expect(both.stderr == "error: action `deploy` needs the parameters `env`, `version`\n"
                + "help: pass them with --with env=VALUE --with version=VALUE\n", "\(both)")
        let one = try box.run(["plan", "wf.yaml", "deploy", "--with", "version=1"])
        #expect(one.status == 2, "\(one)")
        #expect(one.stderr == "error: action `deploy` needs the parameter `env`\nhelp: pass it with --with env=VALUE\n", "\(one)")
    }

    /// `--output json` gave a `use` step's events its `kind` and `name` only: a consumer
    /// of the stream could not tell which action `staging` or `use@1` ran, where
    /// `flow plan --format json` says it. Each `use` step's events now carry `action`.
    @Test func jsonEventsOfAUseStepNameItsAction() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true }
                steps:
                  - print: "deploy ${{ params.env }}"
              release:
                steps:
                  - use: deploy
                    name: staging
                    with: { env: staging }
            steps:
              - use: release
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "json", "--no-journal"])
        #expect(run.status == 0, "\(run)")
        var actions: [String: Set<String>] = [:]
        for line in run.stdoutLines {
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard event["event"] as? String == "step_state", let step = event["step"] as? String else { continue }
            actions[step, default: []].insert(event["action"] as? String ?? "-")
        }
        #expect(actions == ["1": ["release"], "1.1": ["deploy"], "1.1.1": ["-"]], "\(run)")
        #expect(run.stdoutLines.contains { $0.contains(#""name":"staging","kind":"use","action":"deploy","from":"pending""#) }, "\(run)")
    }

    /// A GitHub Actions habit (`name: Deploy ${{ inputs.env }}`): `description: "Deploy
    /// ${{ params.env }}"`. Descriptions are literal, so `flow plan` showed the braces, and
    /// the param read only there got "never used" with the help to write just that.
    /// Now a warning says the description is literal.
    @Test func anExpressionInADescriptionIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                description: "Deploy ${{ params.env }}"
                params:
                  env: { description: "${{ vars.x }}" }
                steps:
                  - print: deploying
                    description: "to ${{ params.env }}"
            steps:
              - use: deploy
                with: { env: prod }
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 0, "\(validate)")
        for location in ["3:18", "5:27", "8:22"] {
            #expect(validate.stderr.contains("wf.yaml:\(location): warning: a `description` is literal: its `${{ … }}` is not expanded [unexpanded-expression]"),
                    "\(location)\n\(validate)")
        }
        #expect(validate.stderr.contains("it is shown as written; `flow plan` shows each step's command and message with the values resolved"), "\(validate)")
        #expect(try box.run(["validate", "--strict", "wf.yaml"]).status == 1)
    }

    /// An empty value outside `allowed` (`with: { env: }`, `--with env=`, an output not
    /// written) was named `` `` ``: an empty code span, two stray backticks to the reader.
    /// It is "the empty string" now, wherever the value is judged.
    @Test func anEmptyDisallowedValueIsNamedInWords() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true, allowed: [staging, prod] }
                  mode: { default: "", allowed: [fast, safe] }
                steps:
                  - print: "${{ params.env }} ${{ params.mode }}"
            steps:
              - use: deploy
                with: { env: }
            """)
        let validate = try Self.expectInvalid(box, [
            "wf.yaml:5:24: error: the empty default of `mode` is not an allowed value [disallowed-param]",
            "wf.yaml:10:18: error: the empty string is not an allowed value of `env` [disallowed-param]",
        ])
        #expect(!validate.stderr.contains("``"), "\(validate)")
        try box.write("ok.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true, allowed: [staging, prod] }
                steps:
                  - print: "${{ params.env }}"
            steps:
              - name: pick
                shell: "true"
              - use: deploy
                name: d
                with: { env: "${{ steps.pick.outputs.env }}" }
            """)
        let with = try box.run(["run", "ok.yaml", "deploy", "--with", "env="])
        #expect(with.status == 2, "\(with)")
        #expect(with.stderr == "error: the empty string is not an allowed value of `env`\nhelp: allowed: staging, prod\n", "\(with)")
        let run = try box.run(["run", "ok.yaml", "--output", "prefixed", "--no-journal"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("✗ d the empty string is not an allowed value of `env` (allowed: staging, prod)"), "\(run)")
    }

    /// `--with` given twice for one parameter: the last one wins, as for `--var` (a
    /// script appends an override to a default list of options). Pinned, as docs/cli.md says.
    @Test func aRepeatedWithTakesTheLastValue() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true, allowed: [staging, prod] }
                steps:
                  - print: "deploy ${{ params.env }}"
            steps:
              - print: main
            """)
        let run = try box.run(["run", "wf.yaml", "deploy", "--with", "env=prod", "--with", "env=staging", "--output", "raw", "--no-journal"])
        #expect(run.status == 0 && run.stdout == "deploy staging\n", "\(run)")
    }

    /// `flow plan FILE deploy --with env=prod` headed the tree `wf · action deploy`: the
    /// params it would run with (`--with`, and the defaults) were nowhere, where each `use`
    /// line in a tree shows its action's. The header and the JSON's `with` show them now.
    @Test func aPlanOfOneActionShowsItsParams() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true }
                  region: { default: eu }
                steps:
                  - print: "${{ params.env }} ${{ params.region }}"
            steps:
              - print: main
            """)
        let plan = try box.run(["plan", "wf.yaml", "deploy", "--with", "env=prod"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.first == "wf · action deploy(env=prod, region=eu) (wf.yaml)", "\(plan)")
        let dry = try box.run(["run", "wf.yaml", "deploy", "--with", "env=prod", "--dry-run"])
        #expect(dry.stdoutLines.first == "wf · action deploy(env=prod, region=eu) (wf.yaml)", "\(dry)")
        let json = try box.run(["plan", "wf.yaml", "deploy", "--with", "env=prod", "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["with"] as? [String: String] == ["env": "prod", "region": "eu"], "\(json)")
        let whole = try box.run(["plan", "wf.yaml", "--format", "json"])
        let wholeObject = try #require(try JSONSerialization.jsonObject(with: Data(whole.stdout.utf8)) as? [String: Any])
        #expect(wholeObject["with"] is NSNull, "\(whole)")
    }

    /// A monorepo's `check` action used once per package, its steps in
    /// `dir: packages/${{ params.pkg }}`: `flow plan` resolved the params in each step's
    /// command but showed its `dir` as written, `[dir packages/${{ params.pkg }}]` on
    /// every use, so the plan did not say which package a step ran in (`--format json`
    /// resolved it). The `dir` is shown with the values its command is shown with.
    @Test func aPlanShowsAnActionsDirWithItsParams() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              check:
                params:
                  pkg: { required: true }
                steps:
                  - name: lint
                    dir: packages/${{ params.pkg }}
                    env: { SUB: src }
                    shell: ./lint.sh
                  - name: test
                    dir: packages/${{ params.pkg }}/${{ env.SUB }}
                    env: { SUB: tests }
                    shell: ./test.sh "${{ params.pkg }}"
            steps:
              - use: check
                name: alpha
                with: { pkg: alpha }
              - use: check
                name: beta
                with: { pkg: beta }
            """)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan)")
        for line in [
            "│  ├─ shell lint: ./lint.sh  [dir packages/alpha]",
            "│  └─ shell test: ./test.sh \"alpha\"  [dir packages/alpha/tests]",
            "   ├─ shell lint: ./lint.sh  [dir packages/beta]",
            "   └─ shell test: ./test.sh \"beta\"  [dir packages/beta/tests]",
        ] {
            #expect(plan.stdout.contains(line + "\n"), "\(line)\n\(plan)")
        }
        #expect(!plan.stdout.contains("${{"), "\(plan)")
    }

    /// `--only` of a step inside an action (each package's `test` in a monorepo's `check`
    /// action) is refused; the help said `run the action alone: FILE check --only test`,
    /// leaving the file to retype and the required `pkg` to find out from the next error.
    /// It now names the file as given (quoted for a shell where needed) and the required
    /// parameters, and so does the help for a workflow step named with ACTION.
    @Test func onlyOfAnActionStepGivesTheCommandToType() throws {
        let box = try RunSandbox()
        let text = """
            actions:
              check:
                params:
                  pkg: { required: true }
                  level: { default: "1" }
                steps:
                  - name: test
                    shell: echo "${{ params.pkg }} ${{ params.level }}"
            steps:
              - name: version
                shell: "true"
              - use: check
                with: { pkg: alpha }
            """
        try box.write("wf.yaml", text)
        try box.write("my ci.yaml", text)
        let plain = try box.run(["run", "wf.yaml", "--only", "test"])
        #expect(plain.status == 2, "\(plain)")
        #expect(plain.stderr.contains("help: to select it, run the action alone: wf.yaml check --with pkg=VALUE --only test\n"), "\(plain)")
        let spaced = try box.run(["plan", "my ci.yaml", "--only", "test"])
        #expect(spaced.stderr.contains("help: to select it, run the action alone: 'my ci.yaml' check --with pkg=VALUE --only test\n"), "\(spaced)")
        let workflowStep = try box.run(["plan", "./wf.yaml", "check", "--with", "pkg=a", "--only", "version"])
        #expect(workflowStep.status == 2, "\(workflowStep)")
        #expect(workflowStep.stderr.contains("help: to select it, leave out the action: ./wf.yaml --only version\n"), "\(workflowStep)")
        // The command the help gives does what it says.
        let given = try box.run(["run", "wf.yaml", "check", "--with", "pkg=beta", "--only", "test", "--output", "prefixed"])
        #expect(given.status == 0 && given.stdout.contains("beta 1"), "\(given)")
    }
}
