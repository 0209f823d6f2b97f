/// How a run ended (or stands, inside `finally`): the value of `run.status`.
public enum RunStatus: String, Sendable, CaseIterable {
    case running
    case succeeded
    case failed
    case cancelled
}
