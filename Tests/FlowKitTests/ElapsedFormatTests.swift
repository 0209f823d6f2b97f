@testable import FlowKit
import Testing

/// How elapsed times are shown (summaries, `show`, `runs`).
@Suite struct ElapsedFormatTests {
    /// Tenths under a minute, minutes and seconds from there; a time that rounds up to a
    /// minute is shown as one (`59.97` said `60.0s`; noted by the code-review helper).
    @Test(arguments: [(0.0, "0.0s"), (0.04, "0.0s"), (1.24, "1.2s"), (59.94, "59.9s"), (59.97, "1m00s"), (60.0, "1m00s"),
                      (89.5, "1m30s"), (3599.6, "60m00s")])
    func elapsedTimes(seconds: Double, shown: String) {
        #expect(formatElapsed(seconds) == shown)
    }
}
