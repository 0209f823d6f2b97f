// flow-test-child: a small, fast-starting child process for flow's process and signal
// tests. Glibc only (no Foundation), so it starts in a few milliseconds.
//
// Usage: flow-test-child [OPTION | ACTION]...
//
// Options take effect first, wherever they appear (so `ready` is always printed after
// every handler is in place):
//   --trap SIG[:CODE]     on SIG print "got SIG<NAME>" on stdout, then exit CODE (default 0)
//   --ignore SIG          ignore SIG
// SIG is a name with or without "SIG" (TERM, SIGINT, HUP, QUIT, USR1, USR2, PIPE,
// ALRM, CONT, TSTP) or a number.
//
// Actions run left to right; after the last one the child exits 0:
//   ready                 print "ready" (written unbuffered, so it is seen at once)
//   --print-pid           print "pid PID"
//   --print TEXT          print TEXT on stdout
//   --stderr TEXT         print TEXT on stderr
//   --print-env NAME      print "NAME=VALUE", or "NAME unset"
//   --print-cwd           print the working directory
//   --print-foreground    print "foreground yes" if our group is the foreground group of
//                         the controlling terminal, "foreground no" otherwise
//   --print-signal-state  print "ignored: N N ..." and "blocked: N N ..." (signal numbers)
//   --print-bytes N       write exactly N bytes of 64-byte lines to stdout, fast
//   --echo-stdin          copy stdin to stdout until end-of-file
//   --spawn-grandchild    fork a grandchild (same process group, holding stdout/stderr)
//                         that sleeps 1000 s; print "grandchild PID"
//   --spawn-escapee SECS  fork a grandchild that leaves the group (setsid), holds
//                         stdout for SECS seconds, then exits; print "escapee PID"
//   --sleep SECONDS       sleep (fractions allowed); ignored signals do not end it
//   --kill-self SIG       die of SIG (disposition reset to default first)
//   --exit CODE           exit now with CODE
//
// Example: flow-test-child --trap TERM:3 ready --sleep 30
//
// flow-test-child --subreaper-exec PROGRAM [ARG]... becomes a child subreaper (orphans
// below it become its children, as under a container's pid 1) and execs PROGRAM.
//
// flow-test-child --job-shell TTY PROGRAM [ARG]... is a small job-control shell instead:
// it starts a session with TTY (a pseudo-terminal's slave) as its controlling terminal,
// runs PROGRAM in a process group of its own in the foreground, and reports on stdout
// "job stopped SIG", "job exit CODE" or "job signal SIG". While the job is stopped it
// waits for a signal: SIGUSR1 is `fg` (the job gets the terminal back, then SIGCONT),
// SIGUSR2 is `bg` (SIGCONT only); both are reported as "job continued".
#if canImport(Glibc)
import Glibc
#endif
import CTestSupport

// MARK: output without buffering (what is printed is in the pipe when the call returns)

func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
    }
}

func say(_ text: String, fd: Int32 = 1) {
    var line = text + "\n"
    line.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
}

func fail(_ message: String) -> Never {
    say("flow-test-child: \(message)", fd: 2)
    exit(64)
}

// MARK: signals

let signalNames: [(String, Int32)] = [
    ("HUP", SIGHUP), ("INT", SIGINT), ("QUIT", SIGQUIT), ("KILL", SIGKILL), ("USR1", SIGUSR1),
    ("USR2", SIGUSR2), ("PIPE", SIGPIPE), ("ALRM", SIGALRM), ("TERM", SIGTERM),
    ("CONT", SIGCONT), ("STOP", SIGSTOP), ("TSTP", SIGTSTP), ("CHLD", SIGCHLD),
]

func parseSignal(_ text: String) -> Int32 {
    if let n = Int32(text), n > 0, n < 65 { return n }
    let name = text.hasPrefix("SIG") ? String(text.dropFirst(3)) : text
    guard let entry = signalNames.first(where: { $0.0 == name.uppercased() }) else {
        fail("unknown signal \(text)")
    }
    return entry.1
}

func signalName(_ sig: Int32) -> String {
    signalNames.first(where: { $0.1 == sig }).map { "SIG" + $0.0 } ?? "SIG\(sig)"
}

/// Per-signal message and exit code for trapped signals, prepared before the handler is
/// installed: a handler may only call async-signal-safe functions (write, _exit), so it
/// must not build strings.
nonisolated(unsafe) var trapMessages = [UnsafeMutableRawBufferPointer?](repeating: nil, count: 65)
nonisolated(unsafe) var trapCodes = [Int32](repeating: 0, count: 65)

