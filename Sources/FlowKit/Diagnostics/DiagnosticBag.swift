/// Collects diagnostics for one file; problems are gathered, never thrown.
public struct DiagnosticBag: Sendable {
    public let file: SourceFile
    public private(set) var diagnostics: [Diagnostic] = []

    public init(file: SourceFile) {
        self.file = file
    }

    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    /// The merged text of the mappings being checked, innermost last (the parser and the
    /// validator push a mapping's merges while they check it). A problem found in one is
    /// reported at the `*x` of its `<<: *x`, with a note at the text: like a duplicate step
    /// name met through an alias, it belongs to the place that merged the text, which may
    /// be fine where it is written. `sorted` drops it when the text's own check reported
    /// the same problem there.
    var merges: [MergedText] = []

    public mutating func error(
        _ code: DiagnosticCode, _ message: String, at span: SourceSpan,
        help: String? = nil, notes: [Diagnostic.Note] = []
    ) {
        append(Diagnostic(.error, code, message, file: file, span: span, help: help, notes: notes))
    }

    public mutating func warning(
        _ code: DiagnosticCode, _ message: String, at span: SourceSpan,
        help: String? = nil, notes: [Diagnostic.Note] = []
    ) {
        append(Diagnostic(.warning, code, message, file: file, span: span, help: help, notes: notes))
    }

    /// Adds `diagnostic`, moved to the merge that brought in its text, if any.
    mutating func append(_ diagnostic: Diagnostic) {
        var diagnostic = diagnostic
        if !merges.isEmpty, let merge = merges.last(where: { $0.contains(diagnostic.span) }) {
            diagnostic.mergedFrom = diagnostic.span
            diagnostic.notes.insert(.init("merged in from here", at: diagnostic.span), at: 0)
            diagnostic.span = merge.site
        }
        diagnostics.append(diagnostic)
    }

    public mutating func append(contentsOf other: [Diagnostic]) {
        diagnostics.append(contentsOf: other)
    }

    /// Diagnostics in source order (stable for equal positions), each distinct one once: a
    /// node used through several aliases is checked once per use, and would otherwise
    /// report the same problem at the same place as often.
    public var sorted: [Diagnostic] {
        // A problem of merged text that the text's own check found too is the text's: the
        // copies at the merges that brought it in would say it again.
        struct Found: Hashable {
            var span: SourceSpan
            var code: String
            var message: String
        }
        var kept = diagnostics
        if diagnostics.contains(where: { $0.mergedFrom != nil }) {
            let direct = Set(diagnostics.lazy.filter { $0.mergedFrom == nil }
                .map { Found(span: $0.span, code: $0.code.rawValue, message: $0.message) })
            kept.removeAll { d in d.mergedFrom.map { direct.contains(Found(span: $0, code: d.code.rawValue, message: d.message)) } ?? false }
        }
        let ordered = kept.enumerated().sorted { a, b in
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
