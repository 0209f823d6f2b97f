import FlowKit
import Testing

/// The progress line of a long task (`flow runs --prune`): nothing before its delay, then
/// redrawn in place at most every interval, erased at the end. A clock the test sets.
@Suite struct ProgressLineTests {
    final class Clock {
        var now = 100.0
    }

    @Test func nothingIsDrawnBeforeTheDelayThenTheLineIsRedrawnInPlace() {
        let clock = Clock()
        var written: [String] = []
        // Steps of a quarter second: sums a Double holds exactly.
        let line = ProgressLine(delay: 1, interval: 0.5, clock: { clock.now }) { written.append($0) }
        line.update("deleting runs… 0 of 500")
        clock.now += 0.75
        line.update("deleting runs… 256 of 500")
        #expect(written.isEmpty, "a task shorter than the delay leaves the terminal as it was")
        #expect(!line.isShown)
        line.clear()
        #expect(written.isEmpty, "nothing drawn, nothing to erase")
        clock.now += 0.25
        line.update("deleting runs… 300 of 500")
        clock.now += 0.25
        line.update("deleting runs… 400 of 500")
        clock.now += 0.25
        line.update("deleting runs… 500 of 500")
        line.update("compacting the journal…", now: true)
        #expect(line.isShown)
        line.clear()
        #expect(written == [
            "\rdeleting runs… 300 of 500\u{1B}[K",
            "\rdeleting runs… 500 of 500\u{1B}[K",
            "\rcompacting the journal…\u{1B}[K",
            "\r\u{1B}[K",
        ])
        #expect(!line.isShown)
    }

    /// Wider than the terminal, the line wrapped, `\r` went back to the start of its last
    /// row only, and each redraw left a row of the one before on screen.
    @Test func theLineIsCutToTheTerminalsWidthLessAColumn() {
        var written: [String] = []
        var columns: Int? = 20
        let line = ProgressLine(delay: 0, interval: 0, clock: { 0 }, width: { columns }) { written.append($0) }
        line.update("deleting runs… 12,800 of 49,900")
        columns = 40
        line.update("deleting runs… 12,800 of 49,900")
        columns = nil
        line.update("compacting the journal…")
        #expect(written == [
            "\rdeleting runs… 12,…\u{1B}[K",
            "\rdeleting runs… 12,800 of 49,900\u{1B}[K",
            "\rcompacting the journal…\u{1B}[K",
        ])
    }

    @Test func numbersAreGroupedByThousands() {
        #expect([0, 7, 999, 1000, 12_800, 49_900, 1_234_567, -4200].map(ProgressLine.grouped)
                == ["0", "7", "999", "1,000", "12,800", "49,900", "1,234,567", "-4,200"])
    }
}
