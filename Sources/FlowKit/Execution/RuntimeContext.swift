/// Resolves expressions while a run is going: every reference has a value (missing outputs
/// and unset variables are the empty string).
struct RuntimeContext: ExpressionEvaluator.Context {
    let plan: Plan
    let runID: String
    let runState: RunState
    let cancellation: RunCancellation
    let frame: ScopeFrame
    let failures: FailureScope
    /// The environment the step sees (flow's, then the workflow's and groups'; for a
    /// shell step's command, `dir` and `stdin`, what flow sets for its process too).
    var env: ChildEnvironment
    /// Inside `finally`: the run's status so far.
    let runStatus: RunStatus
    /// Whether a signal to flow cancels the run the expressions are about: not under
    /// `flow undo`, whose undo steps see how the run they roll back ended, not the undo's
    /// own signal (which does not stop the rollback either).
    var signalCancelsRun = true

    func value(of path: [String]) -> ExpressionValue? {
        guard path.count >= 2 else { return .null }
        switch path[0] {
        case "vars": return .string(plan.variable(path[1]) ?? "")
        case "env": return env[path[1]].map(ExpressionValue.string) ?? .null
        case "params": return .string(frame.params[path[1]] ?? "")
        case "workflow": return .string(plan.workflowName)
        case "run": return path[1] == "id" ? .string(runID) : .string(runStatus.rawValue)
        case "steps":
            guard path.count >= 3 else { return .null }
            guard let result = runState.result(frame, path[1]) else {
                return path[2] == "status" ? .string(StepState.pending.rawValue) : (path[2] == "exit_code" ? .null : .string(""))
            }
            switch path[2] {
            case "status": return .string(result.state.rawValue)
            case "exit_code": return result.exitCode.map { .number(Double($0)) } ?? .null
            case "outputs": return .string(path.count >= 4 ? result.outputs[path[3]] ?? "" : "")
            default: return .null
            }
        default: return .null
        }
    }

    func status(_ function: String) -> Bool? {
        // The run is cancelled from its signal on; `flow undo` of a run that ended
        // cancelled (or was killed) rolls back a cancelled run too, which `run.status`
        // says there: `cancelled()` agrees with it, as it does in that run's own rollback
        // (it was false under `flow undo`, so an `if: cancelled()` undo step was skipped).
        let cancelled = (signalCancelsRun && cancellation.isCancelled) || runStatus == .cancelled
        switch function {
        case "always": return true
        case "cancelled": return cancelled
        case "failure": return failures.seesFailure
        case "success": return !failures.seesFailure && !cancelled
        default: return nil
        }
    }

    func render(_ template: Template) -> String {
        ExpressionEvaluator.render(template, in: self)
    }
}
