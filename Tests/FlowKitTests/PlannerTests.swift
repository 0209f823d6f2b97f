@testable import FlowKit
import Testing

/// Workflow → Plan: defaults, environments, actions, --var/--with, selection, summary.
@Suite struct PlannerTests {
    static func plan(_ yaml: String, _ configure: (inout PlanOptions) -> Void = { _ in }) throws -> Plan {
        let workflow = try valid(yaml)
        var options = PlanOptions()
        configure(&options)
        return try Planner.plan(workflow, options: options)
    }

    static func planError(_ yaml: String, _ configure: (inout PlanOptions) -> Void) throws -> PlanError? {
        let workflow = try valid(yaml)
        var options = PlanOptions()
        configure(&options)
        do {
            _ = try Planner.plan(workflow, options: options)
            return nil
        } catch {
            return error
        }
    }

    /// `label: selected?` for every step, in plan order.
    static func selection(_ plan: Plan) -> [String] {
        plan.steps.map { "\($0.label)\($0.selected ? "" : " ○")" }
    }

    /// A plan for running works out each plain command's argv for a direct exec (as make
    /// and go-task skip the shell); one only printed (`plan`, `graph`, `--dry-run`) does
    /// not, and is otherwise the same.
    @Test func onlyAPlanForRunningWorksOutDirectExecs() throws {
        let workflow = try valid("""
            steps:
              - shell: /bin/echo hello world
              - shell: echo "$HOME" | cat
            """)
        func argvs(_ plan: Plan) -> [[String]?] {
            plan.steps.map { if case .shell(let task) = $0.kind { task.directArgv } else { nil } }
        }
        let running = try Planner.plan(workflow)
        let shown = try Planner.plan(workflow, forRunning: false)
        #expect(argvs(running) == [["/bin/echo", "hello", "world"], nil])
        #expect(argvs(shown) == [nil, nil])
        #expect(PlanPrinter(plan: running).text() == PlanPrinter(plan: shown).text())
    }

    // MARK: Defaults and environment

    /// docs/workflow-format.md: "Decision — defaults apply to `shell` steps only."
    @Test func defaultsApplyToShellStepsOnly() throws {
        let plan = try Self.plan("""
            defaults:
              timeout: 10m
              retry: 2
              continue_on_error: true
              dir: /work
            steps:
              - name: group
                sequential:
                  - name: leaf
                    shell: make
                  - name: own
                    shell: make
                    timeout: 1s
                    retry: 0
                    continue_on_error: false
                    dir: /own
                  - name: wait
                    delay: 1s
              - name: conc
                concurrent: [a, b]
            """)
        let steps = Dictionary(uniqueKeysWithValues: plan.steps.compactMap { node in node.name.map { ($0, node) } })
        let group = try #require(steps["group"])
        #expect(group.timeout == nil)
        #expect(group.retry == nil)
        #expect(group.continueOnError == false)
        #expect(steps["conc"]?.timeout == nil)
        let leaf = try #require(steps["leaf"])
        #expect(leaf.timeout == .seconds(600))
        #expect(leaf.retry?.limit == 2)
        #expect(leaf.continueOnError)
        guard case .shell(let task) = leaf.kind else { Issue.record("not shell"); return }
        #expect(task.dir?.raw == "/work")
        let own = try #require(steps["own"])
        #expect(own.timeout == .seconds(1))
        #expect(own.retry?.limit == 0)
        #expect(own.continueOnError == false)
        guard case .shell(let ownTask) = own.kind else { Issue.record("not shell"); return }
        #expect(ownTask.dir?.raw == "/own")
        #expect(steps["wait"]?.timeout == nil, "a delay is not a shell step")
        #expect(steps["wait"]?.retry == nil)
        #expect(steps["wait"]?.continueOnError == false)
        // The children of `conc` are shell steps.
        #expect(plan.root.children[1].children.allSatisfy { $0.timeout == .seconds(600) })
    }

