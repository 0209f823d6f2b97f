import FlowCommandLine
import FlowKit

/// `flow validate FILE…`: every problem of every file, with locations.
struct ValidateCommand: Command {
    static let spec = CommandSpec(
        name: "validate",
        abstract: "Check workflow files and print every problem; run nothing.",
        discussion: """
            Each problem is printed as FILE:LINE:COLUMN: error|warning: message, with the \
            source line and a caret under it. Exit status: 0 when no errors (warnings are \
            allowed unless --strict), 1 when any file has errors (or stdout refused the \
            report: a full disk), 2 on usage errors (or when fewer than 16 processes are \
            left to this user: ulimit -u).

            A directory stands for the workflow files in it (*.yaml, *.yml; not its \
            subdirectories or hidden files); one that holds none is an error.

            In GitHub Actions, `--format github` turns problems into annotations:
              flow validate --format github workflows/
            """,
        arguments: [
            ArgumentSpec("files", help: "Workflow files or directories to check (- reads standard input).", repeats: true, completion: .file(extensions: ["yaml", "yml"])),
        ],
        options: [
            .value("format", help: "Output format: text, json or github.", choices: DiagnosticFormat.choices, defaultValue: "text"),
            .flag("strict", help: "Treat warnings as errors."),
            .flag("no-color", help: "Disable color (also when NO_COLOR is set); FORCE_COLOR=1 colours without a terminal."),
        ]
    )

    var files: [String]
    var format: DiagnosticFormat
    var strict: Bool
    var noColor: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        files = arguments.arguments("files")
        // Standard input can be read once: a second `-` found it empty ("the workflow is empty").
        if files.count(where: { $0 == "-" }) > 1 {
            throw arguments.error("`-` (standard input) may be given once")
        }
        format = try arguments.value("format", as: DiagnosticFormat.self) ?? .text
        strict = arguments.flag("strict")
        noColor = arguments.flag("no-color")
    }

    var onlyReads: Bool { true }

    func run() async throws {
        var all: [Diagnostic] = []
        var failed = 0
        var withProblems = 0
        let renderer = DiagnosticRenderer(useColor: Console.useColor(fd: 2, disabled: noColor))
        // Kept until exit: freeing big trees one node at a time is slower than parsing them.
        var kept: [LoadedWorkflow] = []
        defer { withExtendedLifetime(kept) {} }
        var fileCount = 0
        for argument in files {
            for var loaded in LoadedWorkflow.loadAll(path: argument, pathBytes: RawArguments.bytes(of: argument)) {
                fileCount += 1
                if strict {
                    loaded.diagnostics = loaded.diagnostics.map { d in
                        var d = d
                        d.severity = .error
                        return d
                    }
                }
                if loaded.errorCount > 0 { failed += 1 }
                if !loaded.diagnostics.isEmpty { withProblems += 1 }
                kept.append(loaded)
                all += loaded.diagnostics
                if format == .text {
                    Console.stderr(renderer.text(loaded.diagnostics))
                    if loaded.errorCount == 0 { Console.stdout("\(ControlEscaping.escaped(loaded.file.path)): valid\n") }
                }
            }
        }
        switch format {
        case .text:
            let errors = all.filter { $0.severity == .error }.count
            let warnings = all.count - errors
            if !all.isEmpty {
                var parts: [String] = []
                if errors > 0 { parts.append("\(errors) error\(errors == 1 ? "" : "s")") }
                if warnings > 0 { parts.append("\(warnings) warning\(warnings == 1 ? "" : "s")") }
                // `in 1 of 3 files` when some files had nothing to say: `1 error in 3 files`
                // read as if each of them had it.
                let files = withProblems < fileCount ? "\(withProblems) of \(fileCount)" : "\(fileCount)"
                Console.stderr(parts.joined(separator: ", ") + " in \(files) file\(fileCount == 1 ? "" : "s")\n")
            }
        case .json:
            Console.stdout(renderer.json(all))
        case .github:
            Console.stdout(renderer.github(all))
        }
        exitNow(failed > 0 ? 1 : 0)
    }
}

extension DiagnosticFormat: ArgumentValue {}
