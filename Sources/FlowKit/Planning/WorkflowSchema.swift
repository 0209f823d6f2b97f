/// The JSON Schema (draft 2020-12) of the workflow format, for yaml-language-server.
///
/// Built from the same key lists the parser uses, so the schema and the parser cannot
/// disagree on which keys exist (a test checks it).
public enum WorkflowSchema {
    public static func json() -> String {
        value.rendered(pretty: true) + "\n"
    }

    static func ref(_ name: String) -> JSONValue { .object([("$ref", .string("#/$defs/\(name)"))]) }
    static func str(_ description: String) -> JSONValue {
        .object([("type", .string("string")), ("description", .string(description))])
    }
    /// `dir` (of a step or in `defaults`): a string that is not empty, as the parser wants.
    static let directory: JSONValue = .object([("type", .string("string")), ("minLength", .int(1)), ("pattern", .string(noNUL)),
                                               ("description", .string("Working directory of the command."))])
    /// Adds (or replaces) the `description` of a schema object: editors show it on hover.
    static func described(_ value: JSONValue, _ description: String) -> JSONValue {
        guard case .object(var pairs) = value else { return value }
        pairs.removeAll { $0.0 == "description" }
        pairs.append(("description", .string(description)))
        return .object(pairs)
    }
    static func bool(_ description: String) -> JSONValue {
        .object([("type", .string("boolean")), ("description", .string(description))])
    }
    /// A value that is data (a message, a description, `stdin`): flow takes any scalar as
    /// its text (`WorkflowParser.text`), where code and names must be strings.
    static func text(_ description: String) -> JSONValue {
        .object([("type", scalarTypes), ("description", .string(description))])
    }
    static let scalarTypes = JSONValue.array([.string("string"), .string("number"), .string("boolean")])
    /// Keeps out YAML's `.nan`, which every bound lets through (each comparison with NaN is
    /// false, so `minimum` and `maximum` find nothing wrong) and flow rejects: NaN is not at
    /// most -1 either, so this `not` refuses it, and refuses nothing else that the
    /// `minimum` beside it takes.
    static let notNaN: (String, JSONValue) = ("not", .object([("maximum", .int(-1))]))
    /// A whole number from `minimum` up to what flow's `Int` holds (larger is "too large").
    static func integer(minimum: Int, maximum: Int = Int.max) -> JSONValue {
        .object([("type", .string("integer")), ("minimum", .int(minimum)), ("maximum", .int(maximum))])
    }

    static let namePattern = "^[A-Za-z_][A-Za-z0-9_-]*$"
    /// A tag `--tags` can name: not empty, no comma, no spaces around it (flow: `invalid-value`).
    static let tagPattern = "^[^, ]([^,]*[^, ])?$"
    /// A command that is not empty or blank and holds no NUL (flow: `invalid-value`).
    static let commandPattern = #"^[^\u0000]*[^ \t\u0000][^\u0000]*$"#
    /// A value that reaches the system as a C string, where a NUL would end it (a command, a
    /// `dir`, an `env` value, a shell's path): flow says `invalid-value`.
    static let noNUL = #"^[^\u0000]*$"#

    /// Schemas of the common step options.
    static var commonProperties: [(String, JSONValue)] {
        let all: [String: JSONValue] = [
            "name": .object([("type", .string("string")), ("pattern", .string(namePattern)),
                             ("description", .string("Identifier, unique in the file; used in output, `steps.<name>` references and --only."))]),
            "description": text("Free text, shown by `flow plan`."),
            // Not blank (flow: an empty expression), and not YAML 1.1's booleans, which flow
            // rejects written plain (YAML 1.2 reads them as strings) and as an expression
            // quoted (a reference to no `yes`).
            "if": .object([("type", .array([.string("string"), .string("boolean")])), ("pattern", .string("[^ \t\r\n]")),
                           ("not", .object([("enum", .array(WorkflowParser.yaml11Booleans.map { .string($0) }))])),
                           ("description", .string("Condition expression, with or without ${{ }}; false skips the step."))]),
            "timeout": described(ref("positiveDuration"), "Duration after which an attempt is cancelled (timed_out): 250ms, 1s, 1.5s, 2m, 1h30m, or seconds."),
            "retry": described(ref("retry"), "Retries after the first attempt: a number, or {limit, delay, backoff, max_delay, exit_codes}."),
            "continue_on_error": bool("A failure is recorded but does not fail the parent."),
            "undo": .object([("description", .string("A step, or list of steps, that reverses this one during rollback.")),
                             ("anyOf", .array([ref("step"), ref("steps")]))]),
            "tags": .object([("type", .array([.string("array"), .string("string")])), ("pattern", .string(tagPattern)),
                             ("items", .object([("type", .string("string")), ("pattern", .string(tagPattern))])),
                             ("description", .string("Tags that --tags and --skip-tags select on."))]),
            "env": described(ref("env"), "Extra environment for the shell steps inside this step."),
            "outputs": .object([("type", .array([.string("array"), .string("string")])), ("pattern", .string(namePattern)),
                                ("items", .object([("type", .string("string")), ("pattern", .string(namePattern))])),
                                ("uniqueItems", .bool(true)),
                                ("description", .string("Output keys the step promises to write to $FLOW_OUTPUT."))]),
        ]
        return StepKind.commonOptions.map { ($0, all[$0]!) }
    }

