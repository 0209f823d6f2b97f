/// What the command line adds to a plan: variable overrides, action params and selection.
public struct PlanOptions: Sendable {
    public var vars: [(name: String, value: String)] = []
    /// Run only this action (its params come from `with`).
    public var action: String?
    public var with: [(name: String, value: String)] = []
    public var tags: [String] = []
    public var skipTags: [String] = []
    public var only: String?

    public init() {}
}
