/// A parsed workflow file: the model every later phase works on.
public struct Workflow: Sendable {
    public var file: SourceFile
    public var version: Located<Int>?
    public var name: Located<String>?
    public var description: Located<String>?
    /// The shell for every shell step (`sh` when absent).
    public var shell: Located<ShellProgram>?
    public var env: [EnvVar] = []
    public var vars: [Variable] = []
    public var defaults = StepDefaults()
    public var rollback: Located<Bool>?
    public var actions: [Action] = []
    public var steps: [Step] = []
    public var finally: [Step] = []
    /// The span of the `steps` key (or of the whole document when it is missing).
    public var stepsSpan: SourceSpan
    /// `vars.NAME` and `params.NAME` written in expressions that could not be read (a
    /// syntax error, already reported): uses all the same, so no `unused-var` or
    /// `unused-param` warning says such a name is never used.
    public var namesInUnreadExpressions: Set<String> = []
    /// The names of the workflow's steps (`steps`, `finally` and what is inside them) that
    /// could not be read (a step without a kind, or whose kind's value was wrong, already
    /// reported): declared all the same, so a reference to one is not a second error
    /// ("no step named `build`" for the step whose `shel:` was just reported), and one
    /// of the same name is still a duplicate. In the order they were met, with the span
    /// of each `name`'s value.
    public var unreadStepNames: [Located<String>] = []
    /// The variables declared with a value that could not be read (already reported): a
    /// reference to one is not also an unknown variable.
    public var unreadVarNames: Set<String> = []
    /// The actions declared with a definition that could not be read (not a mapping) or
    /// an invalid name (already reported): a `use` of one is not also "unknown action".
    public var unreadActionNames: Set<String> = []

    public init(file: SourceFile, stepsSpan: SourceSpan) {
        self.file = file
        self.stepsSpan = stepsSpan
    }

    /// The workflow's name: `name`, else the file name without its extension.
    public var displayName: String {
        if let name { return name.value }
        let base = file.path.split(separator: "/").last.map(String.init) ?? file.path
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { return String(base[..<dot]) }
        return base
    }

    /// The action called `name`, if declared.
    public func action(named name: String) -> Action? {
        actions.first { $0.name.value == name }
    }
}
