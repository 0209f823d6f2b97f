/// Options from `defaults:`, applied to every shell step that does not set them (groups,
/// prints and delays are not affected: a timeout on a `print` means nothing).
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