    @Test func environmentIsMergedDownTheTree() throws {
        let plan = try Self.plan("""
            env:
              A: workflow
              B: workflow
            steps:
              - env:
                  B: group
                  C: group
                sequential:
                  - name: leaf
                    shell: x
                    env:
                      C: step
                      D: step
              - name: plain
                shell: y
            """)
        let leaf = try #require(plan.steps.first { $0.name == "leaf" })
        #expect(leaf.env.map { "\($0.name.value)=\($0.value.raw)" } == ["A=workflow", "B=workflow", "B=group", "C=group", "C=step", "D=step"])
        // Later entries win, as the static context resolves them.
        let context = StaticContext(vars: [:], workflowName: "wf", env: leaf.env)
        #expect(context.value(of: ["env", "B"]) == .string("group"))
        #expect(context.value(of: ["env", "C"]) == .string("step"))
        #expect(plan.steps.first { $0.name == "plain" }?.env.map(\.name.value) == ["A", "B"])
    }

    @Test func shellProgramComesFromTheNearestGroup() throws {
        let plan = try Self.plan("""
            shell: bash
            steps:
              - name: top
                shell: x
              - shell: zsh
                sequential:
                  - name: inner
                    shell: y
            """)
        func program(_ name: String) -> String? {
            guard case .shell(let task) = plan.steps.first(where: { $0.name == name })?.kind else { return nil }
            return task.program.name
        }
        #expect(program("top") == "bash")
        #expect(program("inner") == "zsh")
    }

    // MARK: Actions

    static let actions = """
        vars:
          region: eu-north-1
        actions:
          deploy:
            description: Deploy one environment
            params:
              env: { required: true, allowed: [staging, prod] }
              region: { default: eu-west-1 }
            steps:
              - name: upload
                shell: ./deploy.sh "${{ params.env }}" "${{ params.region }}"
              - print: done
        steps:
          - use: deploy
            name: staging
            with: { env: staging }
          - use: deploy
            with: { env: prod, region: "${{ vars.region }}" }
        """

    @Test func actionsAreExpandedWithParamsAndDefaults() throws {
        let plan = try Self.plan(Self.actions)
        #expect(plan.root.children.count == 2)
        let first = plan.root.children[0]
        guard case .use(let action, let with) = first.kind else { Issue.record("not a use node"); return }
        #expect(action == "deploy")
        #expect(with.map { "\($0.name)=\($0.value.raw)" } == ["env=staging", "region=eu-west-1"])
        #expect(first.name == "staging")
        #expect(first.description == "Deploy one environment", "the action's description when the step has none")
        #expect(first.children.map(\.path) == ["1.1", "1.2"])
        #expect(first.children[0].name == "upload")
        #expect(first.children[0].scope != plan.root.children[1].children[0].scope, "each invocation has its own scope")
        guard case .use(_, let secondWith) = plan.root.children[1].kind else { Issue.record("not a use node"); return }
        #expect(secondWith.map { "\($0.name)=\($0.value.raw)" } == ["env=prod", "region=${{ vars.region }}"])
        // The printed plan resolves params and vars.
        let text = PlanPrinter(plan: plan).text()
        #expect(text.contains(#"./deploy.sh "staging" "eu-west-1""#))
        #expect(text.contains(#"./deploy.sh "prod" "eu-north-1""#))
        #expect(PlanSummary(plan: plan).total == 6)
    }

    @Test func planOfOneActionWithParams() throws {
        let plan = try Self.plan(Self.actions) {
            $0.action = "deploy"
            $0.with = [("env", "prod")]
        }
        #expect(plan.action == "deploy")
        guard case .use(_, let with) = plan.root.kind else { Issue.record("the root is the invocation"); return }
        #expect(with.map { "\($0.name)=\($0.value.raw)" } == ["env=prod", "region=eu-west-1"])
        #expect(plan.root.children.map(\.path) == ["1", "2"])
        #expect(PlanPrinter(plan: plan).text().contains(#"./deploy.sh "prod" "eu-west-1""#))
    }

