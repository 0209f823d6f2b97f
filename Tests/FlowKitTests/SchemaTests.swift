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

    /// The schema's duration pattern takes exactly the strings the parser takes.
    @Test(arguments: [
        "250ms", "1s", "1.5s", "2m", "1h30m", "1h", "90", "0.5", "1h2m3s4ms", "1h4ms", "2m1ms", "  5s\t", "1m30.5s",
        "", " ", ".5s", "5.s", ".5", "1e3", "-0", "-5s", "0x10", "30m1h", "1h1h", "1h 30m", "5d", "ms", "5 s", "1m5",
        "99999999999999999999999h",
    ])
    func durationPatternAgreesWithTheParser(text: String) throws {
        let duration = try Self.object(try Self.schema(), "$defs", "duration")
        let variants = try #require(duration["anyOf"] as? [[String: Any]])
        let pattern = try #require(variants.compactMap { $0["pattern"] as? String }.first)
        let regex = try NSRegularExpression(pattern: pattern)
        let matches = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        // The pattern cannot bound the value: a too long duration matches it.
        let parses = Duration.parseChecked(text) != .failure(.malformed) && Duration.parseChecked(text) != .failure(.empty)
            && Duration.parseChecked(text) != .failure(.negative)
        #expect(matches == parses, "`\(text)`: schema \(matches), parser \(parses)")
        let number = try #require(variants.first { $0["type"] as? String == "number" })
        #expect(number["maximum"] as? Int == 3_600_000_000)
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
        ]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, (yaml, isValid)) in samples.enumerated() {
            #expect(load(yaml).isValid == isValid, "the parser on sample \(index)")
            let path = directory.appendingPathComponent("s\(index).yaml").path
            try yaml.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try Self.validate([path])
            #expect((result.status == 0) == isValid, "the schema on sample \(index): \(yaml)\n\(result.output)")
        }
    }
}
