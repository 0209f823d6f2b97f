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
                                        span: SourceSpan(line: 1, column: 1, length: 0))
            return LoadedWorkflow(file: file, workflow: nil, diagnostics: [diagnostic])
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
