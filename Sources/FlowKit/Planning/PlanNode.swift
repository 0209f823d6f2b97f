/// One step of a plan: the resolved form of a workflow step that the executor runs.
///
/// Actions are expanded, defaults applied, environment merged down from the groups, and
/// selection (`--tags`, `--skip-tags`, `--only`) marked.
public final class PlanNode: Sendable {
    /// What the node does.
    public enum Kind: Sendable {
        case print(message: Template, stream: PrintStep.Stream)
        case delay(Duration)
        case shell(ShellTask)
        case sequential
        case concurrent(maxParallel: Int?, failFast: Bool)
        /// An action invocation: its steps run as a sequential group.
        case use(action: String, with: [(name: String, value: Template)])
    }

    /// A shell step, resolved.
    public struct ShellTask: Sendable {
        public var command: Template
        public var program: ShellProgram
        public var dir: Template?
        public var stdin: Template?
        public var interactive: Bool
        /// The command's words when it has no `${{ }}` and no shell syntax (see
        /// `ShellCommand.directArgv`): worked out once here rather than at every attempt.
        /// Nil too in a plan that is not for running (`resolvesArgv: false`): run through
        /// the shell, the command does the same.
        public var directArgv: [String]?

        public init(command: Template, program: ShellProgram, dir: Template?, stdin: Template?, interactive: Bool,
                    resolvesArgv: Bool = true) {
            self.command = command
            self.program = program
            self.dir = dir
            self.stdin = stdin
            self.interactive = interactive
            guard resolvesArgv else { directArgv = nil; return }
            // A plain loop: the generic `joined()` ran unspecialised (metadata lookups on its
            // first call, 5% of a one-step run's instructions).
            var text = ""
            var literal = true
            for part in command.parts {
                if case .text(let t) = part { text += t } else { literal = false }
            }
            directArgv = literal ? ShellCommand.directArgv(text) : nil
        }
    }

    /// A dotted position in the tree: `2.1`, `3.f1` (finally), `4.u1` (undo), `f1` (root finally).
    public let path: String
    public let name: String?
    public let kind: Kind
    public let children: [PlanNode]
    public let finally: [PlanNode]
    public let undo: [PlanNode]
    public let condition: Expression?
    public let timeout: Duration?
    public let retry: RetryPolicy?
    public let continueOnError: Bool
    public let tags: [String]
    /// The environment for shell steps: the workflow's, then each group's, then the step's.
    public let env: [EnvVar]
    public let outputs: [String]?
    public let description: String?
    /// False when `--tags`, `--skip-tags` or `--only` leave the step out.
    public let selected: Bool
    /// The invocation the step belongs to: 0 for the workflow, then one per `use`.
    public let scope: Int
    /// The step's kind key (`shell:`, `use:`…): where its diagnostics point.
    public let span: SourceSpan
    /// The value of the step's `name:`, if it has one: where a diagnostic about another
    /// step points when it says "`build` is here" (the name is what it quotes).
    public let nameSpan: SourceSpan?
    /// For a `use` node: the `allowed` values of the action's parameters that declare them,
    /// checked again at run time for values only known then (outputs, env).
    public let allowedParams: [String: [String]]

    /// Whether this node or one below it (its `finally` and `undo` steps included) is a
    /// shell step, i.e. whether running it can start a process.
    public var runsProcesses: Bool {
        if case .shell = kind { return true }
        return children.contains { $0.runsProcesses } || finally.contains { $0.runsProcesses }
            || undo.contains { $0.runsProcesses }
    }

    init(path: String, name: String?, kind: Kind, children: [PlanNode], finally: [PlanNode], undo: [PlanNode],
         condition: Expression?, timeout: Duration?, retry: RetryPolicy?, continueOnError: Bool, tags: [String],
         env: [EnvVar], outputs: [String]?, description: String?, selected: Bool, scope: Int, span: SourceSpan,
         nameSpan: SourceSpan? = nil, allowedParams: [String: [String]] = [:])
    {
        self.nameSpan = nameSpan
        self.allowedParams = allowedParams
        self.path = path
        self.name = name
        self.kind = kind
        self.children = children
        self.finally = finally
        self.undo = undo
        self.condition = condition
        self.timeout = timeout
        self.retry = retry
        self.continueOnError = continueOnError
        self.tags = tags
        self.env = env
        self.outputs = outputs
        self.description = description
        self.selected = selected
        self.scope = scope
        self.span = span
    }

    /// The kind keyword (`shell`, `use`…).
    public var keyword: String {
        switch kind {
        case .print: return "print"
        case .delay: return "delay"
        case .shell: return "shell"
        case .sequential: return "sequential"
        case .concurrent: return "concurrent"
        case .use: return "use"
        }
    }

    /// Whether the node has children that run as a group.
    public var isGroup: Bool {
        switch kind {
        case .sequential, .concurrent, .use: return true
        default: return false
        }
    }

    /// How the step is named in output: its name, or its kind and path.
    public var label: String {
        name ?? "\(keyword)@\(path)"
    }

    /// A short description for trees (`flow show`, the live tree): the name, else the
    /// command, message or duration as written.
    public var summary: String {
        if let name { return name }
        switch kind {
        case .shell(let task): return PlanPrinter.oneLine(task.command.raw)
        case .delay(let d): return "delay \(d.compact)"
        case .print(let message, _): return "print " + PlanPrinter.oneLine(message.raw)
        case .use(let action, _): return "use \(action)"
        default: return keyword
        }
    }
}
