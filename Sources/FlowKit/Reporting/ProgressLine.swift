#if canImport(Glibc)
import Glibc
#endif

/// One line on a terminal saying how far a long task has got (`deleting runs… 12,800 of
/// 49,900`), redrawn in place, and erased when the task is done.
///
/// Nothing is drawn until the task has taken `delay` seconds: a quick one leaves the
/// terminal as it was (a line drawn and erased at once flickers), as git's progress waits
/// before it shows. After that, a redraw at most every `interval` seconds, so a task
/// that reports often does not spend its time writing. No colour, no cursor moves but
/// `\r` and erase-to-end-of-line (`ESC[K`). Whoever makes one decides whether there is a
/// terminal to draw on; `write` is where the line goes (stderr).
///
/// The line is cut to the terminal's width less a column (`DisplayWidth.fit`), as the live
/// tree's rows are: a wider one wraps, `\r` goes back to the start of its last row only, and
/// each redraw left a row of the one before on screen (`deleting runs… 12,8` at 20 columns).
public final class ProgressLine {
    private let write: (String) -> Void
    private let clock: () -> Double
    private let started: Double
    private let delay: Double
    private let interval: Double
    private let width: () -> Int?
    private var lastDrawn: Double?

    /// How long a task runs before its progress shows.
    public static let defaultDelay = 1.0

    /// `width` is the terminal's in columns, asked at each redraw (a window resized while the
    /// task runs is followed); nil when unknown, and the text is written whole.
    public init(delay: Double = ProgressLine.defaultDelay, interval: Double = 0.1,
                clock: @escaping () -> Double = Timestamp.monotonic,
                width: @escaping () -> Int? = ProgressLine.stderrWidth, write: @escaping (String) -> Void) {
        self.write = write
        self.width = width
        self.clock = clock
        self.delay = delay
        self.interval = interval
        started = clock()
    }

    /// Whether the line is on the terminal (it has been drawn and not erased).
    public var isShown: Bool { lastDrawn != nil }

    /// Shows `text` as the task's progress, if the task has run `delay` seconds and the last
    /// redraw is `interval` old; with `now`, however recent the last redraw (the text of a
    /// new stage of the task, such as a compaction, which reports nothing while it lasts).
    public func update(_ text: @autoclosure () -> String, now: Bool = false) {
        let time = clock()
        guard time - started >= delay else { return }
        if let last = lastDrawn, time - last < interval, !now { return }
        lastDrawn = time
        var line = text()
        // The last column stays free: a character there leaves the cursor waiting to wrap.
        if let columns = width() { line = DisplayWidth.fit(line, in: max(columns - 1, 1)).text }
        write("\r" + line + "\u{1B}[K")
    }

    /// The width of the terminal on stderr, in columns; nil when it says none.
    public static func stderrWidth() -> Int? {
        var size = winsize()
        guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Erases the line, if it was drawn: what the task prints next starts a clean line.
    public func clear() {
        guard lastDrawn != nil else { return }
        lastDrawn = nil
        write("\r\u{1B}[K")
    }

    /// `12800` as `12,800`: counts of thousands read at a glance.
    public static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var out = number < 0 ? "-" : ""
        for (i, digit) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
    }
}
