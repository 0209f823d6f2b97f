/// The step an expression belongs to, for reference checks and messages.
struct ReferenceSite {
    var name: String?
    var path: StepPath

    init(step: Step, path: StepPath) {
        self.name = step.name?.value
        self.path = path
    }

    /// "step `x`" or "this step".
    var description: String {
        name.map { "step `\($0)`" } ?? "this step"
    }
}
