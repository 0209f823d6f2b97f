import FlowCommandLine
import FlowKit

/// Options shared by `run` and `plan`: variables, action params and step selection.
struct SelectionOptions {
    var vars: [KeyValue] = []
    var with: [KeyValue] = []
    /// Every `--tags` / `--skip-tags` given: repeated, the lists add up (as in Ansible).
    var tags: [String] = []
    var skipTags: [String] = []
    var only: String?

    static let options: [OptionSpec] = [
        .value("var", valueName: "key=value", help: "Override a workflow variable.", repeats: true),
        .value("with", valueName: "key=value", help: "Set a parameter of ACTION.", repeats: true),
        .value("tags", valueName: "a,b", help: "Run only steps with one of these tags (comma-separated); steps tagged `always` run too.",
               repeats: true, completion: CompletionValues.tags),
        .value("skip-tags", valueName: "a,b", help: "Skip steps with one of these tags.", repeats: true,
               completion: CompletionValues.tags),
        .value("only", valueName: "NAME", help: "Run one named step (inside its groups) and nothing else.",
               completion: CompletionValues.steps),
    ]

    init(_ arguments: ParsedArguments) throws(UsageError) {
        vars = try arguments.values("var", as: KeyValue.self)
        with = try arguments.values("with", as: KeyValue.self)
        tags = arguments.values("tags")
        skipTags = arguments.values("skip-tags")
        // `--only a --only b` ran only `b`: the last value wins for every single-value
        // option, which for this one silently dropped a step the user asked for. The same
        // name twice (an alias plus a typed option) still means one step.
        let onlies = arguments.values("only")
        if let first = onlies.first, let other = onlies.first(where: { $0 != first }) {
            throw arguments.error("--only runs one step and was given two (`\(ControlEscaping.escaped(first))` and "
                + "`\(ControlEscaping.escaped(other))`); to run several, tag them and use --tags")
        }
        only = onlies.last
    }

    func planOptions(action: String?) -> PlanOptions {
        var options = PlanOptions()
        options.vars = vars.map { ($0.key, $0.value) }
        options.with = with.map { ($0.key, $0.value) }
        options.action = action
        options.tags = Self.list(tags)
        options.skipTags = Self.list(skipTags)
        options.only = only
        return options
    }

    /// The selection options given, as typed (`--only build --tags deploy`), for messages.
    var described: String {
        var parts: [String] = []
        if let only { parts.append("--only \(only)") }
        let tags = Self.list(tags), skipTags = Self.list(skipTags)
        if !tags.isEmpty { parts.append("--tags " + tags.joined(separator: ",")) }
        if !skipTags.isEmpty { parts.append("--skip-tags " + skipTags.joined(separator: ",")) }
        return ControlEscaping.escaped(parts.joined(separator: " "))
    }

    static func list(_ texts: [String]) -> [String] {
        texts.flatMap { $0.split(separator: ",") }.map { String($0.trimmingPrefixAndSuffixSpaces) }.filter { !$0.isEmpty }
    }
}

extension Substring {
    var trimmingPrefixAndSuffixSpaces: Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}
