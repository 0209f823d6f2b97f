/// One step of a workflow: its kind with the kind's options, and the common options.
///
/// A class, not a struct: later phases walk 100,000-step trees many times, and copying a
/// struct of this size costs a retain per field on every pass. The parser fills it in;
/// after parsing nothing changes it, which is what makes sharing it across tasks safe.
public final class Step: @unchecked Sendable {
    public var kind: StepKind
    /// The span of the kind key (`shell`, `print`…), where most step-level messages point.
    public var kindSpan: SourceSpan
    /// The span of the whole step.
    public var span: SourceSpan
    public var name: Located<String>?
    public var description: Located<String>?
    /// The `if` condition.
    public var condition: Located<Expression>?
    public var timeout: Located<Duration>?
    public var retry: Located<RetryPolicy>?
    public var continueOnError: Located<Bool>?
    /// Steps that reverse this one during rollback.
    public var undo: [Step]?
    public var tags: [Located<String>] = []
    public var env: [EnvVar] = []
    /// A shell program for shell steps inside a group (see docs/workflow-format.md).
    public var shell: Located<ShellProgram>?
    /// Output keys the step promises to write.
    public var outputs: [Located<String>]?

    public init(kind: StepKind, kindSpan: SourceSpan, span: SourceSpan) {
        self.kind = kind
        self.kindSpan = kindSpan
        self.span = span
    }

    /// The child steps of a group (empty for leaf steps).
    public var children: [Step] {
        switch kind {
        case .sequential(let group), .concurrent(let group): return group.steps
        default: return []
        }
    }

    /// The `finally` steps of a group (empty for other steps).
    public var finallySteps: [Step] {
        switch kind {
        case .sequential(let group), .concurrent(let group): return group.finally
        default: return []
        }
    }
}
