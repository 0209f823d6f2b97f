import ArgumentParser
import FlowKit

/// `flow schema`: the JSON Schema of the workflow format, for editors.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the JSON Schema (draft 2020-12) of the workflow format.",
        discussion: """
            For completion and checks in editors through yaml-language-server:
              flow schema > flow.schema.json
            then put this first line in a workflow:
              # yaml-language-server: $schema=./flow.schema.json
            or map a file pattern to it in your editor's YAML settings (see docs/editor-setup.md).
            """
    )

    func run() throws {
        Console.stdout(WorkflowSchema.json())
    }
}
