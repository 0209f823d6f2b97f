extension Executor {
    /// What a step runs with, attempt after attempt: decided once by `prepare`.
    ///
    /// A class, passed by reference down the attempt's calls: each async call that took
    /// these by value kept a copy in its caller's frame, and every running step's task
    /// holds those frames for as long as the step runs.
    final class StepRun: Sendable {
        let instance: StepInstance
        /// What the step's expressions read.
        let context: RuntimeContext
        /// The failures the step's own steps (if a group) answer to.
        let scope: FailureScope
        let env: ChildEnvironment
        let mode: Mode
        /// The run's status as `run.status` shows it to this step.
        let status: RunStatus
        /// Whether `flow resume` may reuse recorded results for the steps inside (a group's).
        let reuses: Bool
        /// Whether the step failing makes a group around it retry (`Executor.prepare`).
        let failureRetried: Bool

        init(instance: StepInstance, context: RuntimeContext, scope: FailureScope, env: ChildEnvironment, mode: Mode,
             status: RunStatus, reuses: Bool, failureRetried: Bool = false) {
            self.instance = instance
            self.context = context
            self.scope = scope
            self.env = env
            self.mode = mode
            self.status = status
            self.reuses = reuses
            self.failureRetried = failureRetried
        }
    }
}