    static func kindOption(_ name: String) -> JSONValue {
        switch name {
        case "stream": return .object([("enum", .array([.string("stdout"), .string("stderr")])),
                                       ("description", .string("Where the message goes: stdout (default) or stderr."))])
        case "dir": return directory
        case "stdin": return text("Text fed to the process on standard input.")
        case "interactive": return bool("Give the step the terminal (it runs alone).")
        case "finally": return described(ref("steps"), "Steps that always run after the group's children, even after a failure or cancellation.")
        case "max_parallel": return described(integer(minimum: 1), "At most this many children run at once.")
        case "fail_fast": return bool("The first failure cancels the running siblings (default true).")
        case "with": return .object([("type", .string("object")), ("propertyNames", .object([("pattern", .string(namePattern))])),
                                     ("additionalProperties", .object([("type", .array([.string("string"), .string("number"), .string("boolean"), .string("null")]))])),
                                     ("description", .string("The action's parameters."))])
        default: return .object([])
        }
    }

    static func kindValue(_ kind: String) -> JSONValue {
        switch kind {
        case "print": return text("Message to print (interpolated).")
        case "delay": return described(ref("duration"), "How long to wait: 250ms, 1s, 1.5s, 2m, 1h30m, or seconds.")
        case "shell": return .object([("type", .string("string")), ("pattern", .string(commandPattern)),
                                      ("description", .string("Command line, run by the workflow's shell."))])
        case "sequential": return described(ref("steps"), "Steps run one after another.")
        case "concurrent": return described(ref("steps"), "Steps run at the same time.")
        case "use": return .object([("type", .string("string")), ("pattern", .string(namePattern)), ("description", .string("Name of an action."))])
        default: return .object([])
        }
    }

    static var stepSchema: JSONValue {
        var variants: [JSONValue] = [.object([("type", .string("string")), ("pattern", .string(commandPattern)),
                                              ("description", .string("Shorthand for a shell step."))])]
        for kind in StepKind.keywords {
            var properties: [(String, JSONValue)] = [(kind, kindValue(kind))]
            properties += commonProperties.filter { $0.0 != "outputs" || kind == "shell" }
            for option in StepKind.kindOptions[kind] ?? [] { properties.append((option, kindOption(option))) }
            if StepKind.isGroup(kind) {
                properties.append(("shell", .object([("$ref", .string("#/$defs/shellProgram")),
                                                      ("description", .string("Shell for the shell steps inside this group."))])))
            }
            var variant: [(String, JSONValue)] = [
                ("type", .string("object")),
                ("required", .array([.string(kind)])),
                ("properties", .object(properties)),
                ("additionalProperties", .bool(false)),
            ]
            if kind == "shell" {
                // An interactive step reads the terminal, so it cannot have `stdin` (flow:
                // `conflicting-options`); `interactive: false` with `stdin` is fine.
                variant.append(("not", .object([("required", .array([.string("interactive"), .string("stdin")])),
                                                ("properties", .object([("interactive", .object([("const", .bool(true))]))]))])))
            }
            variants.append(.object(variant))
        }
        return .object([("anyOf", .array(variants))])
    }

    /// A pattern of what `Duration.parseChecked` takes: units in order, each at most once
    /// (`1h30m`, not `30m1h`), or a bare number of seconds; no sign, exponent or `.5`;
    /// spaces and tabs around it. One alternative per largest unit, so no look-around (not
    /// every JSON Schema engine has it). `number` gives the pattern of each part's number.
    static func durationPattern(number: (_ unitNanoseconds: Int64) -> String) -> String {
        let h = number(3_600_000_000_000) + "h", m = number(60_000_000_000) + "m"
        let s = number(1_000_000_000) + "s", ms = number(1_000_000) + "ms"
        let forms = [number(1_000_000_000), h + "(" + m + ")?(" + s + ")?(" + ms + ")?", m + "(" + s + ")?(" + ms + ")?",
                     s + "(" + ms + ")?", ms]
        return #"^[ \t]*("# + forms.joined(separator: "|") + #")[ \t]*$"#
    }

