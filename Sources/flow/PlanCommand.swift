import ArgumentParser
import FlowKit

/// `flow plan FILE [ACTION]`: the resolved execution tree.
struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Print the execution tree of a workflow; run nothing.",
        discussion: """
            Shows every step with its kind, name, command or message (static expressions \
            resolved), and options. Steps that --tags, --skip-tags or --only leave out are \
            marked "○ … (skipped: not selected)". The last line counts the steps and gives \
            the shortest wall time their delays imply.
            """
    )

    /// The formats of a plan.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text
        case json
    }

    @Argument(help: "The workflow file.", completion: .file(extensions: ["yaml", "yml"]))
    var file: String

    @Argument(help: "Plan only this action of the workflow.")
    var action: String?

    @OptionGroup var selection: SelectionOptions

    @Option(help: "Output format: text or json.")
    var format: Format = .text

    @Flag(name: .customLong("no-color"), help: "Disable color (also when NO_COLOR is set).")
    var noColor = false

    func run() throws {
        try Self.printPlan(file: file, action: action, selection: selection, json: format == .json, noColor: noColor)
    }

    static func printPlan(file: String, action: String?, selection: SelectionOptions, json: Bool, noColor: Bool) throws {
        let workflow = try WorkflowInput.loadValid(file, noColor: noColor)
        let plan = try WorkflowInput.plan(workflow, options: selection.planOptions(action: action))
        let printer = PlanPrinter(plan: plan)
        Console.stdout(json ? printer.json() : printer.text())
        // Done: exit without tearing down the trees (freeing a 100,000-step plan node by
        // node costs more than building it).
        exitNow(0)
    }
}
