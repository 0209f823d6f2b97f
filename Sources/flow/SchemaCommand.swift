import FlowCommandLine
import FlowKit

/// `flow schema`: the JSON Schema of the workflow format, for editors.
struct SchemaCommand: Command {
    static let spec = CommandSpec(
        name: "schema",
        abstract: "Print the JSON Schema (draft 2020-12) of the workflow format.",
        discussion: """
            For completion and checks in editors through yaml-language-server:
              flow schema > flow.schema.json
            then put this first line in a workflow:
              # yaml-language-server: $schema=./flow.schema.json
            or map a file pattern to it in your editor's YAML settings (see docs/editor-setup.md).
            """
    )

    init(_ arguments: ParsedArguments) {}

    func run() async throws {
        Console.stdout(WorkflowSchema.json())
    }
}
