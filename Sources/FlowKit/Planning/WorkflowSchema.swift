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
    static func bool(_ description: String) -> JSONValue {
        .object([("type", .string("boolean")), ("description", .string(description))])
    }

    static let namePattern = "^[A-Za-z_][A-Za-z0-9_-]*$"

    /// Schemas of the common step options.
    static var commonProperties: [(String, JSONValue)] {
        let all: [String: JSONValue] = [
            "name": .object([("type", .string("string")), ("pattern", .string(namePattern)),
                             ("description", .string("Identifier, unique in the file; used in output, `steps.<name>` references and --only."))]),
            "description": str("Free text, shown by `flow plan`."),
            "if": .object([("type", .array([.string("string"), .string("boolean")])),
                           ("description", .string("Condition expression, with or without ${{ }}; false skips the step."))]),
            "timeout": ref("duration"),
            "retry": ref("retry"),
            "continue_on_error": bool("A failure is recorded but does not fail the parent."),
            "undo": .object([("description", .string("A step, or list of steps, that reverses this one during rollback.")),
                             ("anyOf", .array([ref("step"), ref("steps")]))]),
            "tags": .object([("type", .array([.string("array"), .string("string")])), ("items", .object([("type", .string("string"))])),
                             ("description", .string("Tags that --tags and --skip-tags select on."))]),
            "env": ref("env"),
            "outputs": .object([("type", .string("array")),
                                ("items", .object([("type", .string("string")), ("pattern", .string(namePattern))])),
                                ("description", .string("Output keys the step promises to write to $FLOW_OUTPUT."))]),
        ]
        return StepKind.commonOptions.map { ($0, all[$0]!) }
    }

    static func kindOption(_ name: String) -> JSONValue {
        switch name {
        case "stream": return .object([("enum", .array([.string("stdout"), .string("stderr")]))])
        case "dir": return str("Working directory of the command.")
        case "stdin": return str("Text fed to the process on standard input.")
        case "interactive": return bool("Give the step the terminal (it runs alone).")
        case "finally": return ref("steps")
        case "max_parallel": return .object([("type", .string("integer")), ("minimum", .int(1))])
        case "fail_fast": return bool("The first failure cancels the running siblings (default true).")
        case "with": return .object([("type", .string("object")),
                                     ("additionalProperties", .object([("type", .array([.string("string"), .string("number"), .string("boolean"), .string("null")]))]))])
        default: return .object([])
        }
    }

    static func kindValue(_ kind: String) -> JSONValue {
        switch kind {
        case "print": return .object([("type", .array([.string("string"), .string("number"), .string("boolean")])), ("description", .string("Message to print (interpolated)."))])
        case "delay": return ref("duration")
        case "shell": return .object([("type", .string("string")), ("description", .string("Command line, run by the workflow's shell."))])
        case "sequential", "concurrent": return ref("steps")
        case "use": return .object([("type", .string("string")), ("pattern", .string(namePattern)), ("description", .string("Name of an action."))])
        default: return .object([])
        }
    }

    static var stepSchema: JSONValue {
        var variants: [JSONValue] = [.object([("type", .string("string")), ("description", .string("Shorthand for a shell step."))])]
        for kind in StepKind.keywords {
            var properties: [(String, JSONValue)] = [(kind, kindValue(kind))]
            properties += commonProperties.filter { $0.0 != "outputs" || kind == "shell" }
            for option in StepKind.kindOptions[kind] ?? [] { properties.append((option, kindOption(option))) }
            if StepKind.isGroup(kind) {
                properties.append(("shell", .object([("$ref", .string("#/$defs/shellProgram")),
                                                      ("description", .string("Shell for the shell steps inside this group."))])))
            }
            variants.append(.object([
                ("type", .string("object")),
                ("required", .array([.string(kind)])),
                ("properties", .object(properties)),
                ("additionalProperties", .bool(false)),
            ]))
        }
        return .object([("anyOf", .array(variants))])
    }

    static var value: JSONValue {
        // Exactly what `Duration.parseChecked` takes: units in order, each at most once
        // (`1h30m`, not `30m1h`), or a bare number of seconds; no sign, exponent or `.5`;
        // spaces and tabs around it. One alternative per largest unit, so no look-around
        // (not every JSON Schema engine has it).
        let n = #"[0-9]+(\.[0-9]+)?"#
        let h = n + "h", m = n + "m", s = n + "s", ms = n + "ms"
        let forms = [n, h + "(" + m + ")?(" + s + ")?(" + ms + ")?", m + "(" + s + ")?(" + ms + ")?", s + "(" + ms + ")?", ms]
        let durationPattern = #"^[ \t]*("# + forms.joined(separator: "|") + #")[ \t]*$"#
        let defs: [(String, JSONValue)] = [
            ("duration", .object([
                ("description", .string("250ms, 1s, 1.5s, 2m, 1h30m, or a number of seconds.")),
                ("anyOf", .array([
                    // A YAML number reaches a schema validator as a JSON number, so `1e3` or `0x10`
                    // cannot be told from `1000` or `16` here; flow itself rejects them.
                    .object([("type", .string("number")), ("minimum", .int(0)), ("maximum", .int(Int(Duration.maximum.components.seconds)))]),
                    .object([("type", .string("string")), ("pattern", .string(durationPattern))]),
                ])),
            ])),
            ("shellProgram", .object([
                ("type", .string("string")),
                ("pattern", .string("^(.*/)?(sh|bash|zsh|dash|ksh)$")),
                ("description", .string("sh (default), bash, zsh, dash, ksh, or a path to one of them.")),
            ])),
            ("env", .object([
                ("type", .string("object")),
                ("propertyNames", .object([("pattern", .string("^[A-Za-z_][A-Za-z0-9_]*$"))])),
                ("additionalProperties", .object([("type", .array([.string("string"), .string("number"), .string("boolean")]))])),
            ])),
            ("retry", .object([("anyOf", .array([
                .object([("type", .string("integer")), ("minimum", .int(0))]),
                .object([
                    ("type", .string("object")),
                    ("required", .array([.string("limit")])),
                    ("additionalProperties", .bool(false)),
                    ("properties", .object([
                        ("limit", .object([("type", .string("integer")), ("minimum", .int(0))])),
                        ("delay", ref("duration")),
                        ("backoff", .object([("type", .string("number")), ("minimum", .int(1))])),
                        ("max_delay", ref("duration")),
                        ("exit_codes", .object([("type", .string("array")),
                                                ("items", .object([("type", .string("integer")), ("minimum", .int(1)), ("maximum", .int(255))]))])),
                    ])),
                ]),
            ]))])),
            ("step", stepSchema),
            ("steps", .object([("type", .string("array")), ("minItems", .int(1)), ("items", ref("step"))])),
            ("param", .object([
                ("type", .array([.string("object"), .string("null")])),
                ("additionalProperties", .bool(false)),
                ("properties", .object([
                    ("description", .object([("type", .string("string"))])),
                    ("required", .object([("type", .string("boolean"))])),
                    ("default", .object([("type", .array([.string("string"), .string("number"), .string("boolean")]))])),
                    ("allowed", .object([("type", .string("array")), ("minItems", .int(1))])),
                ])),
            ])),
            ("action", .object([
                ("type", .string("object")),
                ("required", .array([.string("steps")])),
                ("additionalProperties", .bool(false)),
                ("properties", .object([
                    ("description", .object([("type", .string("string"))])),
                    ("params", .object([("type", .string("object")), ("additionalProperties", ref("param"))])),
                    ("steps", ref("steps")),
                ])),
            ])),
        ]
        let topLevel: [String: JSONValue] = [
            "version": .object([("const", .int(1))]),
            "name": .object([("type", .string("string")), ("pattern", .string(namePattern))]),
            "description": .object([("type", .string("string"))]),
            "shell": ref("shellProgram"),
            "env": ref("env"),
            "vars": .object([("type", .string("object")),
                             ("additionalProperties", .object([("type", .array([.string("string"), .string("number"), .string("boolean"), .string("null")]))]))]),
            "defaults": .object([
                ("type", .string("object")),
                ("additionalProperties", .bool(false)),
                ("properties", .object(StepDefaults.keys.map { key -> (String, JSONValue) in
                    switch key {
                    case "timeout": return (key, ref("duration"))
                    case "retry": return (key, ref("retry"))
                    case "continue_on_error": return (key, .object([("type", .string("boolean"))]))
                    case "shell": return (key, ref("shellProgram"))
                    default: return (key, .object([("type", .string("string"))]))
                    }
                })),
            ]),
            "rollback": .object([("type", .string("boolean"))]),
            "actions": .object([("type", .string("object")),
                                ("propertyNames", .object([("pattern", .string(namePattern))])),
                                ("additionalProperties", ref("action"))]),
            "steps": ref("steps"),
            "finally": ref("steps"),
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
