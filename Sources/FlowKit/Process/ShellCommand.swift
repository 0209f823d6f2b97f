/// Decides whether a step's command line needs a shell at all.
///
/// Like make and go-task, flow executes a command directly when it is nothing but plain
/// words: that skips a `/bin/sh` process per step (dash does not exec the last command of
/// `sh -c`, so it would otherwise cost two processes per step).
public enum ShellCommand {
    /// Words that are shell builtins or keywords (or behave differently as builtins), so
    /// running a same-named file would change the meaning. `true`/`false` are not here:
    /// `/bin/true` and `/bin/false` do the same thing.
    static let shellWords: Set<String> = [
        // keywords
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
        "do", "done", "in", "function", "time", "coproc",
        // special and regular builtins (POSIX, dash, bash)
        ".", ":", "source", "eval", "exec", "exit", "export", "readonly", "return", "set",
        "shift", "times", "trap", "unset", "break", "continue", "cd", "alias", "unalias",
        "bg", "fg", "jobs", "wait", "kill", "command", "type", "hash", "getopts", "read",
        "umask", "ulimit", "local", "declare", "typeset", "let", "builtin", "enable",
        "shopt", "history", "fc", "disown", "suspend", "logout", "mapfile", "readarray",
        "pushd", "popd", "dirs", "pwd", "echo", "printf", "test", "help", "compgen",
        "complete", "compopt", "caller", "bind",
    ]

    /// argv for `command` if it consists only of plain words, else nil (use a shell).
    ///
    /// Plain word characters: ASCII letters, digits and `-_./=:,+@%`; words are separated
    /// by spaces or tabs. Anything else (quotes, `$`, backslash, globs, redirections,
    /// `;&|()<>`, `~`, `#`, newlines, non-ASCII) needs a shell. The first word must not be
    /// a builtin or keyword, nor contain `=` (that would be a variable assignment).
    public static func directArgv(_ command: String) -> [String]? {
        var text = command
        // withUTF8: contiguous bytes, no per-Character work. Two passes: the first checks
        // every byte and counts the words, so a command that needs a shell costs no
        // allocation and a plain one a single array of the right size (growing it word by
        // word was a third of this function's time in `flow plan` of 100,000 steps).
        let words: [String]? = text.withUTF8 { bytes in
            var count = 0
            var inWord = false
            for b in bytes {
                if b == 0x20 || b == 0x09 {
                    inWord = false
                } else if isPlainWordByte(b) {
                    if !inWord { count += 1 }
                    inWord = true
                } else {
                    return nil
                }
            }
            guard count > 0 else { return nil }
            var words: [String] = []
            words.reserveCapacity(count)
            var start = -1
            for i in 0..<bytes.count {
                if bytes[i] == 0x20 || bytes[i] == 0x09 {
                    if start >= 0 {
                        words.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self))
                        start = -1
                    }
                } else if start < 0 {
                    start = i
                }
            }
            if start >= 0 {
                words.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self))
            }
            return words
        }
        guard let words, let first = words.first else { return nil }
        if first.containsByte(UInt8(ascii: "=")) || shellWords.contains(first) { return nil }
        return words
    }

    /// The full argv to run `command`: the plain words with the executable resolved through
    /// the child's PATH when `directArgv` allows it and the executable exists; otherwise
    /// `shell + [command]` (e.g. `["/bin/sh", "-c", command]`), so errors such as "not
    /// found" come from the shell with its usual status 127.
    ///
    /// A direct argv can still fail to spawn with `SpawnError.failed(_, ENOEXEC)` (a
    /// script without a `#!` line, which a shell would run itself): then run
    /// `shell + [command]` instead.
    public static func argv(
        for command: String,
        shell: [String] = ["/bin/sh", "-c"],
        environment: [String: String],
        directory: String? = nil
    ) -> [String] {
        if var words = directArgv(command),
           let path = ExecutableLookup.resolve(words[0], environment: environment, directory: directory) {
            words[0] = path
            return words
        }
        return shell + [command]
    }

    @inline(__always)
    private static func isPlainWordByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "/"),
             UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: ","), UInt8(ascii: "+"),
             UInt8(ascii: "@"), UInt8(ascii: "%"):
            return true
        default:
            return false
        }
    }
}
