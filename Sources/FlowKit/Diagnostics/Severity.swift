/// How serious a diagnostic is; `--strict` turns warnings into errors.
public enum Severity: String, Sendable, Comparable {
    case warning
    case error

    public static func < (a: Severity, b: Severity) -> Bool { a == .warning && b == .error }
}
