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
        do {
            let bytes = try FileReader.read(pathBytes: fromStdin ? Array("/dev/stdin".utf8) : pathBytes ?? Array(path.utf8), name: path)
            return load(SourceFile(path: path, bytes: bytes), overriddenVars: overriddenVars)
        } catch {
            let file = SourceFile(path: path, bytes: [])
            let diagnostic = Diagnostic(.error, .fileUnreadable, "cannot read `\(path)`: \(error.reason)", file: file,
                                        span: SourceSpan(line: 1, column: 1, length: 0),
                                        help: error.isMissing && !fromStdin ? missingFileHelp(path) : nil)
            return LoadedWorkflow(file: file, workflow: nil, diagnostics: [diagnostic])
        }
    }

    /// For a workflow file that is not there: the workflow file of its directory it is a
    /// typo of (`relase.yaml` → `release.yaml`), else the workflow files there (a name
    /// without `.yaml`, such as an ACTION given first: `flow run release`), as go-task
    /// and just say which files and recipes there are.
    static func missingFileHelp(_ path: String) -> String? {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let dir = opendir(directory.isEmpty ? "." : directory) else { return nil }
        defer { closedir(dir) }
        var workflows: [String] = []
        while let entry = readdir(dir) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if entryName.hasSuffix(".yaml") || entryName.hasSuffix(".yml") { workflows.append(entryName) }
            // A directory of thousands of files is not worth reading to the end for a hint.
            if workflows.count >= 1_000 { break }
        }
        workflows.sort()
        // `release` for `release.yaml`: the name without its extension.
        let near = workflows.first { $0 == name + ".yaml" || $0 == name + ".yml" } ?? Suggestion.closest(to: name, in: workflows)
        if let near { return "did you mean `\(directory)\(near)`?" }
        guard !workflows.isEmpty, !name.hasSuffix(".yaml"), !name.hasSuffix(".yml") else { return nil }
        return "the workflow files in \(directory.isEmpty ? "this directory" : "`\(directory)`") are "
            + Suggestion.list(workflows.map { directory + $0 }, limit: 5)
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
