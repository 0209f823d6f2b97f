import Foundation
import Testing

/// Inputs too big or too repetitive for a fixture folder, written to a temp directory and
/// run through the built binary: each once crashed flow or took minutes.
@Suite struct GeneratedInputTests {
    /// Writes `yaml` as `wf.yaml` in a fresh directory and runs `flow arguments… wf.yaml`.
    static func run(_ arguments: [String], on yaml: String) throws -> FlowBinary.Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-generated-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try yaml.write(to: directory.appendingPathComponent("wf.yaml"), atomically: true, encoding: .utf8)
        return try FlowBinary.run(arguments + ["wf.yaml"], in: directory, timeout: 60)
    }

    /// A one-step workflow whose `if` is `expression`.
    static func condition(_ expression: String) -> String {
        "steps:\n  - if: \"${{ \(expression) }}\"\n    print: hi\n"
    }

    static let deepExpressions: [(String, String)] = [
        ("10,000 `(`", String(repeating: "(", count: 10_000) + "true" + String(repeating: ")", count: 10_000)),
        ("200,000 `!`", String(repeating: "!", count: 200_000) + "true"),
        ("50,000 `!`", String(repeating: "!", count: 50_000) + "true"),
        ("100,000 `&&` operands", Array(repeating: "true", count: 100_000).joined(separator: " && ")),
        ("100,000 `||` operands", Array(repeating: "true", count: 100_000).joined(separator: " || ")),
    ]

    /// These segfaulted (stack overflow) in validate or plan; now validate reports where
    /// the expression passes the depth limit and plan refuses the workflow.
    @Test(arguments: deepExpressions)
    func deeplyNestedExpressionIsALocatedError(what: String, expression: String) throws {
        let yaml = Self.condition(expression)
        let validate = try Self.run(["validate"], on: yaml)
        #expect(validate.status == 1, "\(what): \(validate.stderr.prefix(300))")
        #expect(validate.stderr.hasPrefix("wf.yaml:2:"), "\(what): \(validate.stderr.prefix(300))")
        #expect(validate.stderr.contains("nested more than 256 levels deep [expression-syntax]"))
        for format in ["text", "json"] {
            let plan = try Self.run(["plan", "--format", format], on: yaml)
            #expect(plan.status == 2, "\(what), plan --format \(format): \(plan.stderr.prefix(300))")
        }
    }

    /// The deepest expression accepted plans, graphs and runs.
    @Test func expressionAtTheDepthLimitRuns() throws {
        let yaml = Self.condition(Array(repeating: "true", count: 256).joined(separator: " && "))
        for arguments in [["validate"], ["plan"], ["plan", "--format", "json"], ["graph"], ["run"]] {
            let result = try Self.run(arguments, on: yaml)
            #expect(result.status == 0, "\(arguments): \(result.stderr.prefix(300))")
        }
    }

    /// Thousands of unresolved references each searched every name for a "did you mean"
    /// (20,000 took minutes). Now the search is bounded: this completes, and the first
    /// references still get a suggestion.
    @Test func manyUnresolvedReferencesValidate() throws {
        let count = 4_000
        var yaml = "vars:\n" + (0..<count).map { "  v\($0): x\n" }.joined() + "steps:\n"
        for n in 0..<count {
            yaml += "  - name: s\(n)\n    print: \"${{ steps.zz\(n).outputs.x }} ${{ vars.zz\(n) }}\"\n"
        }
        let result = try Self.run(["validate"], on: yaml)
        #expect(result.status == 1)
        #expect(result.stderr.hasSuffix("\(2 * count) errors, \(count) warnings in 1 file\n"), "\(result.stderr.suffix(200))")
        #expect(result.stderr.contains("no step named `zz0` in this workflow [unknown-reference]"))
        #expect(result.stderr.contains("did you mean `s10`?"))
    }

    /// Duration options take the workflow grammar and maximum: a usage error (exit 2), where
    /// `--grace 99999999999999999999999h` used to trap.
    @Test(arguments: [
        ["run", "--grace", "99999999999999999999999h"], ["run", "--grace", "1000001h"], ["run", "--grace", "1e3"],
        ["run", "--grace", ".5s"],
    ])
    func durationOptionBeyondTheGrammarIsAUsageError(arguments: [String]) throws {
        let result = try Self.run(arguments, on: "steps:\n  - print: hi\n")
        #expect(result.status == 2, "\(arguments): \(result.stderr.prefix(300))")
        #expect(result.stderr.contains("invalid"), "\(result.stderr.prefix(300))")
    }

    /// `runs --prune-older-than` takes days too; the number is of the duration grammar.
    @Test(arguments: ["1e400d", "999999999d", "infd", "99999999999999999999999h", "5sd"])
    func pruneAgeBeyondTheGrammarIsAUsageError(age: String) throws {
        let result = try FlowBinary.run(["runs", "--prune-older-than", age], in: FileManager.default.temporaryDirectory)
        #expect(result.status == 2, "\(age): \(result.stderr.prefix(300))")
        #expect(result.stderr.contains("invalid age"), "\(result.stderr.prefix(300))")
    }

    /// Spaces around an age are allowed, as around every duration.
    @Test(arguments: [" 7d ", "\t12h"])
    func pruneAgeMayHaveSpacesAround(age: String) throws {
        let result = try FlowBinary.run(["runs", "--prune-older-than", age, "--state-dir", "st"],
                                        in: FileManager.default.temporaryDirectory)
        // (No journal there: the age itself must not be what is refused.)
        #expect(!result.stderr.contains("invalid age"), "\(age): \(result.stderr.prefix(300))")
    }

    @Test func durationOptionAtTheMaximumIsAccepted() throws {
        let result = try Self.run(["run", "--grace", "1000000h"], on: "steps:\n  - print: hi\n")
        #expect(result.status == 0, "\(result.stderr.prefix(300))")
    }

    /// `a0` uses `a1` uses … `a(n-1)`, and the steps use `a0`.
    static func actionChain(_ n: Int, cycle: Bool = false) -> String {
        var yaml = "actions:\n"
        for i in 0..<n {
            let next = i < n - 1 ? "use: a\(i + 1)" : (cycle ? "use: a0" : "print: end")
            yaml += "  a\(i):\n    steps:\n      - \(next)\n"
        }
        return yaml + "steps:\n  - use: a0\n"
    }

    /// A chain of actions as deep as planning allows (64 `use` levels) validates and plans;
    /// one level more is an error at the use site, from validate too (it was a crash at
    /// 20,000, after minutes of a quadratic recursion check).
    @Test(arguments: [64, 65, 20_000])
    func chainsOfActionsAreCheckedWithoutRecursion(_ n: Int) throws {
        let yaml = Self.actionChain(n)
        let validate = try Self.run(["validate"], on: yaml)
        let plan = try Self.run(["plan"], on: yaml)
        if n <= 64 {
            #expect(validate.status == 0, "\(validate.stderr.prefix(400))")
            #expect(plan.status == 0, "\(plan.stderr.prefix(400))")
        } else {
            #expect(validate.status == 1, "\(validate.stderr.prefix(400))")
            #expect(validate.stderr.components(separatedBy: "[expansion-limit]").count == 2, "one error: \(validate.stderr.prefix(400))")
            #expect(validate.stderr.contains("`use` steps nest more than 64 levels deep"), "\(validate.stderr.prefix(400))")
            #expect(plan.status == 2 && plan.stderr.contains("[expansion-limit]"), "plan reports the same: \(plan.stderr.prefix(400))")
        }
    }

    /// A cycle of thousands of actions is one error, not one per site with the whole chain.
    @Test func aLongCycleOfActionsIsOneError() throws {
        let validate = try Self.run(["validate"], on: Self.actionChain(5_000, cycle: true))
        #expect(validate.status == 1, "\(validate.stderr.prefix(400))")
        #expect(validate.stderr.components(separatedBy: "[action-recursion]").count == 2, "\(validate.stderr.prefix(400))")
        #expect(validate.stderr.contains("through a cycle of 5000 actions"), "\(validate.stderr.prefix(400))")
        #expect(validate.stderr.utf8.count < 2_000, "\(validate.stderr.utf8.count) bytes")
    }

    /// 20,000 variables each referenced once validate at once (a scan of the variables per
    /// reference took 14 s).
    @Test func thousandsOfVariablesAreLookedUpByName() throws {
        var yaml = "vars:\n"
        for i in 0..<20_000 { yaml += "  v\(i): x\n" }
        yaml += "steps:\n"
        for i in 0..<20_000 { yaml += "  - print: \"${{ vars.v\(i) }}\"\n" }
        let validate = try Self.run(["validate"], on: yaml)
        #expect(validate.status == 0, "\(validate.stderr.prefix(400))")
    }

    /// Groups of aliases of groups of one 500 KB message (111,111 prints in 311,113 nodes,
    /// under the node limit) made a 500 KB file that `validate` read for a minute and `plan`
    /// printed 55 GB of. Found by hand while fuzzing (Tests/fuzz now makes such inputs).
    /// Now the text aliases repeat is bounded (64 MiB), and the alias that passes the bound
    /// is the error: the first of level 3 (each level-2 group holds 50 MB).
    @Test func aliasesRepeatingALongScalarAreAnAliasBomb() throws {
        var yaml = "steps:\n  - &s0 {print: &a \"" + String(repeating: "x", count: 500_000) + "\"}\n"
        for level in 1...5 {
            yaml += "  - &s\(level) {sequential: [" + Array(repeating: "*s\(level - 1)", count: 10).joined(separator: ", ") + "]}\n"
        }
        for command in [["validate"], ["plan"], ["graph"], ["run", "--dry-run"]] {
            let result = try Self.run(command, on: yaml)
            #expect(result.status == (command == ["validate"] ? 1 : 2), "\(command): \(result.stderr.prefix(400))")
            #expect(result.stderr.hasPrefix("wf.yaml:5:23: error: aliases expand to more than 64 MiB of text [alias-limit]\n"),
                    "\(command): \(result.stderr.prefix(400))")
            #expect(result.stdout.utf8.count < 1_000, "\(command): \(result.stdout.utf8.count) bytes")
        }
    }

    /// 30,000 expressions on one generated line (900 KB) validate at once: each was located
    /// by decoding the whole line again (10,000 took 8 s, 30,000 over 2 minutes). Found by
    /// hand while fuzzing.
    @Test func thousandsOfExpressionsOnOneLineValidate() throws {
        let steps = (0..<30_000).map { #"{print: "${{ vars.x\#($0) }}"}"# }
        let line = "steps: [" + steps.joined(separator: ", ") + "]"
        let validate = try Self.run(["validate", "--format", "json"], on: line + "\n")
        #expect(validate.status == 1, "\(validate.stderr.prefix(400))")
        // The last reference, exactly placed: `x29999` after its `vars.`.
        let column = try #require(line.range(of: "vars.x29999")).upperBound.utf16Offset(in: line) - 5
        #expect(validate.stdout.contains("\"column\": \(column),"), "\(validate.stdout.suffix(400))")
    }

    /// 20,000 duplicates of a key first written on a 1.5 MB line: each diagnostic's note
    /// shows that line, and the text renderer kept only the line shown last, so it decoded
    /// both lines for every diagnostic (30 GB; minutes). (The first `a` is an unknown
    /// key of a `print` step: one error more.) Found by hand while fuzzing.
    @Test func notesOnALongLineAreRenderedOnce() throws {
        let duplicates = Array(repeating: "a: 1", count: 20_000).joined(separator: ", ")
        let yaml = "steps:\n  - {print: " + String(repeating: "x", count: 1_500_000) + ", a: 1,\n     " + duplicates + "}\n"
        let validate = try Self.run(["validate"], on: yaml)
        #expect(validate.status == 1, "\(validate.stderr.prefix(400))")
        #expect(validate.stderr.hasSuffix("20001 errors in 1 file\n"), "\(validate.stderr.suffix(400))")
        #expect(validate.stderr.components(separatedBy: "note: first `a` is here").count == 20_001)
    }
}
