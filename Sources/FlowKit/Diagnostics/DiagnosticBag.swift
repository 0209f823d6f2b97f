/// Collects diagnostics for one file; problems are gathered, never thrown.
public struct DiagnosticBag: Sendable {
    public let file: SourceFile
    public private(set) var diagnostics: [Diagnostic] = []

    public init(file: SourceFile) {
        self.file = file
    }

    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    public mutating func error(
        _ code: DiagnosticCode, _ message: String, at span: SourceSpan,
        help: String? = nil, notes: [Diagnostic.Note] = []
    ) {
        diagnostics.append(Diagnostic(.error, code, message, file: file, span: span, help: help, notes: notes))
    }

    public mutating func warning(
        _ code: DiagnosticCode, _ message: String, at span: SourceSpan,
        help: String? = nil, notes: [Diagnostic.Note] = []
    ) {
        diagnostics.append(Diagnostic(.warning, code, message, file: file, span: span, help: help, notes: notes))
    }

    public mutating func append(contentsOf other: [Diagnostic]) {
        diagnostics.append(contentsOf: other)
    }

    /// Diagnostics in source order (stable for equal positions).
    public var sorted: [Diagnostic] {
        diagnostics.enumerated().sorted { a, b in
            if a.element.span.start != b.element.span.start { return a.element.span.start < b.element.span.start }
            return a.offset < b.offset
        }.map(\.element)
    }
}
