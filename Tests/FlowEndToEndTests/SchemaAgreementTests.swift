import Foundation
import Testing

/// `flow schema` (what editors check as you type) and `flow validate` agree, through the
/// built binary: each sample is valid for both or invalid for both. The samples are the
/// disagreements a differential audit found (random workflows, each checked by `flow
/// validate` and by Python's jsonschema with `flow schema`), one or more per class.
@Suite struct SchemaAgreementTests {
    /// A sample: the workflow, and whether it is valid.
    struct Sample: Sendable, CustomTestStringConvertible {
        var yaml: String
        var isValid: Bool
        var testDescription: String { "\(isValid ? "valid" : "invalid"): \(yaml.debugDescription)" }
    }

    /// YAML 1.2 core numbers, exactly: what it reads as a string (`-inf`, `0x1p3`, `nan`) is
    /// a string for flow too, and `0o10` is a number everywhere a number goes. flow read
    /// numbers with Swift's `Double`, which also takes those strings.
    static let numberSpellings: [Sample] = [
        Sample(yaml: "steps:\n  - -inf\n  - +infinity\n  - nan\n  - 0x1p3\n  - -0x10\n  - 0X10\n", isValid: true),
        Sample(yaml: "steps:\n  - shell: -inf\n    tags: [0x1p3, -nan, 0x-1]\n    dir: 0o+7\n", isValid: true),
        Sample(yaml: "steps:\n  - shell: x\n    retry: {limit: 0o3, backoff: 0o10, exit_codes: [0o113, 0x4b]}\n", isValid: true),
        Sample(yaml: "steps:\n  - shell: x\n    retry: 0x1p3\n", isValid: false),
        Sample(yaml: "steps:\n  - shell: x\n    retry: {limit: 1, backoff: 0x1p1}\n", isValid: false),
        Sample(yaml: "version: 0x1p0\nsteps: [a]\n", isValid: false),
        Sample(yaml: "steps:\n  - concurrent: [a]\n    max_parallel: 0X10\n", isValid: false),
        Sample(yaml: "steps:\n  - 5\n", isValid: false),
        Sample(yaml: "steps:\n  - 1.\n", isValid: false),
        Sample(yaml: "steps:\n  - .NaN\n", isValid: false),
        Sample(yaml: "steps:\n  - 0o17\n", isValid: false),
    ]

    /// What flow rejects and a JSON Schema can say, which the schema let through: YAML 1.1's
    /// booleans and a blank `if`; a NUL in a command, `dir`, `env` value or shell path (C
    /// strings); `interactive` with `stdin`; a param both `required` and with a `default`.
    /// And a shell path with a line break in a directory, which flow takes and the schema's
    /// `.*` did not.
    static let schemaCanSay: [Sample] = [
        Sample(yaml: "steps:\n  - print: x\n    if: yes\n", isValid: false),
        Sample(yaml: "steps:\n  - print: x\n    if: 'yes'\n", isValid: false),
        Sample(yaml: "steps:\n  - print: x\n    if: On\n", isValid: false),
        Sample(yaml: "steps:\n  - print: x\n    if: ''\n", isValid: false),
        Sample(yaml: "steps:\n  - print: x\n    if: \" \\t\\n\"\n", isValid: false),
        Sample(yaml: "steps:\n  - print: x\n    if: 'true'\n", isValid: true),
        Sample(yaml: "steps:\n  - \"echo a\\0b\"\n", isValid: false),
        Sample(yaml: "steps:\n  - shell: \"echo\\0\"\n", isValid: false),
        Sample(yaml: "steps:\n  - shell: x\n    dir: \"a\\0\"\n", isValid: false),
        Sample(yaml: "defaults: {dir: \"\\0\"}\nsteps: [x]\n", isValid: false),
        Sample(yaml: "env: {A: \"x\\0\"}\nsteps: [x]\n", isValid: false),
        Sample(yaml: "shell: \"/bin\\0/bash\"\nsteps: [x]\n", isValid: false),
        Sample(yaml: "steps:\n  - shell: cat\n    stdin: \"a\\0b\"\n  - print: \"a\\0b\"\n", isValid: true),
        Sample(yaml: "shell: \"/odd\\ndir/bash\"\nsteps: [x]\n", isValid: true),
        Sample(yaml: "steps:\n  - shell: cat\n    interactive: true\n    stdin: x\n", isValid: false),
        // NaN passes every bound (each comparison with it is false).
        Sample(yaml: "steps:\n  - shell: x\n    retry: {limit: 1, backoff: .nan}\n", isValid: false),
        Sample(yaml: "steps:\n  - delay: .NaN\n", isValid: false),
        Sample(yaml: "steps:\n  - print: x\n    timeout: .NAN\n", isValid: false),
        Sample(yaml: "steps:\n  - shell: x\n    retry: {limit: 1, backoff: 1, delay: 0, max_delay: 0.5}\n", isValid: true),
        Sample(yaml: "steps:\n  - shell: cat\n    interactive: false\n    stdin: x\n", isValid: true),
        Sample(yaml: "actions:\n  a:\n    params: {p: {required: true, default: x}}\n    steps: ['echo \"${{ params.p }}\"']\n"
                   + "steps:\n  - use: a\n    with: {p: y}\n", isValid: false),
        Sample(yaml: "actions:\n  a:\n    params: {p: {required: false, default: x}, q: }\n"
                   + "    steps: ['echo \"${{ params.p }}${{ params.q }}\"']\nsteps:\n  - use: a\n", isValid: true),
    ]

