#if canImport(Glibc)
import Glibc
#endif
import FlowKit
import Synchronization

/// Ends the process at once with `status`, skipping deallocation of large trees.
///
/// A command whose result is what it prints (`plan`, `schema`, `validate --format json`,
/// `show`, help…) fails when stdout refused it for a reason other than a closed pipe:
/// `flow schema > schema.json` on a full disk used to leave a cut file and exit 0. A run
/// does not end here: it warns at its end and keeps its own status (`RunSession`).
func exitNow(_ status: Int32) -> Never {
    if let reason = LostOutput.shared.failure(fd: 1) {
        Console.stderr("error: cannot write to stdout (\(reason))\n")
        exit(status == 0 ? 1 : status)
    }
    exit(status)
}

/// Writing to the terminal, and whether to use color there.
enum Console {
    static func stdout(_ text: String) {
        write(text, to: 1)
    }

    static func stderr(_ text: String) {
        write(text, to: 2)
    }

    /// Bytes as they are (output recorded in the journal need not be UTF-8).
    static func stdout(bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0, to: 1) }
    }

    /// Bytes as they are, from a buffer the caller owns (`flow plan` hands its text on
    /// a piece at a time).
    static func stdout(bytes: UnsafeRawBufferPointer) {
        write(bytes, to: 1)
    }

    /// Writes all of `text` to `fd`, retrying short writes; a closed pipe ends quietly.
    private static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0), to: fd) }
    }

    /// Writes `bytes`; a refusal other than a closed pipe is kept for the end (`exitNow`).
    /// A closed pipe ends the command (`closedPipeEndsFlow`).
    private static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) {
        guard !writeAll(fd, bytes) else { return }
        let code = errno
        if code == EPIPE, closedPipeEndsFlow.load(ordering: .relaxed) { exit(closedPipeStatus) }
        LostOutput.shared.record(fd: fd, errno: code)
    }

    /// Whether a write that a closed pipe refuses (EPIPE) ends flow at once, quietly, with
    /// `closedPipeStatus`. SIGPIPE ends flow so where it has its default disposition; where
    /// whatever started flow ignores it (`trap '' PIPE`, some CI agents), the write fails
    /// instead, and `flow runs | head -1` read the rest of the history for no one, then
    /// exited 0. Cleared by a run (`RunSession`), which ignores SIGPIPE itself: its steps
    /// go on, and are recorded, whoever stopped reading.
    static let closedPipeEndsFlow = Atomic<Bool>(true)

    /// 128 + SIGPIPE: the status a shell reports for a program SIGPIPE ended, as it ends
    /// with the default disposition (seen with `set -o pipefail`). An exit, not the signal
    /// raised again: whatever ignored it chose not to see programs killed by it.
    static let closedPipeStatus: Int32 = 128 + SIGPIPE

    /// Whether flow runs as a step of a GitHub Actions job (`GITHUB_ACTIONS=true`): where
    /// `--output grouped` folds each step's output into a log group and annotates failures.
    static var inGitHubActions: Bool {
        getenv("GITHUB_ACTIONS").map { String(cString: $0) } == "true"
    }

    /// Color on a terminal (not a dumb one: `TerminalType.isDumb`), or wherever `FORCE_COLOR` asks for it; never
    /// with `NO_COLOR` set, `--no-color`, or `FORCE_COLOR` set to `0` or `false`.
    static func useColor(fd: Int32, disabled: Bool) -> Bool {
        if disabled { return false }
        if let value = getenv("NO_COLOR"), value.pointee != 0 { return false }
        if colorRefused { return false }
        if colorForced { return true }
        if TerminalType.isDumb { return false }
        return isatty(fd) == 1
    }

    /// `FORCE_COLOR` set to anything but empty, `0` or `false`: colour where no terminal is, for CI
    /// logs that show colours (GitHub Actions, GitLab), as Node's tools and pytest take it.
    /// The way to say "no colour" stays `NO_COLOR`/`--no-color`, which win over it.
    static var colorForced: Bool {
        guard let value = getenv("FORCE_COLOR") else { return false }
        let text = String(cString: value)
        return !text.isEmpty && !colorRefused
    }

    /// `FORCE_COLOR=0` or `FORCE_COLOR=false`: no colour, at a terminal too. Node and its
    /// `supports-color` read them so (colour level 0), and a CI agent that runs jobs on a
    /// pseudo-terminal sets them to keep escape codes out of its logs.
    static var colorRefused: Bool {
        guard let value = getenv("FORCE_COLOR") else { return false }
        let text = String(cString: value)
        return text == "0" || text == "false"
    }
}
