import ArgumentParser
import FlowKit

/// `flow graph FILE`: the tree as Mermaid or Graphviz.
struct GraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Print the execution tree as a Mermaid flowchart or a Graphviz digraph.",
        discussion: """
            Examples:
              flow graph build.yaml > build.mmd                 # paste into a Markdown ```mermaid block
              flow graph build.yaml --format dot | dot -Tsvg > build.svg
            """
    )

    @Argument(help: "The workflow file.", completion: .file(extensions: ["yaml", "yml"]))
    var file: String

    @Argument(help: "Graph only this action of the workflow.")
    var action: String?

    @OptionGroup var selection: SelectionOptions

    @Option(help: "Graph language: mermaid or dot.")
    var format: GraphExporter.Format = .mermaid

    @Flag(name: .customLong("no-color"), help: "Disable color (also when NO_COLOR is set).")
    var noColor = false

    func run() throws {
        let workflow = try WorkflowInput.loadValid(file, noColor: noColor)
        let plan = try WorkflowInput.plan(workflow, options: selection.planOptions(action: action))
        Console.stdout(GraphExporter.export(plan, format: format))
    }
}

extension GraphExporter.Format: ExpressibleByArgument {}
