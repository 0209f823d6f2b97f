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

    /// Diagnostics in source order (stable for equal positions), each distinct one once: a
    /// node used through several aliases is checked once per use, and would otherwise
    /// report the same problem at the same place as often.
    public var sorted: [Diagnostic] {
        let ordered = diagnostics.enumerated().sorted { a, b in
            if a.element.span.start != b.element.span.start { return a.element.span.start < b.element.span.start }
            return a.offset < b.offset
        }.map(\.element)
        var result: [Diagnostic] = []
        result.reserveCapacity(ordered.count)
        var sameStart = 0  // the first of `result` that starts where the last one does
        for d in ordered {
            if let last = result.last, last.span.start != d.span.start { sameStart = result.count }
            if result[sameStart...].contains(where: { $0.reportsTheSame(as: d) }) { continue }
            result.append(d)
        }
        return result
    }
}
