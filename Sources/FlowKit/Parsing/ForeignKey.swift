/// Keys that other task runners (GitHub Actions, go-task, just, Ansible, GitLab CI) use for
/// what flow spells differently: a newcomer writes `run:` or `cmds:` out of habit, and a
/// "did you mean" by spelling finds nothing close, so the error alone would not say what
/// flow calls it.
enum ForeignKey {
    /// Where the key was found: on a step, or at the top of the workflow.
    enum Place {
        case step
        case workflow
        case action
        case param
    }

    /// The help for `key`, or nil when it is not a known foreign key in `place`; `stepKind`
    /// is the kind of the step it was found on, if known.
    static func help(for key: String, in place: Place, stepKind: String? = nil) -> String? {
        switch place {
        case .step:
            if let flowKey = stepKeys[key] {
                // A bare number is seconds in flow: `timeout: 5` would not be five minutes.
                if key.hasPrefix("timeout") { return "flow calls this `timeout`, a duration such as `5m`" }
                // `cwd:` on a `print` step: `dir` there would be the next error, so say whose it is.
                if let stepKind, !StepKind.isKeyword(flowKey) {
                    let owners = StepKind.keywords.filter { StepKind.kindOptions[$0]?.contains(flowKey) == true }
                    if !owners.isEmpty, !owners.contains(stepKind) {
                        return "flow calls this `\(flowKey)`, an option of " + owners.map { "`\($0)`" }.joined(separator: " and ")
                            + " steps (not of `\(stepKind)` steps)"
                    }
                }
                return "flow calls this `\(flowKey)`"
            }
            if dependencyKeys.contains(key) {
                return "flow runs a list's steps in order, each after the one before; put steps that may run at once in a `concurrent` group"
            }
            return stepConstructs[key]
        case .workflow:
            // GitHub Actions' and GitLab CI's triggers: a "did you mean `env`" by spelling
            // would send the user the wrong way.
            if key == "on" || key == "workflow" {
                return "flow has no triggers: a workflow runs when `flow run` is called (from CI, a hook, a shell)"
            }
            // Docker Compose's `x-…` and GitLab CI's hidden `.…` keys exist only to hold an
            // anchor; flow has none (its unknown keys are errors), so say where one goes.
            if key.hasPrefix("x-") || (key.hasPrefix(".") && key.count > 1) {
                return "flow has no extension keys: options every shell step shares go in `defaults`; else anchor "
                    + "the first step or value that uses it and reuse it with `*name` or `<<: *name`"
            }
            return workflowKeys[key].map { "flow calls this `\($0)`" } ?? workflowConstructs[key]
        case .action:
            // go-task's `deps` are written on a task, which is a flow action: "did you mean
            // `steps`" by spelling would hide that flow has no dependencies to declare.
            if dependencyKeys.contains(key) {
                return "flow has no dependencies: start the action's `steps` with `- use: NAME` for each; "
                    + "a list runs in order, and a `concurrent` group runs steps at once"
            }
            return actionKeys[key].map { "flow calls this `\($0)`" } ?? actionConstructs[key] ?? stepOptionOnAction(key)
        case .param:
            return paramKeys[key].map { "flow calls this `\($0)`" }
        }
    }

    /// Whether `key` is another tool's name for one of flow's step kinds (`run` for
    /// `shell`): then it, not a missing kind, is the step's problem.
    static func isKind(_ key: String) -> Bool {
        stepKeys[key].map(StepKind.isKeyword) ?? false
    }

    /// A step's keys elsewhere → flow's. Only names that mean the same thing.
    static let stepKeys: [String: String] = [
        // The command: GitHub Actions' `run`, go-task's `cmd`/`cmds`, GitLab's `script`.
        "run": "shell", "cmd": "shell", "cmds": "shell", "command": "shell", "script": "shell",
        "parallel": "concurrent",
        "steps": "sequential",
        "echo": "print", "message": "print",
        "sleep": "delay", "wait": "delay",
        "uses": "use", "task": "use",
        // Options.
        "working-directory": "dir", "working_directory": "dir", "workdir": "dir", "cwd": "dir", "chdir": "dir",
        "timeout-minutes": "timeout", "timeout_minutes": "timeout",
        "continue-on-error": "continue_on_error", "ignore_error": "continue_on_error",
        "ignore_errors": "continue_on_error", "allow_failure": "continue_on_error",
        "when": "if", "condition": "if",
        "desc": "description", "summary": "description",
        "environment": "env",
        "retries": "retry",
        // Ansible's `block` groups tasks, and its `always` section runs whatever happened.
        "block": "sequential", "always": "finally",
    ]

