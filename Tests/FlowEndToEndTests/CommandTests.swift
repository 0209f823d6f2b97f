import Foundation
import Testing

/// Checks through the binary that need no golden: every example workflow, help, schema.
@Suite struct CommandTests {
    static let workflowsDirectory = FlowBinary.packageRoot.appendingPathComponent("workflows")

    static let workflows: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: workflowsDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
    }()

    @Test func thereAreExampleWorkflows() {
        #expect(!Self.workflows.isEmpty)
    }

    @Test(arguments: workflows)
    func exampleWorkflowValidatesAndPlans(_ name: String) throws {
        let validate = try FlowBinary.run(["validate", "--strict", "workflows/\(name)"], in: FlowBinary.packageRoot)
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(validate.stdout == "workflows/\(name): valid\n")
        #expect(validate.stderr.isEmpty, "no warnings either")
        let plan = try FlowBinary.run(["plan", "workflows/\(name)"], in: FlowBinary.packageRoot)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stderr.isEmpty)
        #expect(plan.stdout.contains("shortest wall time"))
        let dryRun = try FlowBinary.run(["run", "--dry-run", "workflows/\(name)"], in: FlowBinary.packageRoot)
        #expect(dryRun.status == 0)
        #expect(dryRun.stdout == plan.stdout, "`run --dry-run` prints the plan")
        let json = try FlowBinary.run(["plan", "--format", "json", "workflows/\(name)"], in: FlowBinary.packageRoot)
        #expect(json.status == 0)
        #expect((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) != nil, "plan --format json is JSON")
        for format in ["mermaid", "dot"] {
            let graph = try FlowBinary.run(["graph", "--format", format, "workflows/\(name)"], in: FlowBinary.packageRoot)
            #expect(graph.status == 0, "\(graph.stderr)")
        }
    }

    @Test func schemaIsJSONWithADraft() throws {
        let result = try FlowBinary.run(["schema"], in: FlowBinary.packageRoot)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect((object?["$schema"] as? String)?.contains("json-schema.org") == true)
    }

    @Test(arguments: [[], ["run"], ["plan"], ["validate"], ["graph"], ["schema"]])
    func helpExitsZero(_ command: [String]) throws {
        let result = try FlowBinary.run(command + ["--help"], in: FlowBinary.packageRoot)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("USAGE:"), "\(result.stdout)")
        #expect(result.stderr.isEmpty)
        let short = try FlowBinary.run(command + ["-h"], in: FlowBinary.packageRoot)
        #expect(short.status == 0)
        #expect(short.stdout == result.stdout)
    }

    @Test func helpSubcommand() throws {
        let result = try FlowBinary.run(["help", "plan"], in: FlowBinary.packageRoot)
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: flow plan"))
    }

    @Test func version() throws {
        let result = try FlowBinary.run(["--version"], in: FlowBinary.packageRoot)
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: ".").count == 3, "\(result.stdout)")
    }

    @Test(arguments: [["plan"], ["run"], ["graph"], ["validate"], ["nonsense"], ["plan", "--bogus", "x.yaml"],
                      ["graph", "--format", "svg", "x.yaml"], ["validate", "--format", "xml", "x.yaml"]])
    func usageErrorsExitTwo(_ arguments: [String]) throws {
        let result = try FlowBinary.run(arguments, in: FlowBinary.packageRoot)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(!result.stderr.isEmpty)
    }

    @Test func colorIsOffWithoutATerminal() throws {
        let result = try FlowBinary.run(["validate", "Tests/FlowEndToEndTests/Fixtures/validate-errors-text/many-errors.yaml"],
                                        in: FlowBinary.packageRoot)
        #expect(result.status == 1)
        #expect(!result.stderr.contains("\u{1B}["))
    }

    /// Actions that each use the previous one four times: a 3 KB file whose plan would have
    /// 4^40 steps — the `use` equivalent of the "billion laughs".
    static let actionBomb: String = {
        var lines = ["actions:", "  a0:", "    steps:", "      - print: lol"]
        for level in 1...40 {
            lines += ["  a\(level):", "    steps:"] + Array(repeating: "      - use: a\(level - 1)", count: 4)
        }
        return (lines + ["steps:", "  - use: a40"]).joined(separator: "\n") + "\n"
    }()

    @Test func actionExpansionBombIsRefusedWithoutACrash() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flow-bomb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.actionBomb.write(to: directory.appendingPathComponent("bomb.yaml"), atomically: true, encoding: .utf8)
        func run(_ arguments: [String]) -> FlowBinary.Result {
            do {
                return try FlowBinary.run(arguments, in: directory, timeout: 30, memoryLimitKB: 600_000)
            } catch {
                return FlowBinary.Result(status: -1, stdout: "", stderr: "\(error)")
            }
        }
        let validate = run(["validate", "bomb.yaml"])
        let plan = run(["plan", "bomb.yaml"])
        #expect(validate.status == 1, "validate should report the expansion, got: \(validate.stdout)\(validate.stderr.prefix(300))")
        #expect(validate.stderr.contains("[expansion-limit]"))
        #expect(plan.status == 2, "plan should refuse cleanly, got \(plan.status): \(plan.stderr.prefix(300))")
        #expect(plan.status != 0, "it can never succeed")
    }
}