    /// A pattern of a decimal (`[0-9]+(\.[0-9]+)?`) whose value is at most `maximum`: one
    /// alternative per digit of `maximum` that a smaller number may have less of, then
    /// `maximum` itself with a zero fraction. So a part longer than `Duration.maximum`
    /// alone (`1000001h`, `3600000001`) fails the schema, as it fails flow.
    static func decimal(atMost maximum: Int64) -> String {
        let digits = Array(String(maximum).utf8).map { Int($0 - UInt8(ascii: "0")) }
        var smaller = digits.count > 1 ? ["[0-9]{1,\(digits.count - 1)}"] : []
        for (i, digit) in digits.enumerated() where digit > 0 {
            let prefix = digits[..<i].map(String.init).joined()
            let lower = digit == 1 ? "0" : "[0-\(digit - 1)]"
            let rest = digits.count - i - 1
            smaller.append(prefix + lower + (rest > 0 ? "[0-9]{\(rest)}" : ""))
        }
        return #"0*(("# + smaller.joined(separator: "|") + #")(\.[0-9]+)?|"# + String(maximum) + #"(\.0+)?)"#
    }

    static var value: JSONValue {
        let bounded = durationPattern { decimal(atMost: Duration.maximumNanoseconds / $0) }
        let zero = durationPattern { _ in #"0+(\.0+)?"# }
        let maximumSeconds = JSONValue.int(Int(Duration.maximum.components.seconds))
        // A YAML number reaches a schema validator as a JSON number, so `1e3` or `0x10`
        // cannot be told from `1000` or `16` here; flow itself rejects them.
        let defs: [(String, JSONValue)] = [
            ("duration", .object([
                ("description", .string("250ms, 1s, 1.5s, 2m, 1h30m, or a number of seconds; at most 1000000h.")),
                ("anyOf", .array([
                    .object([("type", .string("number")), ("minimum", .int(0)), ("maximum", maximumSeconds), notNaN]),
                    .object([("type", .string("string")), ("pattern", .string(bounded))]),
                ])),
            ])),
            // `timeout` (flow: "must be longer than zero").
            ("positiveDuration", .object([
                ("description", .string("A duration longer than zero: 250ms, 1s, 1.5s, 2m, 1h30m, or a number of seconds; at most 1000000h.")),
                ("anyOf", .array([
                    .object([("type", .string("number")), ("exclusiveMinimum", .int(0)), ("maximum", maximumSeconds), notNaN]),
                    .object([("type", .string("string")), ("pattern", .string(bounded)), ("not", .object([("pattern", .string(zero))]))]),
                ])),
            ])),
            ("shellProgram", .object([
                ("type", .string("string")),
                ("pattern", .string(#"^([^\u0000]*/)?(sh|bash|zsh|dash|ksh)$"#)),
                ("description", .string("sh (default), bash, zsh, dash, ksh, or a path to one of them.")),
            ])),
            ("env", .object([
                ("type", .string("object")),
                ("propertyNames", .object([("pattern", .string("^[A-Za-z_][A-Za-z0-9_]*$"))])),
                ("additionalProperties", .object([("type", .array([.string("string"), .string("number"), .string("boolean")])),
                                                  ("pattern", .string(noNUL))])),
                ("description", .string("Environment variables: names of letters, digits and _.")),
            ])),
            ("retry", .object([("anyOf", .array([
                integer(minimum: 0),
                .object([
                    ("type", .string("object")),
                    ("required", .array([.string("limit")])),
                    ("additionalProperties", .bool(false)),
                    ("properties", .object([
                        ("limit", described(integer(minimum: 0), "Attempts after the first (required).")),
                        ("delay", described(ref("duration"), "Base of the waits between attempts (default 0): attempt n waits delay × backoff^(n-1).")),
                        // The maximum keeps out `.inf` (flow: "must be a finite number").
                        ("backoff", .object([("type", .string("number")), ("minimum", .int(1)),
                                             ("maximum", .double(Double.greatestFiniteMagnitude)), notNaN,
                                             ("description", .string("Multiplier of the delay per retry, 1 or more (default 1)."))])),
                        ("max_delay", described(ref("duration"), "Cap on the delay between retries.")),
                        ("exit_codes", .object([("type", .string("array")),
                                                ("items", .object([("type", .string("integer")), ("minimum", .int(1)), ("maximum", .int(255))])),
                                                ("description", .string("Exit codes (1-255) that are retried (default: every non-zero)."))])),
                    ])),
                ]),
            ])), ("description", .string("Retries after the first attempt: a number, or {limit, delay, backoff, max_delay, exit_codes}."))])),
            ("step", stepSchema),
            ("steps", .object([("type", .string("array")), ("minItems", .int(1)), ("items", ref("step")),
                               ("description", .string("A non-empty list of steps."))])),
            ("param", .object([
                ("type", .array([.string("object"), .string("null")])),
                ("additionalProperties", .bool(false)),
                ("properties", .object([
                    ("description", text("Free text.")),
                    ("required", bool("Whether every `use` must give it (default false).")),
                    ("default", text("Value when a `use` does not give it (default: the empty string).")),
                    ("allowed", .object([("type", .string("array")), ("minItems", .int(1)), ("items", .object([("type", scalarTypes)])),
                                         ("description", .string("The values it may take."))])),
                ])),
                // Required with a default (flow: `conflicting-options`). `type`, or the `not`
                // would refuse a param written as nothing (null), which has no keys to require.
                ("not", .object([("type", .string("object")), ("required", .array([.string("required"), .string("default")])),
                                 ("properties", .object([("required", .object([("const", .bool(true))]))]))])),
                ("description", .string("A parameter: {description, required, default, allowed}, or nothing.")),
            ])),
            ("action", .object([
                ("type", .string("object")),
                ("required", .array([.string("steps")])),
                ("additionalProperties", .bool(false)),
                ("properties", .object([
                    ("description", text("Free text.")),
                    ("params", .object([("type", .string("object")), ("propertyNames", .object([("pattern", .string(namePattern))])),
                                        ("additionalProperties", ref("param")),
                                        ("description", .string("Parameters, read as ${{ params.<name> }} inside the action."))])),
                    ("steps", described(ref("steps"), "The action's steps, run as a sequential group.")),
                ])),
                ("description", .string("A reusable step list, run with `use:`.")),
            ])),
        ]
        let topLevel: [String: JSONValue] = [
            "version": .object([("const", .int(1)), ("description", .string("The format's version; only 1 exists."))]),
            "name": .object([("type", .string("string")), ("pattern", .string(namePattern)),
                             ("description", .string("The workflow's name (default: the file name without extension)."))]),
            "description": text("Free text."),
            "shell": described(ref("shellProgram"), "The shell for shell steps: sh (default), bash, zsh, dash, ksh, or a path to one of them."),
            "env": described(ref("env"), "Environment exported to every shell step."),
            "vars": .object([("type", .string("object")), ("propertyNames", .object([("pattern", .string(namePattern))])),
                             ("additionalProperties", .object([("type", .array([.string("string"), .string("number"), .string("boolean"), .string("null")]))])),
                             ("description", .string("Template variables, read as ${{ vars.<name> }}, overridable with --var."))]),
            "defaults": .object([
                ("type", .string("object")),
                ("additionalProperties", .bool(false)),
                ("properties", .object(StepDefaults.keys.map { key -> (String, JSONValue) in
                    switch key {
                    case "timeout": return (key, described(ref("positiveDuration"), "Default `timeout` of shell steps."))
                    case "retry": return (key, described(ref("retry"), "Default `retry` of shell steps."))
                    case "continue_on_error": return (key, bool("Default `continue_on_error` of shell steps."))
                    case "shell": return (key, described(ref("shellProgram"), "The shell for shell steps (wins over the top-level `shell`)."))
                    case "dir": return (key, described(directory, "Default working directory of shell steps."))
                    default: return (key, str("Default `\(key)` of shell steps."))
                    }
                })),
                ("description", .string("Options for shell steps that do not set them."))
            ]),
            "rollback": bool("Run `undo` steps when the run fails or is cancelled (default true)."),
            "actions": .object([("type", .string("object")),
                                ("propertyNames", .object([("pattern", .string(namePattern))])),
                                ("additionalProperties", ref("action")),
                                ("description", .string("Reusable, parameterised step lists, invoked with `use:`."))]),
            "steps": described(ref("steps"), "The workflow's steps, run as a sequential group."),
            "finally": described(ref("steps"), "Steps that always run after `steps`, even after a failure or cancellation."),
        ]
        return .object([
            ("$schema", .string("https://json-schema.org/draft/2020-12/schema")),
            ("$id", .string("urn:flow:workflow:1")),
            ("title", .string("flow workflow")),
            ("description", .string("A flow workflow: steps nested in sequential and concurrent groups.")),
            ("type", .string("object")),
            ("required", .array([.string("steps")])),
            ("additionalProperties", .bool(false)),
            ("properties", .object(WorkflowParser.topLevelKeys.map { ($0, topLevel[$0]!) })),
            ("$defs", .object(defs)),
        ])
    }
}