func trapHandler(_ sig: Int32) {
    if let message = trapMessages[Int(sig)] {
        writeAll(1, UnsafeRawBufferPointer(message))
    }
    _exit(trapCodes[Int(sig)])
}

func installTrap(_ sig: Int32, code: Int32) {
    let text = Array("got \(signalName(sig))\n".utf8)
    let message = UnsafeMutableRawBufferPointer.allocate(byteCount: text.count, alignment: 1)
    message.copyBytes(from: text)
    trapMessages[Int(sig)] = message
    trapCodes[Int(sig)] = code
    var action = sigaction()
    action.__sigaction_handler.sa_handler = trapHandler
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    if sigaction(sig, &action, nil) != 0 { fail("cannot trap \(signalName(sig))") }
}

func printSignalState() {
    var ignored: [String] = []
    var blocked: [String] = []
    var mask = sigset_t()
    sigprocmask(SIG_BLOCK, nil, &mask)
    for sig in Int32(1)..<65 {
        var old = sigaction()
        if sigaction(sig, nil, &old) == 0,
           let handler = old.__sigaction_handler.sa_handler,
           unsafeBitCast(handler, to: Int.self) == 1 {  // SIG_IGN is handler value 1
            ignored.append(String(sig))
        }
        if sigismember(&mask, sig) == 1 { blocked.append(String(sig)) }
    }
    say("ignored: " + ignored.joined(separator: " "))
    say("blocked: " + blocked.joined(separator: " "))
}

// MARK: actions

func sleepSeconds(_ seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR {
        request = remaining
    }
}

func printBytes(_ total: Int) {
    // One 64 KiB block of 64-byte lines, written again and again.
    let line = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_\n".utf8)
    var block = [UInt8]()
    block.reserveCapacity(65536)
    while block.count < 65536 { block.append(contentsOf: line) }
    var left = total
    block.withUnsafeBytes { buffer in
        while left > 0 {
            let n = min(left, buffer.count)
            writeAll(1, UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            left -= n
        }
    }
}

func echoStdin() {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
    defer { buffer.deallocate() }
    while true {
        let n = read(0, buffer.baseAddress, buffer.count)
        if n > 0 {
            writeAll(1, UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        } else if n < 0 && errno == EINTR {
            continue
        } else {
            return
        }
    }
}

func spawnGrandchild(escape seconds: Double?) {
    // The grandchild reports through this pipe once it is set up (an escapee only after
    // its setsid), so that what the tests observe never depends on scheduling.
    var sync: [Int32] = [-1, -1]
    if pipe(&sync) != 0 { fail("pipe failed") }
    let pid = fork()
    if pid < 0 { fail("fork failed") }
    if pid == 0 {
        close(sync[0])
        if seconds != nil { _ = setsid() }
        var byte: UInt8 = 1
        _ = write(sync[1], &byte, 1)
        close(sync[1])
        sleepSeconds(seconds ?? 1000)
        _exit(0)
    }
    close(sync[1])
    var byte: UInt8 = 0
    while read(sync[0], &byte, 1) < 0 && errno == EINTR {}
    close(sync[0])
    say(seconds == nil ? "grandchild \(pid)" : "escapee \(pid)")
}

// MARK: job-control shell

func jobShell(tty path: String, command: [String]) -> Never {
    // A session needs a caller that leads no group: fork once if this one does.
    if setsid() < 0 {
        let pid = fork()
        if pid < 0 { fail("fork: \(errno)") }
        if pid > 0 {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exit(status & 0x7f == 0 ? (status >> 8) & 0xff : 1)
        }
        if setsid() < 0 { fail("setsid: \(errno)") }
    }
    // The first terminal a session leader opens becomes its controlling terminal.
    let tty = open(path, O_RDWR)
    if tty < 0 { fail("open \(path): \(errno)") }
    // Like a shell: taking the terminal back from the background must not stop us.
    _ = signal(SIGTTOU, SIG_IGN)
    var commands = sigset_t()
    sigemptyset(&commands)
    sigaddset(&commands, SIGUSR1)
    sigaddset(&commands, SIGUSR2)
    sigprocmask(SIG_BLOCK, &commands, nil)
    let pid = fork()
    if pid < 0 { fail("fork: \(errno)") }
    if pid == 0 {
        sigprocmask(SIG_UNBLOCK, &commands, nil)
        _ = setpgid(0, 0)
        _ = tcsetpgrp(tty, getpid())
        _ = signal(SIGTTOU, SIG_DFL)
        for fd in Int32(0)...2 { _ = dup2(tty, fd) }
        if tty > 2 { close(tty) }
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) }
        argv.append(nil)
        execv(command[0], argv)
        _exit(127)
    }
    _ = setpgid(pid, pid)
    while true {
        var status: Int32 = 0
        let r = waitpid(pid, &status, WUNTRACED)
        if r < 0 {
            if errno == EINTR { continue }
            fail("waitpid: \(errno)")
        }
        if status & 0xff == 0x7f {
            say("job stopped \((status >> 8) & 0xff)")
            _ = tcsetpgrp(tty, getpgrp())
            var command: Int32 = 0
            while sigwait(&commands, &command) != 0 {}
            if command == SIGUSR1 { _ = tcsetpgrp(tty, pid) }
            _ = kill(-pid, SIGCONT)
            say("job continued")
        } else if status & 0x7f == 0 {
            say("job exit \((status >> 8) & 0xff)")
            exit(0)
        } else {
            say("job signal \(status & 0x7f)")
            exit(0)
        }
    }
}

