// Micro benchmarks of the hot paths: parsing (YAML → model), validation, planning, plan
// printing, event dispatch and output line splitting. A regression shows up as a number:
//   swift run -c release --package-path bench/micro flow-micro [--filter REGEX]
import Benchmark
import FlowKit

/// Keeps a result alive so the optimizer cannot drop the work that made it.
@inline(never) func consume<T>(_ value: T) { withExtendedLifetime(value) {} }

/// A 10,000-step workflow: groups of ten shell, print and delay steps, some named, some
/// using expressions.
let workflowText: String = {
    var lines = ["version: 1", "name: micro", "vars:", "  target: world", "steps:"]
    for group in 0..<1_000 {
        lines.append(group % 2 == 0 ? "  - sequential:" : "  - concurrent:")
        for step in 0..<10 {
            switch step % 3 {
            case 0: lines.append("      - shell: echo \"build \(group)-\(step) ${{ vars.target }}\"")
                lines.append("        name: s\(group)_\(step)")
            case 1: lines.append("      - print: \"step \(group)-\(step)\"")
            default: lines.append("      - delay: 10ms")
            }
        }
    }
    return lines.joined(separator: "\n") + "\n"
}()

let file = SourceFile(path: "micro.yaml", text: workflowText)
let loaded = LoadedWorkflow.load(file)
precondition(loaded.isValid, "the benchmark workflow must be valid")
let plan = try! Planner.plan(loaded.workflow!)

benchmark("parse+validate 10k steps") {
    consume(LoadedWorkflow.load(file))
}

benchmark("plan 10k steps") {
    consume(try! Planner.plan(loaded.workflow!))
}

benchmark("plan text 10k steps") {
    consume(PlanPrinter(plan: plan).text())
}

/// 2,000 unknown references on one line (a generated file): 2,000 diagnostics to render,
/// each with an excerpt of that 50 KB line. Rendering decoded the line once per diagnostic
/// (quadratic) until 2026-11-26.
let longLine = SourceFile(path: "long.yaml", text: "steps:\n  - shell: echo \""
    + (0..<2_000).map { "${{ vars.nope\($0) }}" }.joined(separator: " ") + "\"\n")
let longLineDiagnostics = LoadedWorkflow.load(longLine).diagnostics
precondition(longLineDiagnostics.count >= 2_000, "the long line must give a diagnostic per reference")

benchmark("render 2k diagnostics on one line") {
    consume(DiagnosticRenderer().text(longLineDiagnostics))
}

benchmark("expression parse+evaluate") {
    struct Context: ExpressionEvaluator.Context {
        func value(of path: [String]) -> ExpressionValue? { .string("v") }
        func status(_ function: String) -> Bool? { true }
    }
    for _ in 0..<1_000 {
        if case .success(let e) = ExpressionParser.parse("vars.a == 'v' && (steps.b.outputs.c != '' || !failure())",
                                                         locate: { _ in SourceLocation(line: 1, column: 1) }) {
            consume(ExpressionEvaluator.evaluate(e, in: Context()))
        }
    }
}

/// An observer that does nothing: measures the bus itself.
final class NullObserver: RunObserver, @unchecked Sendable {
    var lines = 0
    func handle(_ event: RunEvent) {}
    func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) { lines += 1 }
}

let chunk: [UInt8] = Array(String(repeating: "a line of output from a step, about sixty bytes long......\n", count: 1_000).utf8)
let step = StepRef(node: plan.root.children[0])

benchmark("event dispatch 10k notes") {
    let bus = EventBus(observers: [NullObserver()])
    for _ in 0..<10_000 { bus.emit(.note(step, "n")) }
}

benchmark("bus output 60 KB chunk into lines") {
    let bus = EventBus(observers: [NullObserver()])
    chunk.withUnsafeBytes { bus.output(step, .stdout, chunk: $0) }
    bus.flush(step)
}

benchmark("line splitter 60 KB") {
    var splitter = LineSplitter()
    var count = 0
    chunk.withUnsafeBytes { splitter.feed($0) { _ in count += 1 } }
    consume(count)
}

Benchmark.main()
