/// One problem found in a workflow, with the span it points at.
public struct Diagnostic: Sendable {
    /// A secondary location that explains the primary one (the first copy of a duplicate key…).
    public struct Note: Sendable {
        public var message: String
        public var span: SourceSpan

        public init(_ message: String, at span: SourceSpan) {
            self.message = message
            self.span = span
        }
    }

    public var severity: Severity
    public var code: DiagnosticCode
    public var message: String
    public var file: SourceFile
    public var span: SourceSpan
    /// Shown beside the caret, e.g. "did you mean `shell`?".
    public var help: String?
    public var notes: [Note]
    /// Where the problem was found, when that is text a `<<: *x` merge brought in and the
    /// diagnostic was moved to the `*x` (`span`); see `DiagnosticBag.merges`.
    public var mergedFrom: SourceSpan?

    public init(
        _ severity: Severity, _ code: DiagnosticCode, _ message: String,
        file: SourceFile, span: SourceSpan, help: String? = nil, notes: [Note] = []
    ) {
        self.severity = severity
        self.code = code
        self.message = message
        self.file = file
        self.span = span
        self.help = help
        self.notes = notes
    }

    /// Whether `other` says the same thing at the same place (notes included).
    func reportsTheSame(as other: Diagnostic) -> Bool {
        span == other.span && code == other.code && severity == other.severity && message == other.message
            && help == other.help && notes.map(\.message) == other.notes.map(\.message)
            && notes.map(\.span) == other.notes.map(\.span)
    }
}
