import FlowCommandLine
import FlowKit

/// `flow plan FILE [ACTION]`: the resolved execution tree.
struct PlanCommand: Command {
    static let spec = CommandSpec(
        name: "plan",
        abstract: "Print the execution tree of a workflow; run nothing.",
        discussion: """
            Shows every step with its kind, name, command or message (static expressions \
            resolved), and options. Steps that --tags, --skip-tags or --only leave out are \
            marked "○ … (skipped: not selected)". The last line counts the steps and gives \
            the shortest wall time their delays imply.

            Examples:
              flow plan build.yaml --tags lint,unit
              flow plan build.yaml --format json | jq .summary
            """,
        arguments: [
            ArgumentSpec("file", help: "The workflow file (- reads standard input).", completion: .file(extensions: ["yaml", "yml"])),
            ArgumentSpec("action", help: "Plan only this action of the workflow.", isOptional: true, completion: CompletionValues.actions),
        ],
        options: SelectionOptions.options + [
            .value("format", help: "Output format: text or json.", choices: Format.choices, defaultValue: "text"),
            .flag("no-color", help: "Disable color (also when NO_COLOR is set); FORCE_COLOR=1 colours without a terminal."),
        ]
    )

    /// The formats of a plan.
    enum Format: String, ArgumentValue, CaseIterable {
        case text
        case json
    }

    var file: String
    var action: String?
    var selection: SelectionOptions
    var format: Format
    var noColor: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        file = arguments.argument("file") ?? ""
        action = arguments.argument("action")
        selection = try SelectionOptions(arguments)
        format = try arguments.value("format", as: Format.self) ?? .text
        noColor = arguments.flag("no-color")
    }

    var onlyReads: Bool { true }

    func run() async throws {
        try Self.printPlan(file: file, action: action, selection: selection, json: format == .json, noColor: noColor)
    }

    static func printPlan(file: String, action: String?, selection: SelectionOptions, json: Bool, noColor: Bool) throws {
        let options = selection.planOptions(action: action)
        let workflow = try WorkflowInput.loadValid(file, options: options, noColor: noColor, running: false)
        let plan = try WorkflowInput.plan(workflow, options: options, forRunning: false)
        WorkflowInput.warnUnselectedReferences(plan, noColor: noColor)
        WorkflowInput.warnEmptySelection(plan, selection: selection)
        let printer = PlanPrinter(plan: plan)
        if json { Console.stdout(printer.json()) } else { printer.writeText { Console.stdout(bytes: $0) } }
        // Done: exit without tearing down the trees (freeing a 100,000-step plan node by
        // node costs more than building it).
        exitNow(0)
    }
}
