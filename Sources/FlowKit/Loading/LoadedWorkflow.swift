#if canImport(Glibc)
import Glibc
#endif

/// The result of loading one file: the workflow (when it could be parsed) and every diagnostic.
public struct LoadedWorkflow: Sendable {
    public var file: SourceFile
    public var workflow: Workflow?
    public var diagnostics: [Diagnostic]
    /// The YAML node tree, kept with the result: commands that exit right after a check
    /// never pay for freeing it node by node.
    var document: YAMLDocument?

    /// Frees the YAML node tree (planning does not need it; its memory does count).
    public mutating func dropSyntaxTree() {
        document = nil
    }

    init(file: SourceFile, workflow: Workflow?, diagnostics: [Diagnostic], document: YAMLDocument? = nil) {
        self.file = file
        self.workflow = workflow
        self.diagnostics = diagnostics
        self.document = document
    }

    /// Whether the workflow may be planned and run.
    public var isValid: Bool { workflow != nil && !diagnostics.contains { $0.severity == .error } }

    public var errorCount: Int { diagnostics.filter { $0.severity == .error }.count }
    public var warningCount: Int { diagnostics.filter { $0.severity == .warning }.count }

    /// Reads, parses and validates the file at `path`. An unreadable file is a `file-unreadable`
    /// diagnostic, not a thrown error, so `flow validate a b c` reports every file.
    ///
    /// `pathBytes`, when given, is the file's name as bytes (one that is not valid UTF-8);
    /// `path` is then only how messages show it. `overriddenVars` are the variables the
    /// command line sets (`--var`): validation does not judge by their defaults (see
    /// `Validator.statics`); the planner checks the values given.
    ///
    /// `-` is standard input (as for kubectl, jq and most tools), shown as `<stdin>`; a file
    /// called `-` is `./-`.
    public static func load(path: String, pathBytes: [UInt8]? = nil, overriddenVars: Set<String> = []) -> LoadedWorkflow {
        let fromStdin = path == "-" && (pathBytes == nil || pathBytes == [0x2D])
        let path = fromStdin ? stdinName : path
        do throws(FileReader.Failure) {
            if fromStdin, StandardDescriptors.stdinWasClosed {
                throw FileReader.Failure(path: path, reason: "standard input is closed")
            }
            let bytes = try FileReader.read(pathBytes: fromStdin ? Array("/dev/stdin".utf8) : pathBytes ?? Array(path.utf8), name: path)
            return load(SourceFile(path: path, bytes: bytes, isStandardInput: fromStdin), overriddenVars: overriddenVars)
        } catch {
            let file = SourceFile(path: path, bytes: [], isStandardInput: fromStdin)
            let bytes = pathBytes ?? Array(path.utf8)
            let help = fromStdin ? stdinHelp : error.isMissing ? missingFileHelp(path, bytes: bytes) : error.isDirectory ? directoryHelp(bytes) : nil
            let diagnostic = Diagnostic(.error, .fileUnreadable, "cannot read `\(path)`: \(error.reason)", file: file,
                                        span: SourceSpan(line: 1, column: 1, length: 0), help: help)
            return LoadedWorkflow(file: file, workflow: nil, diagnostics: [diagnostic])
        }
    }

