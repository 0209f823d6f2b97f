/// A reusable, parameterised list of steps, invoked with `use:`.
public struct Action: Sendable {
    public var name: Located<String>
    public var description: Located<String>?
    public var params: [Param] = []
    public var steps: [Step] = []
    /// The names of the action's steps that could not be read: see
    /// `Workflow.unreadStepNames`.
    public var unreadStepNames: [Located<String>] = []
    /// `params` could not be read as a whole (not a mapping, or a list with a name that is
    /// none): which parameters the action takes is unknown, so no `with` key or
    /// `params.NAME` is reported as unknown on top of that error.
    public var paramsUnread = false
    public var span: SourceSpan

    public init(name: Located<String>, span: SourceSpan) {
        self.name = name
        self.span = span
    }

    public func param(named name: String) -> Param? {
        params.first { $0.name.value == name }
    }
}
