/// Options from `defaults:`, applied to every leaf step (print, delay, shell) that does not set them.
public struct StepDefaults: Sendable {
    public var timeout: Located<Duration>?
    public var retry: Located<RetryPolicy>?
    public var continueOnError: Located<Bool>?
    public var dir: Template?
    public var shell: Located<ShellProgram>?

    public init() {}

    /// The keys `defaults:` accepts.
    public static let keys = ["timeout", "retry", "continue_on_error", "dir", "shell"]
}
