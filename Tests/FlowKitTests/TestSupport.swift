@testable import FlowKit
import Testing

// Helpers shared by the parser and validator tests. They assert diagnostic CODES and
// POSITIONS, never wording: a message may be reworded without breaking a test.

/// One expected (or actual) diagnostic: where it starts and its code.
struct Spot: Hashable, Comparable, CustomStringConvertible {
    var line: Int
    var column: Int
    var code: String

    init(_ code: String, _ line: Int, _ column: Int) {
        self.code = code
        self.line = line
        self.column = column
    }

    init(_ code: DiagnosticCode, _ line: Int, _ column: Int) {
        self.init(code.rawValue, line, column)
    }

    init(_ diagnostic: Diagnostic) {
        self.init(diagnostic.code, diagnostic.span.start.line, diagnostic.span.start.column)
    }

    static func < (a: Spot, b: Spot) -> Bool {
        (a.line, a.column, a.code) < (b.line, b.column, b.code)
    }

    var description: String { "\(line):\(column) \(code)" }
}

/// Parses and validates an in-memory workflow.
func load(_ yaml: String, path: String = "t.yaml") -> LoadedWorkflow {
    LoadedWorkflow.load(SourceFile(path: path, text: yaml))
}

/// Removes `⟦code⟧` markers from `marked`; each marker says that a diagnostic with that
/// code must start at the character right after it. Several markers may share a spot.
func stripMarkers(_ marked: String) -> (text: String, spots: [Spot]) {
    var text = String.UnicodeScalarView()
    var spots: [Spot] = []
    var line = 1, column = 1
    let scalars = Array(marked.unicodeScalars)
    var i = 0
    while i < scalars.count {
        if scalars[i] == "⟦" {
            var code = String.UnicodeScalarView()
            var j = i + 1
            while j < scalars.count, scalars[j] != "⟧" { code.append(scalars[j]); j += 1 }
            spots.append(Spot(String(code), line, column))
            i = j + 1
            continue
        }
        text.append(scalars[i])
        if scalars[i] == "\n" { line += 1; column = 1 } else { column += 1 }
        i += 1
    }
    return (String(text), spots)
}

/// Renders diagnostics for failure messages, so a mismatch shows what flow said and where.
func rendered(_ diagnostics: [Diagnostic]) -> String {
    DiagnosticRenderer(useColor: false).text(diagnostics)
}

/// Loads the marked YAML and expects exactly the marked diagnostics (code and start position).
@discardableResult
func expectDiagnostics(_ marked: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> LoadedWorkflow {
    let (text, spots) = stripMarkers(marked)
    for spot in spots where DiagnosticCode(rawValue: spot.code) == nil {
        Issue.record("unknown diagnostic code in marker: \(spot.code)", sourceLocation: sourceLocation)
    }
    let loaded = load(text)
    compare(loaded.diagnostics, spots, sourceLocation: sourceLocation)
    return loaded
}

/// Loads `yaml` and expects exactly `expected` (code, line, column), in any order.
@discardableResult
func check(_ yaml: String, _ expected: [(DiagnosticCode, Int, Int)],
           sourceLocation: Testing.SourceLocation = #_sourceLocation) -> LoadedWorkflow {
    let loaded = load(yaml)
    compare(loaded.diagnostics, expected.map { Spot($0.0, $0.1, $0.2) }, sourceLocation: sourceLocation)
    return loaded
}

func compare(_ diagnostics: [Diagnostic], _ expected: [Spot], sourceLocation: Testing.SourceLocation) {
    let actual = diagnostics.map(Spot.init).sorted()
    let wanted = expected.sorted()
    if actual != wanted {
        let missing = wanted.filter { !actual.contains($0) }
        let extra = actual.filter { !wanted.contains($0) }
        Issue.record("""
            diagnostics differ
              missing: \(missing)
              unexpected: \(extra)
            flow said:
            \(rendered(diagnostics))
            """, sourceLocation: sourceLocation)
    }
}

/// Expects the workflow to load without any diagnostic and returns it.
func valid(_ yaml: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> Workflow {
    let loaded = load(yaml)
    #expect(loaded.diagnostics.isEmpty, "\(rendered(loaded.diagnostics))", sourceLocation: sourceLocation)
    return try #require(loaded.workflow, sourceLocation: sourceLocation)
}

/// The one diagnostic with `code` (fails the test when there is not exactly one).
func only(_ code: DiagnosticCode, in loaded: LoadedWorkflow,
          sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> Diagnostic {
    let matching = loaded.diagnostics.filter { $0.code == code }
    try #require(matching.count == 1, "expected one \(code.rawValue), got:\n\(rendered(loaded.diagnostics))",
                 sourceLocation: sourceLocation)
    return matching[0]
}

/// The start of a span as `line:column`, for compact assertions on notes.
func at(_ span: SourceSpan) -> String { "\(span.start.line):\(span.start.column)" }

/// Reads YAML text with the reader alone.
func readYAML(_ text: String, limits: YAMLReader.Limits = .init()) -> (YAMLDocument, [Diagnostic]) {
    readYAML(SourceFile(path: "t.yaml", text: text), limits: limits)
}

func readYAML(_ file: SourceFile, limits: YAMLReader.Limits = .init()) -> (YAMLDocument, [Diagnostic]) {
    var bag = DiagnosticBag(file: file)
    var reader = YAMLReader()
    reader.limits = limits
    let document = reader.read(file, into: &bag)
    return (document, bag.sorted)
}

extension YAMLDocument {
    /// The value node of `key` in mapping `id`.
    func value(_ key: String, in id: Int32) -> Int32? {
        pairs(id).first { self[$0.key].value == key }?.value
    }

    /// The keys of mapping `id`, in order.
    func keys(_ id: Int32) -> [String] {
        pairs(id).map { self[$0.key].value }
    }

    /// Follows a path of mapping keys and sequence indices from the root.
    func node(_ path: Any...) -> YAMLNode? {
        node(path: path)
    }

    func node(path: [Any]) -> YAMLNode? {
        guard var id = root else { return nil }
        for step in path {
            if let key = step as? String {
                guard self[id].kind == .mapping, let next = value(key, in: id) else { return nil }
                id = next
            } else if let index = step as? Int {
                let items = children(of: id)
                guard self[id].kind == .sequence, index < items.count else { return nil }
                id = items[items.startIndex + index]
            }
        }
        return self[id]
    }
}
