import Foundation
@testable import FlowKit
import Testing

/// `flow schema`: valid JSON, in step with the parser's key lists, and accepting every
/// example workflow (checked with Python's jsonschema when it is installed).
@Suite struct SchemaTests {
    static func schema() throws -> [String: Any] {
        let json = WorkflowSchema.json()
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    static func object(_ value: Any?, _ path: String...) throws -> [String: Any] {
        var current = value
        for key in path { current = (current as? [String: Any])?[key] }
        return try #require(current as? [String: Any], "no object at \(path)")
    }

    /// The step variant whose `required` is `[kind]`.
    static func stepVariant(_ kind: String) throws -> [String: Any] {
        let step = try object(try schema(), "$defs", "step")
        let variants = try #require(step["anyOf"] as? [[String: Any]])
        return try #require(variants.first { ($0["required"] as? [String]) == [kind] }, "no variant for `\(kind)`")
    }

    /// Whether `text` matches the pattern of the string branch of `$defs.<name>`.
    static func durationPatternMatches(_ text: String, def name: String = "duration") throws -> Bool {
        let duration = try Self.object(try Self.schema(), "$defs", name)
        let variants = try #require(duration["anyOf"] as? [[String: Any]])
        let string = try #require(variants.first { $0["type"] as? String == "string" })
        let pattern = try #require(string["pattern"] as? String)
        func matches(_ pattern: String) throws -> Bool {
            try NSRegularExpression(pattern: pattern).firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        let excluded = try ((string["not"] as? [String: Any])?["pattern"] as? String).map(matches) ?? false
        return try matches(pattern) && !excluded
    }

    /// The schema's duration pattern takes exactly the strings the parser takes, up to the
    /// maximum (each part alone, `1000001h` or `3600000001`, is bounded too).
    @Test(arguments: [
        "250ms", "1s", "1.5s", "2m", "1h30m", "1h", "90", "0.5", "1h2m3s4ms", "1h4ms", "2m1ms", "  5s\t", "1m30.5s",
        "", " ", ".5s", "5.s", ".5", "1e3", "-0", "-5s", "0x10", "30m1h", "1h1h", "1h 30m", "5d", "ms", "5 s", "1m5",
        "99999999999999999999999h", "1000000h", "1000000.0h", "0001000000h", "999999.999h", "1000000.5h", "1000001h",
        "60000000m", "60000001m", "3600000000", "3600000000.000", "3600000001", "3600000000.5", "3599999999.9",
        "3600000000s", "4000000000s", "3600000000000ms", "3600000000001ms", "10000000000000ms", "0h0m0s0ms",
    ])
    func durationPatternAgreesWithTheParser(text: String) throws {
        let matches = try Self.durationPatternMatches(text)
        let parses = (try? Duration.parseChecked(text).get()) != nil
        #expect(matches == parses, "`\(text)`: schema \(matches), parser \(parses)")
        let variants = try #require(try Self.object(try Self.schema(), "$defs", "duration")["anyOf"] as? [[String: Any]])
        let number = try #require(variants.first { $0["type"] as? String == "number" })
        #expect(number["maximum"] as? Int == 3_600_000_000)
    }

    /// A pattern cannot add: parts each within the maximum but longer together pass the
    /// schema, and flow says "too long" (documented in editor-setup.md).
    @Test(arguments: ["999999h61m", "1000000h1ms", "59999999m3600000000s"])
    func aSumOverTheMaximumPassesOnlyTheSchema(text: String) throws {
        #expect(try Self.durationPatternMatches(text))
        #expect(Duration.parseChecked(text) == .failure(.tooLong))
    }

    /// `timeout` must be longer than zero, in the schema as in flow.
    @Test(arguments: ["0", "0s", " 0.0h0m0s0ms ", "000ms", "0.000s", "1ms", "0.5", "0h0m1s", "0.000000001s", "1000000h"])
    func positiveDurationAgreesWithTheParser(text: String) throws {
        let matches = try Self.durationPatternMatches(text, def: "positiveDuration")
        let positive = (try? Duration.parseChecked(text).get()).map { $0 > .zero } ?? false
        #expect(matches == positive, "`\(text)`: schema \(matches), parser \(positive)")
    }

    @Test func schemaIsJSONWithADraft() throws {
        let schema = try Self.schema()
        #expect(schema["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
        #expect(schema["required"] as? [String] == ["steps"])
        #expect(schema["additionalProperties"] as? Bool == false)
        #expect(WorkflowSchema.json().hasSuffix("}\n"))
    }

    @Test func everyTopLevelKeyIsInTheSchema() throws {
        let properties = try Self.object(try Self.schema(), "properties")
        #expect(Set(properties.keys) == Set(WorkflowParser.topLevelKeys))
    }

    @Test(arguments: StepKind.keywords)
    func everyStepKeyIsInTheSchema(kind: String) throws {
        let variant = try Self.stepVariant(kind)
        let properties = try Self.object(variant, "properties")
        #expect(variant["additionalProperties"] as? Bool == false)
        // Only shell steps write outputs (the parser reports `outputs` elsewhere as misplaced).
        var expected = Set([kind] + StepKind.commonOptions.filter { $0 != "outputs" || kind == "shell" }
            + (StepKind.kindOptions[kind] ?? []))
        if ["sequential", "concurrent", "use"].contains(kind) { expected.formUnion(StepKind.groupOptions) }
        #expect(Set(properties.keys) == expected)
    }

    @Test func everyKindHasAVariantAndAStringIsAShellStep() throws {
        let step = try Self.object(try Self.schema(), "$defs", "step")
        let variants = try #require(step["anyOf"] as? [[String: Any]])
        #expect(variants.count == StepKind.keywords.count + 1)
        #expect(variants.contains { $0["type"] as? String == "string" })
        #expect(Set(StepKind.kindOptions.keys) == Set(StepKind.keywords))
    }

    @Test func defaultsActionsParamsAndRetryKeys() throws {
        let schema = try Self.schema()
        #expect(Set(try Self.object(schema, "properties", "defaults", "properties").keys) == Set(StepDefaults.keys))
        #expect(Set(try Self.object(schema, "$defs", "action", "properties").keys) == Set(WorkflowParser.actionKeys))
        #expect(Set(try Self.object(schema, "$defs", "param", "properties").keys) == Set(WorkflowParser.paramKeys))
        let retry = try #require(try Self.object(schema, "$defs", "retry")["anyOf"] as? [[String: Any]])
        let long = try #require(retry.first { $0["type"] as? String == "object" })
        #expect(Set(try Self.object(long, "properties").keys) == ["limit", "delay", "backoff", "max_delay", "exit_codes"])
    }

    // MARK: Against real workflows (needs python3 with jsonschema and PyYAML)

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let hasJSONSchema: Bool = {
        (try? python(["-c", "import jsonschema, yaml"]).status) == 0
    }()

    static func python(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    /// Validates each YAML document (file paths) against the schema; prints one line per failure.
    static let validatorScript = """
        import json, sys, yaml, jsonschema
        schema = json.load(sys.stdin)
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        bad = 0
        for path in sys.argv[1:]:
            with open(path) as f:
                doc = yaml.safe_load(f)
            for error in validator.iter_errors(doc):
                bad += 1
                print(f"{path}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
        sys.exit(1 if bad else 0)
        """

    static func validate(_ paths: [String]) throws -> (status: Int32, output: String) {
        try python(["-c", validatorScript] + paths, input: WorkflowSchema.json())
    }

    @Test(.enabled(if: hasJSONSchema, "python3 with jsonschema and PyYAML is not installed"))
    func everyExampleWorkflowMatchesTheSchema() throws {
        let directory = Self.packageRoot.appendingPathComponent("workflows")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
        try #require(!files.isEmpty)
        let result = try Self.validate(files.map { directory.appendingPathComponent($0).path })
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(.enabled(if: hasJSONSchema, "python3 with jsonschema and PyYAML is not installed"))
    func schemaAgreesWithTheParserOnSamples() throws {
        let samples: [(String, Bool)] = [
            ("steps: [echo hi]", true),
            ("steps:\n  - print: x\n    stream: stderr\n  - delay: 250ms\n  - sequential: [a]\n    shell: bash\n", true),
            ("steps:\n  - shell: x\n    retry: {limit: 2, delay: 1s}\n    timeout: 90\n", true),
            ("steps: []", false),
            ("steps:\n  - shel: x\n", false),
            ("steps:\n  - print: x\n    dir: /\n", false),
            ("stepz: [a]\nsteps: [b]\n", false),
            ("steps:\n  - concurrent: [a]\n    max_parallel: 0\n", false),
            ("steps:\n  - delay: soon\n", false),
            ("version: 2\nsteps: [a]\n", false),
            // Durations: `timeout` is longer than zero; no part over the maximum.
            ("steps:\n  - shell: x\n    timeout: 0\n", false),
            ("steps:\n  - shell: x\n    timeout: 0s\n", false),
            ("defaults: {timeout: 0ms}\nsteps: [a]\n", false),
            ("steps:\n  - delay: 0\n  - delay: 1000000h\n", true),
            ("steps:\n  - delay: 1000001h\n", false),
            ("steps:\n  - delay: 3600000001\n", false),
            ("steps:\n  - delay: true\n", false),
            // Code and names are strings; a number or boolean there is wrong-type.
            ("steps:\n  - shell: 5\n", false),
            ("steps:\n  - shell: '   '\n", false),
            ("steps: ['']\n", false),
            ("steps:\n  - print: x\n    if: 1\n", false),
            ("steps:\n  - print: x\n    if: false\n", true),
            ("steps:\n  - print: x\n    tags: [1]\n", false),
            ("steps:\n  - print: x\n    tags: 1\n", false),
            ("steps:\n  - print: x\n    tags: one\n", true),
            ("steps:\n  - print: x\n    name: true\n", false),
            ("name: 5\nsteps: [a]\n", false),
            ("steps:\n  - shell: x\n    dir: 5\n", false),
            ("defaults: {dir: 5}\nsteps: [a]\n", false),
            ("defaults: {dir: ''}\nsteps: [a]\n", false),
            ("steps:\n  - shell: x\n    dir: ''\n", false),
            ("steps:\n  - shell: x\n    dir: ' '\n", true),
            ("shell: 5\nsteps: [a]\n", false),
            ("steps:\n  - use: 5\n", false),
            ("steps:\n  - print: x\n    stream: 1\n", false),
            ("steps:\n  - shell: x\n    outputs: [1]\n", false),
            ("steps:\n  - shell: x\n    outputs: version\n", true),
            ("steps:\n  - shell: x\n    outputs: [k, j, k]\n", false),
            // Data takes any scalar as its text.
            ("description: 5\nenv: {PORT: 8080, DEBUG: true}\nvars: {n: 1}\nsteps:\n  - print: 5\n    description: 1.5\n", true),
            ("steps:\n  - shell: cat\n    stdin: 5\n", true),
            ("actions:\n  a:\n    description: 1\n    params: {p: {description: 2, default: 3, allowed: [3, 4]}}\n"
                + "    steps: ['echo \"${{ params.p }}\"']\nsteps:\n  - use: a\n    with: {p: 4}\n", true),
            ("actions:\n  a:\n    params: {p: {allowed: [{x: 1}]}}\n    steps: ['echo \"${{ params.p }}\"']\nsteps: [b]\n", false),
            ("env: {A: null}\nsteps: [a]\n", false),
            // Whole numbers: written as floats they are whole too (JSON Schema's `integer`).
            ("version: 1.0\nsteps:\n  - shell: x\n    retry: 3.0\n  - concurrent: [a]\n    max_parallel: 2.0\n", true),
            ("steps:\n  - shell: x\n    retry: {limit: 1, exit_codes: [75.0]}\n", true),
            ("steps:\n  - shell: x\n    retry: 1.5\n", false),
            ("steps:\n  - shell: x\n    retry: 99999999999999999999\n", false),
            ("steps:\n  - shell: x\n    retry: {limit: 1, backoff: .inf}\n", false),
            // Core tags type a scalar whatever its style.
            ("steps:\n  - shell: x\n    retry: !!int \"3\"\n    continue_on_error: !!bool \"true\"\n", true),
            ("steps:\n  - shell: !!str 5\n", true),
            ("steps:\n  - shell: !!int 5\n", false),
            // Names of vars, params and `with` keys.
            ("vars: {bad name: x}\nsteps: [a]\n", false),
            ("actions:\n  a:\n    params: {bad name: {}}\n    steps: [b]\nsteps: [c]\n", false),
            ("actions:\n  a:\n    steps: [b]\nsteps:\n  - use: a\n    with: {bad key: x}\n", false),
        ]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var paths: [String] = []
        for (index, (yaml, isValid)) in samples.enumerated() {
            #expect(load(yaml).isValid == isValid, "the parser on sample \(index): \(yaml)\n\(rendered(load(yaml).diagnostics))")
            let path = directory.appendingPathComponent("s\(index).yaml").path
            try yaml.write(toFile: path, atomically: true, encoding: .utf8)
            paths.append(path)
        }
        // One Python for all samples (one each took most of a second apiece).
        let result = try Self.validate(paths)
        let lines = result.output.split(separator: "\n")
        for (index, (yaml, isValid)) in samples.enumerated() {
            let failures = lines.filter { $0.hasPrefix(paths[index] + ": ") }
            #expect(failures.isEmpty == isValid, "the schema on sample \(index): \(yaml)\n\(failures.joined(separator: "\n"))")
        }
        #expect(result.status == 0 || lines.allSatisfy { line in paths.contains { line.hasPrefix($0 + ": ") } }, "\(result.output)")
    }
}