    @Test func actionPlanErrors() throws {
        let missing = try Self.planError(Self.actions) { $0.action = "deploy" }
        #expect(missing?.message.contains("`env`") == true)
        #expect(missing?.help?.contains("--with env=") == true)
        #expect(try Self.planError(Self.actions) { $0.action = "deploy"; $0.with = [("env", "dev")] } != nil)
        #expect(try Self.planError(Self.actions) { $0.action = "deploy"; $0.with = [("env", "prod"), ("regoin", "x")] }?.help
            == "did you mean `region`?")
        #expect(try Self.planError(Self.actions) { $0.action = "deplyo" }?.help == "did you mean `deploy`?")
    }

    // MARK: Variables

    @Test func varOverride() throws {
        let yaml = """
            vars:
              target: world
              other: x
            steps:
              - print: "hello ${{ vars.target }} ${{ vars.other }}"
            """
        let plan = try Self.plan(yaml) { $0.vars = [("target", "prod")] }
        #expect(plan.variable("target") == "prod")
        #expect(plan.variable("other") == "x")
        #expect(plan.vars.map(\.name) == ["target", "other"], "declaration order is kept")
        #expect(PlanPrinter(plan: plan).text().contains("print: hello prod x"))
        let empty = try Self.plan(yaml) { $0.vars = [("target", "")] }
        #expect(PlanPrinter(plan: empty).text().contains("print: hello  x"))
    }

    @Test func unknownVarIsAPlanError() throws {
        let error = try Self.planError("vars: {target: x}\nsteps:\n  - print: ${{ vars.target }}\n") {
            $0.vars = [("traget", "y")]
        }
        #expect(error?.message.contains("`traget`") == true)
        #expect(error?.help == "did you mean `target`?")
    }

    // MARK: Selection

    static let tagged = """
        steps:
          - name: build
            shell: make
            tags: [build]
          - name: tests
            tags: [test]
            concurrent:
              - name: unit
                shell: u
              - name: slow
                shell: s
                tags: [slow]
          - name: notify
            print: done
            tags: [always]
          - name: other
            sequential:
              - name: lint
                shell: l
                tags: [lint]
              - name: fmt
                shell: f
        finally:
          - name: cleanup
            shell: c
        """

    @Test func noSelectionSelectsEverything() throws {
        let plan = try Self.plan(Self.tagged)
        #expect(plan.steps.allSatisfy { $0.selected })
        let summary = PlanSummary(plan: plan)
        #expect(summary.total == 9)
        #expect(summary.selected == 9)
        #expect(!summary.text.contains("selected"))
    }

    @Test func tagsSelectStepsAndTheirDescendants() throws {
        let plan = try Self.plan(Self.tagged) { $0.tags = ["test"] }
        #expect(Self.selection(plan) == [
            "build ○", "tests", "unit", "slow", "notify", "other ○", "lint ○", "fmt ○", "cleanup ○",
        ])
        #expect(PlanSummary(plan: plan).selected == 4)
    }

    @Test func tagsInsideAGroupSelectTheGroupToo() throws {
        let plan = try Self.plan(Self.tagged) { $0.tags = ["lint", "build"] }
        #expect(Self.selection(plan) == [
            "build", "tests ○", "unit ○", "slow ○", "notify", "other", "lint", "fmt ○", "cleanup ○",
        ])
    }

    @Test func groupThatEndsUpEmptyIsNotSelected() throws {
        // Only `always` steps: the group holds none of them.
        let plan = try Self.plan(Self.tagged) { $0.tags = ["always"] }
        #expect(Self.selection(plan) == [
            "build ○", "tests ○", "unit ○", "slow ○", "notify", "other ○", "lint ○", "fmt ○", "cleanup ○",
        ])
        #expect(!plan.root.children[1].selected)
    }

    @Test func skipTagsOnLeaves() throws {
        let plan = try Self.plan(Self.tagged) { $0.skipTags = ["slow", "lint"] }
        #expect(Self.selection(plan) == [
            "build", "tests", "unit", "slow ○", "notify", "other", "lint ○", "fmt", "cleanup",
        ])
    }

    @Test func skipTagsWinOverTags() throws {
        let plan = try Self.plan(Self.tagged) { $0.tags = ["test"]; $0.skipTags = ["slow"] }
        #expect(Self.selection(plan) == [
            "build ○", "tests", "unit", "slow ○", "notify", "other ○", "lint ○", "fmt ○", "cleanup ○",
        ])
    }

    @Test func alwaysIsSkippedOnlyWhenAskedFor() throws {
        let plan = try Self.plan(Self.tagged) { $0.tags = ["build"]; $0.skipTags = ["always"] }
        #expect(Self.selection(plan).prefix(5) == ["build", "tests ○", "unit ○", "slow ○", "notify ○"])
    }

    @Test func skipTagsOnAGroupSkipEverythingInside() throws {
        let plan = try Self.plan(Self.tagged) { $0.skipTags = ["test"] }
        #expect(!plan.root.children[1].selected)
        #expect(Self.selection(plan) == [
            "build", "tests ○", "unit ○", "slow ○", "notify", "other", "lint", "fmt", "cleanup",
        ])
        #expect(PlanSummary(plan: plan).selected == 6)
    }

    @Test func skipTagsOnAUseStepSkipTheActionsSteps() throws {
        let plan = try Self.plan("""
            actions:
              a:
                steps:
                  - delay: 3s
            steps:
              - use: a
                tags: [slow]
              - print: x
            """) { $0.skipTags = ["slow"] }
        #expect(!plan.root.children[0].selected)
        #expect(!plan.root.children[0].children[0].selected)
        #expect(PlanSummary(plan: plan).selected == 1)
    }

    @Test func alwaysTagOnAGroupSelectsItsSteps() throws {
        let plan = try Self.plan("""
            steps:
              - name: build
                shell: make
                tags: [build]
              - name: report
                tags: [always]
                sequential:
                  - name: r1
                    shell: x
            """) { $0.tags = ["build"] }
        #expect(Self.selection(plan) == ["build", "report", "r1"])
    }

    @Test func onlySelectsOneStepWithItsGroups() throws {
        let plan = try Self.plan(Self.tagged) { $0.only = "slow" }
        #expect(Self.selection(plan) == [
            "build ○", "tests", "unit ○", "slow", "notify ○", "other ○", "lint ○", "fmt ○", "cleanup ○",
        ])
    }

    @Test func onlyAGroupSelectsAllOfIt() throws {
        let plan = try Self.plan(Self.tagged) { $0.only = "other" }
        #expect(Self.selection(plan) == [
            "build ○", "tests ○", "unit ○", "slow ○", "notify ○", "other", "lint", "fmt", "cleanup ○",
        ])
    }

    @Test func onlyAFinallyStep() throws {
        let plan = try Self.plan(Self.tagged) { $0.only = "cleanup" }
        #expect(Self.selection(plan).filter { !$0.hasSuffix("○") } == ["cleanup"])
    }

    @Test func onlyCombinesWithTags() throws {
        let plan = try Self.plan(Self.tagged) { $0.only = "other"; $0.tags = ["lint"] }
        #expect(Self.selection(plan).filter { !$0.hasSuffix("○") } == ["other", "lint"])
    }

    @Test func unknownOnlyIsAPlanError() throws {
        let error = try Self.planError(Self.tagged) { $0.only = "lnt" }
        #expect(error?.help == "did you mean `lint`?")
    }

    // MARK: Summary

    /// The plan's shortest wall time in seconds, rounded to the microsecond.
    static func wallTime(_ yaml: String, _ configure: (inout PlanOptions) -> Void = { _ in }) throws -> Double {
        (PlanSummary(plan: try plan(yaml, configure)).shortestWallTime.seconds * 1e6).rounded() / 1e6
    }

    @Test func wallTimeOfSequentialAndConcurrentDelays() throws {
        #expect(try Self.wallTime("steps:\n  - delay: 1s\n  - delay: 2s\n  - shell: x\n") == 3)
        #expect(try Self.wallTime("steps:\n  - concurrent:\n      - delay: 1s\n      - delay: 3s\n      - delay: 2s\n") == 3)
    }

    @Test(arguments: [
        ("[3s, 1s, 1s, 1s]", 2, 3.0),
        ("[2s, 2s, 2s]", 2, 4.0),
        ("[1s, 2s, 3s]", 1, 6.0),
        ("[1s, 1s, 1s, 1s]", 3, 2.0),
        ("[1s, 2s]", 5, 2.0),
        ("[500ms, 1s, 1500ms, 2s]", 2, 3.0),
    ])
    func wallTimeWithMaxParallel(delays: String, maxParallel: Int, seconds: Double) throws {
        let steps = delays.dropFirst().dropLast().split(separator: ",").map { "      - delay: \(String($0).filter { $0 != " " })" }
        let yaml = "steps:\n  - concurrent:\n" + steps.joined(separator: "\n") + "\n    max_parallel: \(maxParallel)\n"
        #expect(try Self.wallTime(yaml) == seconds)
    }

    @Test func wallTimeOfNestedGroupsFinallyAndActions() throws {
        let yaml = """
            actions:
              pause:
                steps:
                  - delay: 2s
            steps:
              - concurrent:
                  - sequential:
                      - delay: 1s
                      - delay: 1s
                  - use: pause
                  - delay: 500ms
                    tags: [quick]
                finally:
                  - delay: 1s
              - delay: 250ms
                tags: [quick]
            finally:
              - delay: 100ms
            """
        #expect(try Self.wallTime(yaml) == 3.35)
        // Steps that are not selected take no time.
        #expect(try Self.wallTime(yaml) { $0.tags = ["quick"] } == 0.75)
    }

    /// The shortest wall time is the least the run can take: a `timeout` bounds a step or
    /// group (its `finally` still runs after it), a step that must time out fails its group
    /// (the later steps are skipped), and a step whose `if` is false, or not known before
    /// the run, may take no time.
    @Test(arguments: [
        ("steps:\n  - delay: 10s\n    timeout: 1s\n", 1.0),
        ("steps:\n  - delay: 1s\n    timeout: 10s\n  - delay: 2s\n", 3.0),
        ("steps:\n  - delay: 10s\n    timeout: 1s\n  - delay: 5s\n", 1.0),
        ("steps:\n  - delay: 10s\n    timeout: 1s\n    continue_on_error: true\n  - delay: 5s\n", 6.0),
        ("steps:\n  - delay: 5s\n    if: false\n  - delay: 1s\n", 1.0),
        ("steps:\n  - delay: 5s\n    if: ${{ false }}\n", 0.0),
        ("vars: {a: x}\nsteps:\n  - delay: 5s\n    if: vars.a == 'x'\n  - delay: 1s\n    if: vars.a == 'y'\n", 5.0),
        ("steps:\n  - delay: 5s\n    if: env.CI == 'true'\n  - delay: 1s\n    if: always()\n  - delay: 2s\n    if: failure()\n", 1.0),
        ("steps:\n  - sequential:\n      - delay: 3s\n    finally:\n      - delay: 1s\n    timeout: 2s\n  - delay: 9s\n", 3.0),
        ("steps:\n  - concurrent:\n      - delay: 4s\n      - delay: 9s\n        timeout: 500ms\n  - delay: 9s\n", 0.5),
        ("steps:\n  - concurrent:\n      - delay: 4s\n      - delay: 9s\n        timeout: 500ms\n    fail_fast: false\n  - delay: 9s\n", 4.0),
        // A step that may be skipped (its `if` is unknown) but must time out if it runs.
        ("steps:\n  - delay: 10s\n    timeout: 1s\n    if: env.X == '1'\n  - delay: 5s\n", 1.0),
        // A group whose steps may take past its timeout (one of them may be skipped).
        ("steps:\n  - sequential:\n      - delay: 1s\n      - delay: 20s\n        if: env.X == '1'\n    timeout: 10s\n  - delay: 30s\n", 10.0),
        ("steps:\n  - delay: 1s\nfinally:\n  - delay: 10s\n    timeout: 2s\n  - delay: 1s\n", 4.0),
        // A step `max_parallel` holds back fails no sooner than it starts, fail_fast or not.
        ("steps:\n  - concurrent:\n      - delay: 2s\n      - delay: 3s\n        timeout: 2s\n    max_parallel: 1\n", 4.0),
        ("steps:\n  - concurrent:\n      - delay: 2s\n      - delay: 3s\n        timeout: 2s\n    max_parallel: 1\n    fail_fast: false\n", 4.0),
        ("steps:\n  - concurrent:\n      - delay: 3s\n        timeout: 1s\n      - delay: 5s\n      - delay: 1s\n    max_parallel: 2\n", 1.0),
        ("steps:\n  - concurrent:\n      - delay: 3s\n        timeout: 1s\n      - delay: 5s\n      - delay: 1s\n    max_parallel: 2\n    fail_fast: false\n", 5.0),
        // A step that must time out does so at every attempt, with the waits between them.
        ("steps:\n  - delay: 10s\n    timeout: 1s\n    retry: { limit: 2, delay: 500ms }\n", 4.0),
        ("steps:\n  - delay: 10s\n    timeout: 1s\n    retry: { limit: 3, delay: 1s, backoff: 2, max_delay: 3s }\n", 12.0),
        ("steps:\n  - delay: 1s\n    timeout: 10s\n    retry: 5\n  - delay: 1s\n", 2.0),
        // A group retried: its `finally` runs in each attempt; an enclosing timeout cuts the attempts.
        ("steps:\n  - sequential:\n      - delay: 1s\n    timeout: 300ms\n    retry: 1\n    finally:\n      - delay: 100ms\n", 0.8),
        ("steps:\n  - sequential:\n      - delay: 5s\n        timeout: 1s\n        retry: 9\n    timeout: 2500ms\n  - delay: 9s\n", 2.5),
        // Waits that stop growing are counted whatever the limit: a billion retries of 1ms
        // (and 1ms waits) are about 23 days; past 10,000 growing waits, no more are counted.
        ("steps:\n  - delay: 1s\n    timeout: 1ms\n    retry: { limit: 1000000000, delay: 1ms }\n", 2_000_000.001),
        ("steps:\n  - delay: 1s\n    timeout: 1ms\n    retry: { limit: 1000000000, delay: 1ms, backoff: 2 }\n", 3_600_000_000),
        // After a failure of its list, a step runs if its `if` lets it: `always()`,
        // `failure()`; not one whose `if` implies `success()` or is not known.
        ("steps:\n  - delay: 10s\n    timeout: 1s\n  - delay: 2s\n    if: always()\n  - delay: 3s\n    if: failure()\n  - delay: 4s\n", 6.0),
        ("vars: {x: n}\nsteps:\n  - delay: 10s\n    timeout: 1s\n  - delay: 2s\n    if: failure() && vars.x == 'y'\n  - delay: 3s\n    if: success() || cancelled()\n  - delay: 4s\n    if: vars.x == 'n'\n  - delay: 5s\n    if: failure() && env.CI == 'true'\n", 1.0),
        ("steps:\n  - delay: 10s\n    timeout: 1s\n  - sequential:\n      - delay: 2s\n      - delay: 3s\n        if: failure()\n    if: always()\n", 3.0),
        ("steps:\n  - sequential:\n      - delay: 10s\n        timeout: 1s\n      - delay: 2s\n        if: always()\n  - delay: 4s\n  - delay: 1s\n    if: \"!success()\"\n", 4.0),
        // A `finally` after work that must fail: its `if: failure()` steps run, its
        // `if: success()` ones do not; after work that may succeed, `failure()` is not known.
        ("steps:\n  - sequential:\n      - delay: 5s\n        timeout: 1s\n    finally:\n      - delay: 2s\n        if: failure()\n      - delay: 4s\n        if: success()\n      - delay: 100ms\nfinally:\n  - delay: 300ms\n    if: failure()\n  - delay: 1h\n    if: cancelled()\n", 3.4),
        ("steps:\n  - delay: 1s\nfinally:\n  - delay: 2s\n    if: failure()\n  - delay: 3s\n    if: success()\n", 1.0),
    ])
    func shortestWallTimeIsALowerBound(yaml: String, seconds: Double) throws {
        #expect(try Self.wallTime(yaml) == seconds, "\(yaml)")
    }

    /// Conditions see the variables after `--var`, and an action's params.
    @Test func shortestWallTimeUsesTheValuesKnownBeforeTheRun() throws {
        let yaml = """
            vars: {slow: "no"}
            actions:
              wait:
                params: {long: {}}
                steps:
                  - delay: 10s
                    if: params.long == 'yes'
            steps:
              - delay: 3s
                if: vars.slow == 'yes'
              - use: wait
                with: {long: "${{ vars.slow }}"}
            """
        #expect(try Self.wallTime(yaml) == 0)
        #expect(try Self.wallTime(yaml) { $0.vars = [("slow", "yes")] } == 13)
    }

    @Test func summaryText() throws {
        let plan = try Self.plan(Self.tagged) { $0.tags = ["test"] }
        #expect(PlanSummary(plan: plan).text == "9 steps (4 selected), shortest wall time 0s")
        let one = try Self.plan("steps:\n  - delay: 1h30m\n")
        #expect(PlanSummary(plan: one).text == "1 step, shortest wall time 1h30m")
    }

    // MARK: Printer

    @Test func printerMarksUnselectedStepsAndShowsOptions() throws {
        let plan = try Self.plan("""
            name: demo
            steps:
              - name: a
                shell: |
                  echo one
                  echo two
                timeout: 30s
                retry: {limit: 2, delay: 1s, backoff: 2, exit_codes: [75]}
                tags: [x]
              - name: b
                print: hi
                if: always()
                continue_on_error: true
            """) { $0.tags = ["x"] }
        let text = PlanPrinter(plan: plan).text()
        #expect(text == """
            demo (t.yaml)
            ├─ shell a: echo one …  [timeout 30s · retry 2 after 2s ×2 on exit 75 · tags x]
            └─ ○ print b: hi  [if always() · continue_on_error]  (skipped: not selected)

            2 steps (1 selected), shortest wall time 0s

            """)
    }

    /// An ESC, CR or NUL in a message, command or description is escaped in plan lines, so
    /// it cannot act on the terminal; the description is shown after `—`.
    @Test func planLinesEscapeControlCharacters() throws {
        let plan = try Self.plan(#"""
            steps:
              - print: "hi\e[2J\rthere\0!"
                description: "clears\e[Hscreen"
              - shell: "echo \"\x7F\u0085\""
            """#)
        let text = PlanPrinter(plan: plan).text()
        #expect(!text.unicodeScalars.contains { ControlEscaping.isControl($0) && $0 != "\n" }, "\(text.debugDescription)")
        #expect(text.contains(#"├─ print: hi\u{1B}[2J\u{D}there\u{0}!  — clears\u{1B}[Hscreen"#))
        #expect(text.contains(#"└─ shell: echo "\u{7F}\u{85}""#))
    }

    @Test func jsonPlanIsValidAndComplete() throws {
        let plan = try Self.plan(Self.actions)
        let json = PlanPrinter(plan: plan).json()
        #expect(json.hasPrefix("{\n  \"workflow\": \"t\","))
        #expect(json.contains("\"shortest_wall_time_seconds\": 0"))
        #expect(json.contains("\"command\": \"./deploy.sh \\\"staging\\\" \\\"eu-west-1\\\"\""))
    }

    @Test func graphChainsSequentialStepsAndForksConcurrentOnes() throws {
        let plan = try Self.plan("""
            name: g
            steps:
              - shell: a
              - concurrent:
                  - shell: b
                  - shell: c
              - shell: d
            """)
        let mermaid = GraphExporter.export(plan, format: .mermaid)
        for edge in ["start --> n1", "n1 --> n3", "n1 --> n4", "n3 --> n5", "n4 --> n5", "n5 --> finish"] {
            #expect(mermaid.contains("  \(edge)\n"), "missing \(edge) in\n\(mermaid)")
        }
        let dot = GraphExporter.export(plan, format: .dot)
        #expect(dot.hasPrefix("digraph \"g\" {"))
        #expect(dot.contains("  n4 -> n5;"))
        #expect(dot.hasSuffix("}\n"))
    }
}
