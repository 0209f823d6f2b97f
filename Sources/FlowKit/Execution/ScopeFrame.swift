/// The invocation a step runs in: the workflow itself, or one `use` of an action with its
/// parameter values. Step names (`steps.X`) are looked up within the frame.
final class ScopeFrame: Sendable {
    /// The plan's scope number of the steps inside (`PlanNode.scope`).
    let id: Int
    let params: [String: String]

    init(id: Int, params: [String: String]) {
        self.id = id
        self.params = params
    }
}
