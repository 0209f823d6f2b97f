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
                                        help: error.isMissing && !fromStdin ? missingFileHelp(path, bytes: pathBytes ?? Array(path.utf8)) : nil)
            return LoadedWorkflow(file: file, workflow: nil, diagnostics: [diagnostic])
        }
    }

    /// For a workflow file that is not there: the workflow file of its directory it is a
    /// typo of (`relase.yaml` → `release.yaml`), else the workflow files there (a name
    /// without `.yaml`, such as an ACTION given first: `flow run release`), as go-task
    /// and just say which files and recipes there are.
    ///
    /// `bytes` is the path as given: the directory is opened by them (a name that is not
    /// UTF-8 is shown as `caf\xFF`, which opens nothing). Only regular files (or links to
    /// them) count: a dangling link named like the file, or a directory `release.yaml`,
    /// is no file to run, and was offered as the one meant.
    static func missingFileHelp(_ path: String, bytes: [UInt8]) -> String? {
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
        let directoryBytes = slash.map { Array(bytes[...$0]) } ?? []
        let directory = ControlEscaping.displayName(ofPathBytes: directoryBytes)
        let name = ControlEscaping.displayName(ofPathBytes: slash.map { Array(bytes[($0 + 1)...]) } ?? bytes)
        let opened = PathBytes.withCString(directoryBytes.isEmpty ? Array(".".utf8) : directoryBytes) { $0.flatMap { opendir($0) } }
        guard let dir = opened else { return nil }
        defer { closedir(dir) }
        var workflows: [String] = []
        while let entry = readdir(dir) {
            let entryBytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard [".yaml", ".yml"].contains(where: { entryBytes.count > $0.utf8.count && entryBytes.suffix($0.utf8.count).elementsEqual($0.utf8) }) else { continue }
            guard Self.isRegularFile(entryBytes, type: entry.pointee.d_type, in: dir) else { continue }
            workflows.append(ControlEscaping.displayName(ofPathBytes: entryBytes))
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

    /// Whether the entry `name` of `dir` is a regular file, following a link (`d_type`
    /// says so for most file systems; others, and links, are asked with `fstatat`).
    private static func isRegularFile(_ name: [UInt8], type: UInt8, in dir: OpaquePointer) -> Bool {
        if type == UInt8(DT_REG) { return true }
        guard type == UInt8(DT_LNK) || type == UInt8(DT_UNKNOWN) else { return false }
        var info = stat()
        let found = PathBytes.withCString(name) { $0.map { fstatat(dirfd(dir), $0, &info, 0) == 0 } ?? false }
        return found && (info.st_mode & S_IFMT) == S_IFREG
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