    /// Step keys of other tools that flow has as a construct rather than a key (Ansible's
    /// `register`, `rescue` and `loop`, GitHub Actions' `strategy.matrix`): the help says
    /// what to write, since no key of flow's is the answer.
    static let stepConstructs: [String: String] = {
        let loop = "flow has no loops: write one step per value in a `concurrent` group, "
            + "or an action with a parameter used once per value (`with:`)"
        return [
            "register": "a shell step's outputs are the `key=value` lines it writes to `$FLOW_OUTPUT`; "
                + "later steps read them as `${{ steps.NAME.outputs.KEY }}`",
            "rescue": "flow has no `rescue`: a step with `if: failure()` runs after a failure in its group, "
                + "and a group's `finally` runs whatever happened",
            "loop": loop, "with_items": loop, "matrix": loop, "strategy": loop,
            // go-task's `defer:` runs when the task ends, whatever happened.
            "defer": "flow calls this a group's `finally` (its steps run after the group's, whatever happened); "
                + "`undo:` reverses a step only when the run fails",
            "preconditions": preconditions,
            "sources": upToDate, "generates": upToDate, "status": upToDate, "method": upToDate,
        ]
    }()

    /// The help for a step's option written on an action itself (`undo:`, `finally:`,
    /// `timeout:`): an action is a list of steps, not a step, so the option goes on the
    /// `use` step that runs them as a group, or on the steps inside.
    static func stepOptionOnAction(_ key: String) -> String? {
        switch key {
        case "finally":
            return "an action has no `finally`: wrap its steps in a `sequential` group with `finally:` "
                + "(those steps run after the group's, whatever happened)"
        case "outputs":
            return "actions pass no outputs back: its steps' outputs are seen only inside it; compute the value "
                + "in a shell step before the `use` and pass it in with `with:`"
        case "name":
            return "an action is named by its key under `actions:`; `name` on a `use` step names that one use"
        case "undo":
            return "`undo` is an option of a step: give the action's steps their own `undo` (each reverses its step, "
                + "seeing the params of its use), or set it on the `use` step"
        default:
            guard StepKind.commonOptions.contains(key) || StepKind.groupOptions.contains(key) else { return nil }
            return "`\(key)` is an option of a step: set it on the `use` step (it then covers the action's steps "
                + "as one group), or on steps inside the action"
        }
    }

    /// go-task's `preconditions`, on a step or a task.
    static let preconditions = "flow has no preconditions: make the check a step of its own before the others "
        + "(`- test -f .env`), whose failure stops the list, or give the step an `if:`"

    /// go-task's up-to-date checks (`sources`, `generates`, `status`, `method`).
    static let upToDate = "flow has no up-to-date checks: every selected step runs; let the command skip work "
        + "itself (`make`, `[ bin/app -nt main.go ] || go build`)"

    /// Top-level keys of other tools that flow has no key for.
    static let workflowConstructs: [String: String] = [
        // go-task's `dotenv:`, just's `set dotenv-load`.
        "dotenv": "flow reads no `.env` file: export it before `flow run` (`set -a; . ./.env; set +a`), "
            + "or write the variables under `env:`",
        "includes": "flow has no includes: copy the actions this file uses, or run the other workflow "
            + "from a step (`- flow run other.yaml`)",
    ]

    /// go-task's task keys that a flow action has no key for: the help says where the
    /// setting goes instead.
    static let actionConstructs: [String: String] = [
        "dir": "an action has no `dir`: set `dir` on its shell steps (or `defaults.dir` for every shell step)",
        "env": "an action has no `env`: set `env` on the `use` step, or wrap the action's steps in a "
            + "`sequential` group with `env:`",
        "requires": "a value the action needs is a parameter: `params: { NAME: { required: true } }`",
        "preconditions": preconditions,
        "sources": upToDate, "generates": upToDate, "status": upToDate, "method": upToDate,
    ]

    /// go-task's `deps`, GitHub Actions' `needs`…: flow orders steps by their place instead.
    static let dependencyKeys: Set<String> = ["deps", "needs", "depends_on", "depends-on", "dependencies"]

    /// An action's keys elsewhere → flow's: a GitHub composite action's `inputs` and
    /// `runs`, go-task's `cmds`, Ansible's `tasks`.
    static let actionKeys: [String: String] = [
        "inputs": "params", "parameters": "params", "args": "params", "arguments": "params",
        "runs": "steps", "cmds": "steps", "commands": "steps", "tasks": "steps",
        "desc": "description", "summary": "description",
    ]

    /// A parameter's keys elsewhere → flow's (a list of the values it may take).
    static let paramKeys: [String: String] = [
        "enum": "allowed", "choices": "allowed", "options": "allowed", "values": "allowed",
        "desc": "description",
    ]

    /// Top-level keys elsewhere → flow's.
    static let workflowKeys: [String: String] = [
        "tasks": "actions", "recipes": "actions",
        "jobs": "steps",
        "variables": "vars",
        "environment": "env",
    ]
}
