import ArgumentParser
import FlowKit

/// The root command: `flow <subcommand>`.
struct FlowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flow",
        abstract: "Run YAML workflows of shell steps, in sequence and concurrently.",
        discussion: """
            A workflow is a YAML file of steps (print, delay, shell, use) nested in sequential \
            and concurrent groups. Check it with `flow validate`, see what would run with \
            `flow plan`, and run it with `flow run`.

            Examples:
              flow validate workflows/*.yaml
              flow plan workflows/build.yaml --var target=prod
              flow run workflows/build.yaml --dry-run
              flow graph workflows/build.yaml --format dot | dot -Tsvg > build.svg
            """,
        version: FlowVersion.string,
        subcommands: [
            RunCommand.self, PlanCommand.self, ValidateCommand.self, GraphCommand.self, SchemaCommand.self,
            RunsCommand.self, ShowCommand.self, LogsCommand.self, ResumeCommand.self, UndoCommand.self,
        ]
    )
}
