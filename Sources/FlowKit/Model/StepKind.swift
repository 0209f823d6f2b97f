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
        // The most common kind first: a string switch tries its cases in order.
        switch kind {
        case "shell": ["dir", "stdin", "interactive"]
        case "print": ["stream"]
        case "sequential": ["finally"]
        case "concurrent": ["max_parallel", "fail_fast", "finally"]
        case "use": ["with"]
        default: []
        }
    }

    /// Whether `key` is one of `keywords`. Asked of every key of every step, several times:
    /// by length first, so that a key is compared with at most the words of its length
    /// (`keywords.contains` compared it with each in turn, and every comparison that fails
    /// takes Swift's slow path: 2% of `flow validate`'s instructions on 100,000 steps).
    public static func isKeyword(_ key: String) -> Bool {
        switch key.utf8.count {
        case 5: return key == "shell" || key == "print" || key == "delay"
        case 10: return key == "sequential" || key == "concurrent"
        case 3: return key == "use"
        default: return false
        }
    }

    /// Whether `kind` is a group kind (`sequential`, `concurrent`, `use`): one that takes
    /// the group options. By length first, as `isKeyword`.
    public static func isGroup(_ kind: String) -> Bool {
        switch kind.utf8.count {
        case 10: return kind == "sequential" || kind == "concurrent"
        case 3: return kind == "use"
        default: return false
        }
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
        let shebang: Located<String>?

        init(dir: Template?, stdin: Template?, interactive: Located<Bool>?, shebang: Located<String>?) {
            self.dir = dir
            self.stdin = stdin
            self.interactive = interactive
            self.shebang = shebang
        }
    }

    public var dir: Template? {
        get { options?.dir }
        set { options = Options(dir: newValue, stdin: stdin, interactive: interactive, shebang: shebang) }
    }
    public var stdin: Template? {
        get { options?.stdin }
        set { options = Options(dir: dir, stdin: newValue, interactive: interactive, shebang: shebang) }
    }
    public var interactive: Located<Bool>? {
        get { options?.interactive }
        set { options = Options(dir: dir, stdin: stdin, interactive: newValue, shebang: shebang) }
    }
    /// The shell a `#!` first line of the command names (`bash` for `#!/usr/bin/env bash`),
    /// spanning that line, when it is one flow runs commands with: to that shell the line is
    /// a comment, and the validator warns when the step's shell is another one
    /// (`Validator.checkShebang`).
    public var shebang: Located<String>? {
        get { options?.shebang }
        set { options = Options(dir: dir, stdin: stdin, interactive: interactive, shebang: newValue) }
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
    /// Parameters given in `with` with a value of the wrong type (reported by the parser):
    /// given, so not missing, though there is no value to check or pass.
    public var withoutValue: [Located<String>] = []
    public var withSpan: SourceSpan?

    public init(action: Located<String>) {
        self.action = action
    }
}
