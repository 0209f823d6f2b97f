import FlowCommandLine
import FlowKit

/// `flow graph FILE`: the tree as Mermaid or Graphviz.
struct GraphCommand: Command {
    static let spec = CommandSpec(
        name: "graph",
        abstract: "Print the execution tree as a Mermaid flowchart or a Graphviz digraph.",
        discussion: """
            The tree `flow plan` prints, drawn: a start node named after the workflow and an \
            `end` node; a sequential list chains its steps, a concurrent group forks to its \
            steps and joins after them, and groups and `use` steps are subgraphs (clusters \
            in dot). A step's if, timeout, retry and continue_on_error show on a second \
            line of its label. Steps that --tags, --skip-tags or --only leave out are \
            dashed; undo steps are not drawn.

            Examples:
              flow graph build.yaml > build.mmd                 # paste into a Markdown ```mermaid block
              flow graph build.yaml --format dot | dot -Tsvg > build.svg
            """,
        arguments: [
            ArgumentSpec("file", help: "The workflow file (- reads standard input).", completion: .file(extensions: ["yaml", "yml"])),
            ArgumentSpec("action", help: "Graph only this action of the workflow.", isOptional: true, completion: CompletionValues.actions),
        ],
        options: SelectionOptions.options + [
            .value("format", help: "Graph language: mermaid or dot.", choices: GraphExporter.Format.choices, defaultValue: "mermaid"),
            .flag("no-color", help: "Disable color (also when NO_COLOR is set); FORCE_COLOR=1 colours without a terminal."),
        ]
    )

    var file: String
    var action: String?
    var selection: SelectionOptions
    var format: GraphExporter.Format
    var noColor: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        file = arguments.argument("file") ?? ""
        action = arguments.argument("action")
        selection = try SelectionOptions(arguments)
        format = try arguments.value("format", as: GraphExporter.Format.self) ?? .mermaid
        noColor = arguments.flag("no-color")
    }

    var onlyReads: Bool { true }

    func run() async throws {
        let options = selection.planOptions(action: action)
        let workflow = try WorkflowInput.loadValid(file, options: options, noColor: noColor, running: false)
        let plan = try WorkflowInput.plan(workflow, options: options, forRunning: false)
        Console.stdout(GraphExporter.export(plan, format: format))
    }
}

extension GraphExporter.Format: ArgumentValue {}