    /// `load(path:)` for a file; for a directory, every workflow file in it (`*.yaml`,
    /// `*.yml`, in name order; not its subdirectories), as `ansible-lint` and `actionlint`
    /// take a directory. A directory that holds none, or cannot be read, is one
    /// `file-unreadable` error naming it: a CI check of an empty or misspelt directory
    /// must not pass for having found nothing wrong.
    public static func loadAll(path: String, pathBytes: [UInt8]? = nil) -> [LoadedWorkflow] {
        let bytes = pathBytes ?? Array(path.utf8)
        guard path != "-" || bytes != [0x2D], WorkflowDirectory.isDirectory(bytes) else {
            return [load(path: path, pathBytes: pathBytes)]
        }
        func unreadable(_ reason: String) -> [LoadedWorkflow] {
            let file = SourceFile(path: path, bytes: [])
            return [LoadedWorkflow(file: file, workflow: nil, diagnostics: [
                Diagnostic(.error, .fileUnreadable, "cannot read `\(path)`: \(reason)", file: file,
                           span: SourceSpan(line: 1, column: 1, length: 0)),
            ])]
        }
        let paths: [(path: String, bytes: [UInt8])]
        do { paths = try WorkflowDirectory.workflowPaths(in: bytes) } catch { return unreadable(error.reason) }
        guard !paths.isEmpty else { return unreadable("the directory holds no workflow files (`*.yaml`, `*.yml`)") }
        return paths.map { load(path: $0.path, pathBytes: $0.bytes) }
    }

    /// Help for `-` when flow was started with stdin closed (`flow run - <&-`, or a CI step
    /// that gives it no input): how to hand it the workflow.
    static var stdinHelp: String? {
        StandardDescriptors.stdinWasClosed ? "`-` reads the workflow from stdin: `flow run - < FILE`, or name the file" : nil
    }

    /// For a workflow file that is not there: the workflow file of its directory it is a
    /// typo of (`relase.yaml` → `release.yaml`), else the workflow files there (a name
    /// without `.yaml`, such as an ACTION given first: `flow run release`), as go-task
    /// and just say which files and recipes there are.
    ///
    /// `bytes` is the path as given: the directory is opened by them (a name that is not
    /// UTF-8 is shown as `caf\xFF`, which opens nothing). Only regular files (or links to
    /// them) count (`WorkflowDirectory`): a dangling link named like the file, or a
    /// directory `release.yaml`, is no file to run, and was offered as the one meant.
    static func missingFileHelp(_ path: String, bytes: [UInt8]) -> String? {
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
        let directoryBytes = slash.map { Array(bytes[...$0]) } ?? []
        let directory = ControlEscaping.displayName(ofPathBytes: directoryBytes)
        let name = ControlEscaping.displayName(ofPathBytes: slash.map { Array(bytes[($0 + 1)...]) } ?? bytes)
        // A directory of thousands of files is not worth reading to the end for a hint.
        guard let names = WorkflowDirectory.workflowNames(in: directoryBytes, limit: 1_000) else { return nil }
        let workflows = names.map(ControlEscaping.displayName(ofPathBytes:))
        // `release` for `release.yaml`: the name without its extension.
        let near = workflows.first { $0 == name + ".yaml" || $0 == name + ".yml" } ?? Suggestion.closest(to: name, in: workflows)
        if let near { return "did you mean `\(directory)\(near)`?" }
        guard !name.hasSuffix(".yaml"), !name.hasSuffix(".yml"), let listing = WorkflowDirectory.listing(in: directoryBytes) else { return nil }
        return "the workflow files in \(directory.isEmpty ? "this directory" : "`\(directory)`") are \(listing)"
    }

    /// For a directory given where one workflow file is wanted (`flow run workflows`): the
    /// workflow files in it.
    static func directoryHelp(_ bytes: [UInt8]) -> String? {
        WorkflowDirectory.listing(in: bytes).map {
            "a workflow file is wanted; the ones in `\(ControlEscaping.displayName(ofPathBytes: bytes))` are \($0)"
        }
    }

    /// How a workflow read from standard input (`-`) is named in messages.
    public static let stdinName = "<stdin>"

    /// Parses and validates an in-memory file.
    public static func load(_ file: SourceFile, overriddenVars: Set<String> = []) -> LoadedWorkflow {
        var (workflow, bag, document) = WorkflowParser.parseKeepingDocument(file)
        if let workflow { Validator.validate(workflow, into: &bag, overriddenVars: overriddenVars) }
        return LoadedWorkflow(file: file, workflow: workflow, diagnostics: bag.sorted, document: document)
    }
}