// MARK: main

let args = Array(CommandLine.arguments.dropFirst())
if args.first == "--subreaper-exec" {
    guard args.count >= 2 else { fail("--subreaper-exec needs a program") }
    if ctest_become_subreaper() != 0 { fail("prctl: \(errno)") }
    var argv: [UnsafeMutablePointer<CChar>?] = args.dropFirst().map { strdup($0) }
    argv.append(nil)
    execv(args[1], argv)
    fail("exec \(args[1]): \(errno)")
}
if args.first == "--job-shell" {
    guard args.count >= 3 else { fail("--job-shell needs a terminal and a program") }
    jobShell(tty: args[1], command: Array(args.dropFirst(2)))
}

func value(after i: Int) -> String {
    guard i + 1 < args.count else { fail("\(args[i]) needs a value") }
    return args[i + 1]
}

// Pass 1: options (signal set-up), so that they precede every action.
var i = 0
while i < args.count {
    switch args[i] {
    case "--trap":
        let spec = value(after: i).split(separator: ":", maxSplits: 1).map(String.init)
        let code = spec.count > 1 ? (Int32(spec[1]) ?? 0) : 0
        installTrap(parseSignal(spec[0]), code: code)
        i += 2
    case "--ignore":
        _ = signal(parseSignal(value(after: i)), SIG_IGN)
        i += 2
    case "--print", "--stderr", "--print-env", "--print-bytes", "--spawn-escapee", "--sleep", "--kill-self", "--exit":
        i += 2
    default:
        i += 1
    }
}

// Pass 2: actions, left to right.
i = 0
while i < args.count {
    let arg = args[i]
    i += 1
    switch arg {
    case "--trap", "--ignore":
        i += 1
    case "ready", "--ready":
        say("ready")
    case "--print-pid":
        say("pid \(getpid())")
    case "--print":
        say(value(after: i - 1)); i += 1
    case "--stderr":
        say(value(after: i - 1), fd: 2); i += 1
    case "--print-env":
        let name = value(after: i - 1); i += 1
        if let v = getenv(name) { say("\(name)=\(String(cString: v))") } else { say("\(name) unset") }
    case "--print-cwd":
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        if getcwd(&buffer, buffer.count) != nil {
            say(String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    case "--print-signal-state":
        printSignalState()
    case "--print-foreground":
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        say(tty >= 0 && tcgetpgrp(tty) == getpgrp() ? "foreground yes" : "foreground no")
    case "--print-bytes":
        guard let n = Int(value(after: i - 1)), n >= 0 else { fail("bad byte count") }
        i += 1
        printBytes(n)
    case "--echo-stdin":
        echoStdin()
    case "--spawn-grandchild":
        spawnGrandchild(escape: nil)
    case "--spawn-escapee":
        guard let s = Double(value(after: i - 1)) else { fail("bad seconds") }
        i += 1
        spawnGrandchild(escape: s)
    case "--sleep":
        guard let s = Double(value(after: i - 1)) else { fail("bad seconds") }
        i += 1
        sleepSeconds(s)
    case "--kill-self":
        let sig = parseSignal(value(after: i - 1)); i += 1
        _ = signal(sig, SIG_DFL)
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, sig)
        sigprocmask(SIG_UNBLOCK, &mask, nil)
        raise(sig)
    case "--exit":
        exit(Int32(value(after: i - 1)) ?? 0)
    default:
        fail("unknown argument \(arg)")
    }
}
exit(0)
