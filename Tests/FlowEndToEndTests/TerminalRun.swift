import CTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Whether a pseudo-terminal can be opened here (a container without devpts cannot).
let pseudoTerminalsAvailable: Bool = {
    var path = [CChar](repeating: 0, count: 128)
    let master = ctest_open_pty(&path, path.count)
    if master >= 0 { close(master) }
    return master >= 0
}()

/// `flow` run with its stdout and stderr on a pseudo-terminal of a given size, as on a
/// user's terminal (`--output tty` asks the terminal's size), everything it writes fed to
/// a `TerminalScreen` as it comes.
final class TerminalRun {
    let pid: pid_t
    private let master: Int32
    private let slave: Int32
    /// Everything flow wrote, as written.
    private(set) var bytes: [UInt8] = []
    /// Bytes read but not fed to the screen yet: an escape sequence or a UTF-8 character a
    /// read cut in two (fed in halves, `ESC[5` and `F` were each taken for something else).
    private var unfed: [UInt8] = []
    private(set) var screen: TerminalScreen
    private(set) var status: Int32?

    /// With `stdoutFile` (a path in the sandbox), flow's stdout goes to that file instead:
    /// `flow run … > file` typed at a terminal.
    init(_ box: RunSandbox, _ arguments: [String], rows: Int, columns: Int, env extra: [String: String] = [:],
         stdoutFile: String? = nil) throws {
        var path = [CChar](repeating: 0, count: 128)
        master = ctest_open_pty(&path, path.count)
        guard master >= 0 else { throw LiveFlow.SpawnFailure(message: "no pseudo-terminal: errno \(errno)") }
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        // Held open here too: the output stays readable after flow exits (a pty whose last
        // slave closed may fail reads before it is drained).
        slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        screen = TerminalScreen(rows: rows, columns: columns)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let stdoutFile {
            posix_spawn_file_actions_addopen(&actions, 1, box.path(stdoutFile), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, slave, 1)
        }
        posix_spawn_file_actions_adddup2(&actions, slave, 2)
        _ = Self.addchdir(&actions, box.root.path)
        var env = box.environment
        // A terminal that can redraw, as a user's is: without `TERM` flow takes it as dumb
        // (no live tree, no colour). `env: ["TERM": ""]` removes it.
        env["TERM"] = "xterm-256color"
        for (key, value) in extra { env[key] = value.isEmpty ? nil : value }
        let argv = ([RunSandbox.flowPath] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let code = posix_spawn(&child, RunSandbox.flowPath, &actions, nil, argv, envp)
        guard code == 0, slave >= 0 else {
            close(master)
            if slave >= 0 { close(slave) }
            throw LiveFlow.SpawnFailure(message: "posix_spawn: error \(code)")
        }
        pid = child
    }

    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let addchdir: AddChdir = unsafeBitCast(dlsym(nil, "posix_spawn_file_actions_addchdir_np")!, to: AddChdir.self)

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            _ = waitpid(pid, &raw, 0)
        }
        close(master)
        close(slave)
    }

    /// Reads what is there; false when nothing was.
    private func readAvailable() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
        guard n > 0 else { return false }
        bytes.append(contentsOf: buffer[0..<n])
        unfed.append(contentsOf: buffer[0..<n])
        let whole = Self.wholeLength(unfed)
        screen.feed(String(decoding: unfed[..<whole], as: UTF8.self))
        unfed.removeFirst(whole)
        return true
    }

    /// How much of `bytes` ends neither inside an escape sequence (`ESC`, `[` and its
    /// parameters, its final byte not read yet) nor inside a UTF-8 character.
    static func wholeLength(_ bytes: [UInt8]) -> Int {
        let end = bytes.count
        if let escape = bytes.lastIndex(of: 0x1B) {
            var j = escape + 1
            if j < end, bytes[j] == UInt8(ascii: "[") {
                j += 1
                while j < end, (0x20...0x3F).contains(bytes[j]) { j += 1 }
            }
            if j >= end { return escape }
        }
        // The lead byte of the last character, at most three continuation bytes back.
        var lead = end - 1
        while lead >= 0, lead > end - 4, bytes[lead] & 0xC0 == 0x80 { lead -= 1 }
        guard lead >= 0 else { return end }
        let byte = bytes[lead]
        let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
        return lead + length > end ? lead : end
    }

    /// Reads until `predicate` holds of the screen (its history and rows); false after
    /// `timeout` seconds or when flow exited first.
    func waitFor(timeout: Double = 20, _ predicate: (TerminalScreen) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !readAvailable() {
                if predicate(screen) { return true }
                if reap() { return predicate(screen) }
                usleep(5_000)
            }
        }
        return predicate(screen)
    }

    /// Reads until flow has written `marker` (looked for in the bytes as they come, not on
    /// the screen: a predicate of the screen is asked only when a read finds nothing, and a
    /// steady stream leaves no such moment), then stops reading: flow's writes block once
    /// the terminal's buffer is full. False after `timeout` seconds or when flow exited first.
    func readOutput(until marker: String, timeout: Double = 20) -> Bool {
        let needle = Array(marker.utf8)
        let deadline = Date().addingTimeInterval(timeout)
        var searched = 0
        while Date() < deadline {
            if readAvailable() {
                let from = max(0, searched - needle.count)
                if bytes[from...].firstRange(of: needle) != nil { return true }
                searched = bytes.count
            } else {
                if reap() { return false }
                usleep(5_000)
            }
        }
        return false
    }

    /// Whether flow has exited (then reaped, its status kept); the pty is not drained.
    private func reap() -> Bool {
        if status != nil { return true }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return false }
        status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        return true
    }

    /// Reads to flow's exit and the end of its output; nil (flow killed) after `timeout`.
    @discardableResult
    func finish(timeout: Double = 60) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while !reap() {
            if Date() >= deadline {
                kill(pid, SIGKILL)
                return nil
            }
            if !readAvailable() { usleep(5_000) }
        }
        while readAvailable() {}
        if !unfed.isEmpty { screen.feed(String(decoding: unfed, as: UTF8.self)) }
        unfed = []
        return status
    }

    /// Everything written, as text.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The frames of the live tree, in order: what was written between two erasures
    /// (`ESC[nF ESC[J`), each as its lines; lines printed above the tree are in them too.
    var frames: [[String]] {
        var frames: [[String]] = []
        var rest = Substring(text)
        while true {
            let erase = rest.firstRange(of: /\x1B\[[0-9]+F\x1B\[J/)
            let chunk = erase.map { rest[..<$0.lowerBound] } ?? rest
            // "\r\n" (the terminal's line end) is one Character.
            frames.append(chunk.split(omittingEmptySubsequences: false) { $0 == "\r\n" || $0 == "\n" }.map(String.init))
            guard let erase else { break }
            rest = rest[erase.upperBound...]
        }
        return frames
    }

    /// A description for failed expectations: the end of the screen with its history,
    /// and what the screen model objected to (each kind once).
    var report: String {
        let lines = screen.all
        return "--- screen (with history; \(lines.count) rows, the last 40)\n" + lines.suffix(40).joined(separator: "\n")
            + "\n--- \(screen.wraps.count) wraps, the first: \(screen.wraps.prefix(5))"
            + "\n--- foreign: \(Set(screen.foreign).sorted())"
    }
}
