/// The output formats of `flow validate`.
public enum DiagnosticFormat: String, CaseIterable, Sendable {
    case text
    case json
    case github
}
