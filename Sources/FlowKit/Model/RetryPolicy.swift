/// How a failing step is retried: `retry: 3` or the long form.
public struct RetryPolicy: Sendable, Equatable {
    /// Retries after the first attempt.
    public var limit: Int
    public var delay: Duration = .zero
    public var backoff: Double = 1
    public var maxDelay: Duration?
    /// Exit codes that may be retried; nil means every non-zero code.
    public var exitCodes: [Int32]?

    public init(limit: Int) {
        self.limit = limit
    }

    /// The wait before attempt `attempt` (2 for the first retry), as the contract writes
    /// it: `min(delay × backoff^(n-1), max_delay)` for attempt n, attempts counted from 1
    /// as flow's notes count them ("retrying (attempt 2 of 4)"). So `delay` is the base the
    /// waits grow from: with `backoff: 2` the first retry waits twice `delay`; with the
    /// default `backoff: 1` every retry waits `delay`.
    public func delay(beforeAttempt attempt: Int) -> Duration {
        let n = max(attempt, 2)
        var seconds = delay.seconds
        for _ in 1..<n { seconds *= backoff }
        if let maxDelay { seconds = min(seconds, maxDelay.seconds) }
        // A large backoff overflows quickly (2^1000 is infinite): cap it where durations end.
        if seconds >= Duration.maximum.seconds { return .maximum }
        return .seconds(seconds)
    }

    /// Whether a failure with `exitCode` may be retried: one in `exit_codes`, by default any
    /// non-zero one. A failure without an exit code (a group whose step failed) may; one
    /// that exited 0 (a declared output not written, an unreadable `FLOW_OUTPUT`) may not,
    /// as the contract says: running the same command again would fail the same way.
    public func retries(exitCode: Int32?) -> Bool {
        guard let exitCode else { return true }
        guard let exitCodes else { return exitCode != 0 }
        return exitCodes.contains(exitCode)
    }
}
