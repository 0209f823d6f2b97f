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
    /// The common options, in a box made when the first one is set: most steps have none,
    /// and inline they made a step ~470 bytes (measured: 45 MB of a 100,000-step file's
    /// 103 MB; with the box, ~200 bytes for a step without options).
    private var options: Options?

    /// The common options of one step.
    private final class Options {
        var name: Located<String>?
        var description: Located<String>?
        var condition: Located<Expression>?
        var timeout: Located<Duration>?
        var retry: Located<RetryPolicy>?
        var continueOnError: Located<Bool>?
        var undo: [Step]?
        var tags: [Located<String>] = []
        var env: [EnvVar] = []
        var shell: Located<ShellProgram>?
        var outputs: [Located<String>]?
        var aliasSite: SourceSpan?
        var merges: [MergedText] = []
    }

    /// The box, made on first use (only the parser sets options).
    private var settable: Options {
        if let options { return options }
        let made = Options()
        options = made
        return made
    }

    public var name: Located<String>? {
        get { options?.name }
        set { settable.name = newValue }
    }
    public var description: Located<String>? {
        get { options?.description }
        set { settable.description = newValue }
    }
    /// The `if` condition.
    public var condition: Located<Expression>? {
        get { options?.condition }
        set { settable.condition = newValue }
    }
    public var timeout: Located<Duration>? {
        get { options?.timeout }
        set { settable.timeout = newValue }
    }
    public var retry: Located<RetryPolicy>? {
        get { options?.retry }
        set { settable.retry = newValue }
    }
    public var continueOnError: Located<Bool>? {
        get { options?.continueOnError }
        set { settable.continueOnError = newValue }
    }
    /// Steps that reverse this one during rollback.
    public var undo: [Step]? {
        get { options?.undo }
        set { settable.undo = newValue }
    }
    public var tags: [Located<String>] {
        get { options?.tags ?? [] }
        set { settable.tags = newValue }
    }
    public var env: [EnvVar] {
        get { options?.env ?? [] }
        set { settable.env = newValue }
    }
    /// A shell program for shell steps inside a group (see docs/workflow-format.md).
    public var shell: Located<ShellProgram>? {
        get { options?.shell }
        set { settable.shell = newValue }
    }
    /// Output keys the step promises to write.
    public var outputs: [Located<String>]? {
        get { options?.outputs }
        set { settable.outputs = newValue }
    }

    /// When the step, or its `name`, was reached through a YAML alias (`*x`, `<<: *x`):
    /// that alias. The step's spans are those of the anchored text, the same for every use.
    public var aliasSite: SourceSpan? {
        get { options?.aliasSite }
        set { settable.aliasSite = newValue }
    }

    /// The text `<<: *x` merges brought into the step's own mapping (see `MergedText`):
    /// problems the validator finds there are reported at the merge.
    public var merges: [MergedText] {
        get { options?.merges ?? [] }
        set { settable.merges = newValue }
    }

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
