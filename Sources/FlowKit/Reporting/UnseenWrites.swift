/// Whether a step has written to flow's stdout or stderr behind flow's back since flow's
/// last line there: an `interactive` step has the terminal and writes to it directly, in
/// every output mode, so flow never sees whether it left a line unfinished (`printf 'no
/// newline'; exit 1`). The first line of flow's own on each stream after such a step asks
/// the destination where it stands (`LineStartProbe`) rather than glue itself to the
/// step's last line (`no newline✗ step exit 1`).
///
/// Only after the step ended: while it runs the terminal is its own, and the probe's row
/// of spaces would land in the middle of its screen.
struct UnseenWrites {
    private var stdout = false
    private var stderr = false
    /// Whether stdout and stderr lead to the same file (one terminal, `2>&1`): a line
    /// started on one is started on the other.
    private let shared = LineStartProbe.sameDestination(1, 2)

    /// Takes note of an interactive step leaving `running`: its process has ended, having
    /// written who knows what to both streams.
    mutating func observe(_ t: StepTransition) {
        guard t.step.isInteractive, t.from == .running else { return }
        stdout = true
        stderr = true
    }

    /// Before a line of flow's own through `writer` (on fd 1 or 2): after an interactive
    /// step, the bytes that put it at the start of a line. `other`, the writer of the other
    /// stream, is flushed first as well: a file's last byte must be the last one flow wrote.
    /// Checked for every output line in prefixed mode: only a flag, unless a step wrote.
    /// A `command` line (GitHub Actions') gets a `\n` where the probe cannot tell.
    @inline(__always)
    mutating func startLine(_ writer: OutputWriter, after other: OutputWriter? = nil, command: Bool = false) {
        if writer.fd == 1 ? stdout : stderr { separate(writer, after: other, command: command) }
    }

    private mutating func separate(_ writer: OutputWriter, after other: OutputWriter?, command: Bool) {
        other?.flush()
        writer.flush()
        LineStartProbe.separator(fd: writer.fd, unknown: command ? [0x0A] : []).withUnsafeBytes { writer.append($0) }
        if shared || writer.fd == 1 { stdout = false }
        if shared || writer.fd == 2 { stderr = false }
    }
}
