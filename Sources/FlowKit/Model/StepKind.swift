/// The kind of a step and the options that belong to that kind.
public enum StepKind: Sendable {
    case print(PrintStep)
    case delay(Located<Duration>)
    case shell(ShellStep)
    case sequential(GroupStep)
    case concurrent(GroupStep)
    case use(UseStep)

    /// The kind key as written in YAML.
    public var keyword: String {
        switch self {
        case .print: return "print"
        case .delay: return "delay"
        case .shell: return "shell"
        case .sequential: return "sequential"
        case .concurrent: return "concurrent"
        case .use: return "use"
        }
    }

    /// Every kind key, in the order docs and messages list them.
    public static let keywords = ["print", "delay", "shell", "sequential", "concurrent", "use"]

    /// Options valid only on steps of the given kind (see `options(of:)`).
    public static let kindOptions = Dictionary(uniqueKeysWithValues: keywords.map { ($0, options(of: $0)) })

    /// The options valid only on steps of `kind`: asked once per step of every workflow
    /// parsed, so a switch rather than a hashed lookup.
    public static func options(of kind: String) -> [String] {
        switch kind {
        case "print": ["stream"]
        case "shell": ["dir", "stdin", "interactive"]
        case "sequential": ["finally"]
        case "concurrent": ["max_parallel", "fail_fast", "finally"]
        case "use": ["with"]
        default: []
        }
    }

    /// Whether `kind` is a group kind (`sequential`, `concurrent`, `use`): one that takes
    /// the group options.
    public static func isGroup(_ kind: String) -> Bool {
        kind == "sequential" || kind == "concurrent" || kind == "use"
    }

    /// Options valid on every step.
    public static let commonOptions = [
        "name", "description", "if", "timeout", "retry", "continue_on_error", "undo", "tags", "env", "outputs",
    ]

    /// Options valid on group steps only (passed down to the shell steps inside).
    public static let groupOptions = ["shell"]
}

/// `print: message`.
public struct PrintStep: Sendable {
    /// Where a message goes.
    public enum Stream: String, Sendable {
        case stdout
        case stderr
    }

    public var message: Template
    public var stream: Stream = .stdout

    public init(message: Template) {
        self.message = message
    }
}

/// `shell: command`.
public struct ShellStep: Sendable {
    public var command: Template
    /// `dir`, `stdin` and `interactive`, boxed when one is given: a shell step is the
    /// largest payload of `StepKind`, which every `Step` holds inline, and most have none
    /// of them (measured: 7 MB of a 100,000-step file). The box is never changed, only
    /// replaced, so copies of a `ShellStep` stay independent.
    private var options: Options?

    private final class Options: Sendable {
        let dir: Template?
        let stdin: Template?
        let interactive: Located<Bool>?

        init(dir: Template?, stdin: Template?, interactive: Located<Bool>?) {
            self.dir = dir
            self.stdin = stdin
            self.interactive = interactive
        }
    }

    public var dir: Template? {
        get { options?.dir }
        set { options = Options(dir: newValue, stdin: stdin, interactive: interactive) }
    }
    public var stdin: Template? {
        get { options?.stdin }
        set { options = Options(dir: dir, stdin: newValue, interactive: interactive) }
    }
    public var interactive: Located<Bool>? {
        get { options?.interactive }
        set { options = Options(dir: dir, stdin: stdin, interactive: newValue) }
    }

    public init(command: Template) {
        self.command = command
    }
}

/// `sequential:` or `concurrent:` with its children and options.
public struct GroupStep: Sendable {
    public var steps: [Step]
    public var finally: [Step] = []
    public var maxParallel: Located<Int>?
    public var failFast: Located<Bool>?

    public init(steps: [Step]) {
        self.steps = steps
    }
}

/// `use: action` with its `with:` parameters.
public struct UseStep: Sendable {
    public var action: Located<String>
    public var with: [(name: Located<String>, value: Template)] = []
    public var withSpan: SourceSpan?

    public init(action: Located<String>) {
        self.action = action
    }
}
