/// What later steps can see of a finished step: `steps.<name>.status`, `.exit_code`, `.outputs`.
public struct StepResult: Sendable {
    public var state: StepState
    public var exitCode: Int32?
    public var outputs: [String: String]

    public init(state: StepState, exitCode: Int32? = nil, outputs: [String: String] = [:]) {
        self.state = state
        self.exitCode = exitCode
        self.outputs = outputs
    }
}
