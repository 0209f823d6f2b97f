#if canImport(Glibc)
import Glibc
#endif

/// Puts a line of flow's own at the start of a line on a descriptor that steps wrote to
/// directly (`--output raw --no-journal`; an `interactive` step in every mode, see
/// `UnseenWrites`): flow did not see their bytes, so it cannot know whether they left a
/// line unfinished, and asks the destination, where it can be asked.
///
/// - A terminal (unless `TERM=dumb`): as many spaces as the terminal is wide, then `\r`
///   and "erase to the end of the line" (zsh's and fish's way to start a prompt on a line
///   of its own). From a line's start the spaces just fill it (the cursor waits at the
///   right margin: the deferred wrap of xterm and its kin) and `\r` goes back to that
///   start; from the middle of a line they wrap onto the next one, and `\r` goes to its
///   start. Either way the erase leaves a blank line, and the unfinished one is kept.
/// - A regular file: the byte before where flow's line will land (the file's end when it
///   is open to append, else the offset the steps shared with flow) says whether a line
///   ended there; read through `/proc/self/fd`, since the descriptor is write-only.
/// - Anything else (a pipe, a socket): it cannot be known, and nothing is added: a blank
///   line before every line of flow's would be wrong as often as it is right. Unless the
///   line is a GitHub Actions command (`unknown`: a `\n`), which is one only at a line's
///   start: a blank line in a CI log costs less than a `::group::` read as text.
enum LineStartProbe {
    /// The bytes to write to `fd` before a line of flow's own, so that it starts a line;
    /// `unknown` where that cannot be told. What flow itself wrote to `fd` must be flushed
    /// first.
    static func separator(fd: Int32, unknown: [UInt8] = []) -> [UInt8] {
        if isatty(fd) == 1 {
            var size = winsize()
            guard !TerminalType.isDumb, ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return unknown }
            return [UInt8](repeating: 0x20, count: Int(size.ws_col)) + Array("\r\u{1B}[K".utf8)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return unknown }
        let appending = fcntl(fd, F_GETFL) & O_APPEND != 0
        let end = appending ? off_t(info.st_size) : lseek(fd, 0, SEEK_CUR)
        guard end > 0 else { return [] }
        guard let last = lastByte(of: fd, before: end) else { return unknown }
        return last == 0x0A ? [] : [0x0A]
    }

    /// Whether `a` and `b` lead to the same file (`2>&1`, or both the same terminal): then
    /// what goes to one leaves the other mid-line too.
    static func sameDestination(_ a: Int32, _ b: Int32) -> Bool {
        var first = stat()
        var second = stat()
        guard fstat(a, &first) == 0, fstat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// The byte at `offset - 1` of the regular file `fd` is open on, or nil if it cannot be
    /// read (a file flow may write but not read).
    private static func lastByte(of fd: Int32, before offset: off_t) -> UInt8? {
        var byte: UInt8 = 0
        if pread(fd, &byte, 1, offset - 1) == 1 { return byte }
        let reader = open("/proc/self/fd/\(fd)", O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { return nil }
        defer { close(reader) }
        return pread(reader, &byte, 1, offset - 1) == 1 ? byte : nil
    }
}
