/// How a run behaves, from the command line.
public struct RunOptions: Sendable {
    /// Time between the polite signal and SIGKILL on cancellation.
    public var grace: Duration = .seconds(5)
    /// Cap on running shell steps across the whole run.
    public var maxParallel: Int?
    /// `--no-rollback`.
    public var rollback = true
    /// Children write straight to flow's stdout/stderr (`--output raw`), uncaptured.
    public var passThroughOutput = false
    /// Flow's stdout is the stream of events (`--output json`): an interactive step writes
    /// its stdout to flow's stderr instead.
    public var stdoutCarriesEvents = false
    /// The run id (also `run.id` and `FLOW_RUN_ID`).
    public var runID: String
    /// `flow resume`: results of steps that already succeeded, by plan path; such leaf steps
    /// are not run again and their outputs are reused.
    public var reuse: [String: StepResult] = [:]
    /// The run resumed (`flow resume`) or undone (`flow undo`): where the reused results
    /// come from, but for those in `reusedSources`.
    public var reusedFrom: String?
    /// `flow resume` and `flow undo`: the run that ran a reused (or reversed) result, by
    /// plan path, where it is not `reusedFrom` (a result the resumed or undone run itself
    /// reused or carried on from an earlier one): the step's line names the run its result
    /// came from.
    public var reusedSources: [String: String] = [:]
    /// `flow resume`: the order the reused results first completed in, by plan path (0 the
    /// first): the run's own rollback reverses them as they ran, before anything this run
    /// ran itself, as `flow undo` of it would.
    public var reusedOrder: [String: Int] = [:]
    /// `flow undo`: how the run being undone ended, which its undo steps see as `run.status`
    /// (a run's own rollback sees `failed` or `cancelled`: how it is ending).
    public var undoneRunStatus: RunStatus = .failed
    /// The environment steps start from (flow's own, by default).
    public var environment: [String: String]

    public init(runID: String, environment: [String: String]) {
        self.runID = runID
        self.environment = environment
    }
}
