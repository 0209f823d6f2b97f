import FlowCommandLine
import FlowKit

/// The root command: `flow <subcommand>`.
enum FlowCommand {
    /// Every subcommand, in the order of `flow --help`.
    static var commands: [any Command.Type] {
        [
            RunCommand.self, PlanCommand.self, ValidateCommand.self, GraphCommand.self, SchemaCommand.self,
            RunsCommand.self, ShowCommand.self, LogsCommand.self, ResumeCommand.self, UndoCommand.self,
        ]
    }

    static let spec = CommandSpec(
        name: "flow",
        abstract: "Run YAML workflows of shell steps, in sequence and concurrently.",
        discussion: """
            A workflow is a YAML file of steps (print, delay, shell, use) nested in sequential \
            and concurrent groups. Check it with `flow validate`, see what would run with \
            `flow plan`, and run it with `flow run`.

            Examples:
              flow validate workflows/*.yaml
              flow plan workflows/ci-build.yaml --var version=2.0.0
              flow run workflows/ci-build.yaml --dry-run
              flow graph workflows/ci-build.yaml --format dot | dot -Tsvg > ci-build.svg
            """,
        subcommands: commands.map { $0.spec },
        version: FlowVersion.string
    )

    /// The subcommand `arguments` name, built from them.
    static func command(_ arguments: ParsedArguments) throws(UsageError) -> any Command {
        let name = arguments.command.name
        guard let type = commands.first(where: { $0.spec.name == name }) else {
            throw arguments.error("no command `\(name)`")
        }
        return try type.init(arguments)
    }
}