    static let hasJSONSchema: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import jsonschema, yaml"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// Loads each file (argv[2…]) as YAML 1.2 core, as flow and yaml-language-server read
    /// it (PyYAML alone reads YAML 1.1: `yes` a boolean, `0o17` a string), and validates it
    /// against the schema (argv[1]) with `$` anchoring the end as in ECMA-262 (Python's
    /// also matches before a final newline). Prints the paths that fail.
    static let validatorScript = #"""
        import json, re, sys, yaml, jsonschema
        from yaml.resolver import BaseResolver
        class R(BaseResolver): pass
        for tag, pattern, first in [
            ("null", r"^(?:~|null|Null|NULL|)\Z", list("~nN") + [""]),
            ("bool", r"^(?:true|True|TRUE|false|False|FALSE)\Z", list("tTfF")),
            ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z", list("-+0123456789")),
            ("float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z", list("-+.0123456789")),
            ("merge", r"^<<\Z", ["<"])]:
            R.add_implicit_resolver("tag:yaml.org,2002:" + tag, re.compile(pattern), first)
        class C(yaml.constructor.SafeConstructor): pass
        def integer(loader, node):
            v = loader.construct_scalar(node)
            sign = -1 if v[:1] == "-" else 1
            v = v.lstrip("+-")
            return sign * (int(v[2:], 8) if v.startswith("0o") else int(v[2:], 16) if v.startswith("0x") else int(v))
        def number(loader, node):
            v = loader.construct_scalar(node)
            special = {".inf": "inf", "+.inf": "inf", "-.inf": "-inf", ".nan": "nan"}
            return float(special.get(v.lower(), v))
        C.add_constructor("tag:yaml.org,2002:int", integer)
        C.add_constructor("tag:yaml.org,2002:float", number)
        C.add_constructor("tag:yaml.org,2002:bool", lambda l, n: l.construct_scalar(n).lower() == "true")
        class Loader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer, C, R):
            def __init__(self, stream):
                yaml.reader.Reader.__init__(self, stream); yaml.scanner.Scanner.__init__(self)
                yaml.parser.Parser.__init__(self); yaml.composer.Composer.__init__(self)
                C.__init__(self); R.__init__(self)
        def ecma(s):
            if isinstance(s, dict):
                return {k: (v[:-1] + r"\Z" if k == "pattern" and isinstance(v, str) and v.endswith("$") else ecma(v)) for k, v in s.items()}
            return [ecma(v) for v in s] if isinstance(s, list) else s
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(ecma(schema))
        for path in sys.argv[2:]:
            with open(path) as f:
                document = yaml.load(f, Loader=Loader)
            if any(True for _ in validator.iter_errors(document)):
                print(path)
        """#

    /// Writes the samples, runs `flow validate --format json` on all of them at once and
    /// (when Python has jsonschema) the schema check, and expects each verdict to be the
    /// sample's.
    static func check(_ samples: [Sample]) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-schema-agree-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Relative to the directory both run in: `--format json` names a file as it was given.
        var paths: [String] = []
        for (index, sample) in samples.enumerated() {
            try sample.yaml.write(to: directory.appendingPathComponent("s\(index).yaml"), atomically: true, encoding: .utf8)
            paths.append("s\(index).yaml")
        }
        let validate = try FlowBinary.run(["validate", "--format", "json"] + paths, in: directory)
        let diagnostics = try #require(try JSONSerialization.jsonObject(with: Data(validate.stdout.utf8)) as? [[String: Any]],
                                       "\(validate)")
        let rejected = Set(diagnostics.filter { $0["severity"] as? String == "error" }.compactMap { $0["file"] as? String })
        for (index, sample) in samples.enumerated() {
            let errors = diagnostics.filter { $0["file"] as? String == paths[index] && $0["severity"] as? String == "error" }
            #expect(!rejected.contains(paths[index]) == sample.isValid,
                    "flow validate on \(sample.yaml.debugDescription): \(errors.map { $0["message"] ?? "" })")
        }
        guard hasJSONSchema else { return }
        let schema = try FlowBinary.run(["schema"], in: directory)
        #expect(schema.status == 0)
        try schema.stdout.write(to: directory.appendingPathComponent("schema.json"), atomically: true, encoding: .utf8)
        try validatorScript.write(to: directory.appendingPathComponent("check.py"), atomically: true, encoding: .utf8)
        // The test's own environment (FlowBinary's clean one may have no Python with jsonschema).
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "check.py", "schema.json"] + paths
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let failing = Set(output.split(separator: "\n").map(String.init))
        for (index, sample) in samples.enumerated() {
            #expect(!failing.contains(paths[index]) == sample.isValid, "flow schema on \(sample.yaml.debugDescription)")
        }
    }

    @Test func numbersAreYAML12CoreNumbers() throws {
        try Self.check(Self.numberSpellings)
    }

    @Test func whatASchemaCanSayItSays() throws {
        try Self.check(Self.schemaCanSay)
    }

    /// Editors show a property's `description` on hover: every property has one (those
    /// inside a `not`, which only says what may not be, aside).
    @Test func everyPropertyHasADescription() throws {
        let result = try FlowBinary.run(["schema"], in: FlowBinary.packageRoot)
        let schema = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        var missing: [String] = []
        func walk(_ value: Any, _ path: String) {
            if let object = value as? [String: Any] {
                for (key, property) in (object["properties"] as? [String: Any]) ?? [:] {
                    if (property as? [String: Any])?["description"] == nil { missing.append("\(path)/properties/\(key)") }
                }
                for (key, child) in object where key != "not" { walk(child, "\(path)/\(key)") }
            } else if let array = value as? [Any] {
                for (index, child) in array.enumerated() { walk(child, "\(path)/\(index)") }
            }
        }
        walk(schema, "#")
        #expect(missing.isEmpty, "\(missing.sorted())")
    }
}
