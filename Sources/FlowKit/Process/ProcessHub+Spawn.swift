#if canImport(Glibc)
import Glibc
#endif
import CFlowSys

extension ProcessHub {
    /// Starts a child described by `spec`; returns once it runs (or throws, and then
    /// nothing runs and nothing leaks).
    ///
    /// `onOutput` receives captured output in chunks of up to 64 KiB, in order per stream,
    /// serially (never concurrently for the whole hub) on the hub's thread: it must be
    /// quick and must not block. The buffer is only valid during the call. Every call
    /// happens before `termination` returns.
    ///
    /// Throws `SpawnError.resourcesExhausted` when descriptors or processes run out; the
    /// caller should queue the step and retry once another child finished.
    public func spawn(
        _ spec: ChildSpec,
        onOutput: @escaping @Sendable (OutputChannel, UnsafeRawBufferPointer) -> Void = { _, _ in }
    ) throws(SpawnError) -> ChildProcess {
        guard let path = ExecutableLookup.resolve(spec.executable, searchPath: spec.environment["PATH"], directory: spec.directory) else {
            // A missing directory explains a failed lookup of a relative PATH entry better.
            if let dir = spec.directory, !ExecutableLookup.isDirectory(dir) { throw SpawnError.unusableDirectory(dir) }
            throw .executableNotFound(spec.executable)
        }
        let capture = spec.effectiveOutput == .capture
        var input: [UInt8] = []
        if case .bytes(let bytes) = spec.stdin { input = bytes }

        // Every descriptor below is O_CLOEXEC: the only ones a child gets are the 0/1/2
        // made by dup2 in the child, even when other threads spawn concurrently.
        var opened = OpenedDescriptors()
        let stdoutPipe: (read: Int32, write: Int32)?
        let stderrPipe: (read: Int32, write: Int32)?
        let stdinPipe: (read: Int32, write: Int32)?
        do throws(SpawnError) {
            stdoutPipe = capture ? try opened.pipe() : nil
            stderrPipe = capture ? try opened.pipe() : nil
            stdinPipe = input.isEmpty ? nil : try opened.pipe()
        } catch {
            opened.closeAll()
            throw error
        }

        spawnsUnderWay.add(1, ordering: .sequentiallyConsistent)
        defer { spawnsUnderWay.subtract(1, ordering: .sequentiallyConsistent) }
        // After the count: `killEverything` sets the flag, then waits for the count to fall.
        if killingEverything.load(ordering: .sequentiallyConsistent) {
            opened.closeAll()
            throw .stopping
        }

        // An interactive child takes the terminal's foreground in the child itself, after
        // its setpgid and before exec, so it never runs (and checks) in the background.
        let terminal = spec.isInteractive ? TerminalHandoff.prepare(ttyFD: ttyFD) : nil
        // Its Ctrl-Z stops it, not flow: the loop must hear of that (see `enableJobControl`).
        if terminal != nil { reportStops() }
        let liveChildren = registry.withLock { $0.count }
        var pid: pid_t = 0
        var pidfd: Int32 = -1
        let argv = CStringArray([spec.executable] + spec.arguments)
        let envp = CStringArray(environment: spec.environment)
        let stdinFD: Int32
        switch spec.stdin {
        case .null: stdinFD = devNullFD
        case .bytes: stdinFD = stdinPipe?.read ?? devNullFD
        case .terminal: stdinFD = -1
        }
        // The child lists its group with the guard itself, before its exec.
        let guardSlot = ProcessGuard.shared.reserve()
        let rc = path.withCString { path in
            withOptionalCString(spec.directory) { directory in
                var request = cflow_spawn_request(
                    path: path, argv: argv.pointers, envp: envp.pointers,
                    stdin_fd: stdinFD,
                    stdout_fd: stdoutPipe?.write ?? (spec.effectiveOutput == .inheritOnStderr ? 2 : -1),
                    stderr_fd: stderrPipe?.write ?? -1,
                    directory: directory,
                    tty_fd: terminal?.ttyFD ?? -1,
                    // The loop thread lives as long as flow; another caller's thread may
                    // not (a pool thread that ends would take its children with it).
                    die_with_parent: pthread_equal(pthread_self(), executor.loopThread.load(ordering: .relaxed)) != 0 ? processID : 0,
                    // With the child, so that running out of descriptors is found before
                    // the child starts, not after.
                    want_pidfd: usesPidfd ? 1 : 0,
                    // With many children running, flow holds three descriptors for each:
                    // copying them all into every child (and closing them at its exec)
                    // was a third of flow's CPU time with 1,000 concurrent steps.
                    share_table: liveChildren >= ProcessHub.sharedTableThreshold ? 1 : 0,
                    guard_slot: guardSlot)
                return cflow_spawn(&request, &pid, &pidfd)
            }
        }
        if rc != 0 {
            ProcessGuard.shared.release(guardSlot)
            opened.closeAll()
            // The child may have taken the terminal before its exec failed.
            terminal?.takeBack()
            if SpawnError.isExhaustion(rc) { throw .resourcesExhausted(errno: rc) }
            if rc == ENOENT || rc == ENOTDIR || rc == EACCES, let dir = spec.directory, !ExecutableLookup.isDirectory(dir) {
                throw SpawnError.unusableDirectory(dir)
            }
            if rc == EACCES, let dir = spec.directory, access(dir, X_OK) != 0 {
                // The child's chdir comes before its exec: the directory refused, not the
                // program (which the step said it could not run).
                throw .directoryDenied(dir)
            }
            if rc == ENOENT { throw .executableNotFound(spec.executable) }
            throw .failed(executable: spec.executable, errno: rc)
        }


        // The child has its copies of the write ends. Ours must go before EOF can come,
        // but not yet when few children run: as long as flow holds them, the child's exit
        // does not hang up the pipes, so the loop wakes once per exit (its pidfd) instead
        // of twice (the kernel closes a dying child's files before it notifies its exit,
        // and with the hub on the child's CPU, that first wake-up preempts the exit). They
        // are closed when the pidfd fires (`ChildIO.releaseWriteEnds`), before the drain.
        // With many children the loop takes both events in one batch anyway, and the
        // descriptors are better spent on more children (see `OpenFileLimit`).
        // The read ends stay blocking until the loop needs otherwise (see `readOutput`):
        // two fcntl calls fewer per step.
        var heldWriteEnds: (Int32, Int32) = (-1, -1)
        if let stdoutPipe, let stderrPipe {
            if usesPidfd && liveChildren < ProcessHub.writeEndHoldingLimit {
                heldWriteEnds = (stdoutPipe.write, stderrPipe.write)
            } else {
                opened.close(stdoutPipe.write)
                opened.close(stderrPipe.write)
            }
        }
        var inputWritten = 0
        if let stdinPipe {
            // Write what fits now, while we still hold the read end: that write cannot
            // fail with EPIPE/SIGPIPE even if the child already exited. The rest (beyond
            // the pipe buffer) goes through the loop, which handles EPIPE.
            _ = fcntl(stdinPipe.write, F_SETFL, O_NONBLOCK)
            inputWritten = ProcessHub.writeSome(stdinPipe.write, input, from: 0).offset
            opened.close(stdinPipe.read)
            if inputWritten >= input.count { opened.close(stdinPipe.write) }
        }

        let child = ChildProcess(pid: pid, heldTerminal: terminal != nil)
        let io = ChildIO(token: nextToken.add(1, ordering: .relaxed).oldValue, child: child, onOutput: onOutput)
        io.guardSlot = guardSlot
        io.stdoutFD = stdoutPipe?.read ?? -1
        io.stderrFD = stderrPipe?.read ?? -1
        io.heldWriteEnds = heldWriteEnds
        if let stdinPipe, inputWritten < input.count {
            io.stdinFD = stdinPipe.write
            io.pendingInput = input
            io.inputOffset = inputWritten
        }

        // Before the loop can see the child, so the loop cannot reap it (and take the
        // terminal back) before it was handed over.
        if let terminal {
            terminal.confirm(pid)
            io.terminal = terminal
        }

        io.pidfd = pidfd
        if usesPidfd && pidfd < 0 {  // a kernel without CLONE_PIDFD (before 5.2)
            io.pidfd = cflow_pidfd_open(pid)
            if io.pidfd < 0 {
                let code = errno
                abandon(io)
                throw SpawnError.isExhaustion(code) ? .resourcesExhausted(errno: code) : .failed(executable: spec.executable, errno: code)
            }
        }

        // Register with epoll first and publish last: the pidfd may fire at once, and
        // the loop ignores events of tokens it does not know yet (they are level-
        // triggered, so they come again). Pipes go in before the pidfd for the same reason.
        var ok = true
        if io.stdoutFD >= 0 { ok = ok && watch(io.stdoutFD, io.token, kind: HubEventLoop.kindStdout, events: EPOLLIN.rawValue) }
        if io.stderrFD >= 0 { ok = ok && watch(io.stderrFD, io.token, kind: HubEventLoop.kindStderr, events: EPOLLIN.rawValue) }
        if io.stdinFD >= 0 { ok = ok && watch(io.stdinFD, io.token, kind: HubEventLoop.kindStdin, events: EPOLLOUT.rawValue) }
        if io.pidfd >= 0 { ok = ok && watch(io.pidfd, io.token, kind: HubEventLoop.kindPidfd, events: EPOLLIN.rawValue) }
        if !ok {
            let code = errno
            abandon(io)
            throw .resourcesExhausted(errno: code)
        }
        registry.withLock { $0[io.token] = io }
        if !usesPidfd { wake() }  // its SIGCHLD may have come before it was registered
        return child
    }

    /// Running children from which a spawn shares the descriptor table (about 3 × this
    /// many descriptors): below it, copying the table is cheaper than five dup3 calls.
    static let sharedTableThreshold = 16

    /// Running children below which flow holds its own copies of a new child's output
    /// write ends until the child exits (see `spawn`): at most twice this many
    /// descriptors, inside `OpenFileLimit`'s reserve.
    static let writeEndHoldingLimit = 16

    /// Adds `fd` to the epoll set under `token`/`kind`.
    private func watch(_ fd: Int32, _ token: UInt64, kind: UInt64, events: UInt32) -> Bool {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token << 2 | kind
        return epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0
    }

    /// Undoes a spawn that cannot be watched: kills the group, reaps it synchronously
    /// (quick: SIGKILL cannot be caught) and closes everything.
    private func abandon(_ io: ChildIO) {
        let pid = io.child.pid
        io.terminal?.takeBack(from: pid)
        io.child.state.withLock { state in
            _ = Glibc.kill(-pid, SIGKILL)
            ProcessGuard.shared.release(io.guardSlot)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            state.reaped = true
        }
        for fd in [io.stdoutFD, io.stderrFD, io.stdinFD, io.pidfd] where fd >= 0 {
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
            close(fd)
        }
        io.releaseWriteEnds()
    }

    /// Non-blocking write of `bytes[from...]`. Returns the new offset and, when it
    /// stopped early, the errno that stopped it (EAGAIN: pipe full; EPIPE: reader gone).
    static func writeSome(_ fd: Int32, _ bytes: [UInt8], from offset: Int) -> (offset: Int, error: Int32) {
        var offset = offset
        var error: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    error = n < 0 ? errno : EIO
                    break
                }
            }
        }
        return (offset, error)
    }
}

/// Calls `body` with `string` as a C string, or with nil.
private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}

/// Descriptors created during one spawn, closed together if the spawn fails.
private struct OpenedDescriptors {
    private var fds: [Int32] = []

    /// A close-on-exec pipe; throws `resourcesExhausted` on EMFILE/ENFILE.
    mutating func pipe() throws(SpawnError) -> (read: Int32, write: Int32) {
        var ends: (Int32, Int32) = (-1, -1)
        let rc = withUnsafeMutablePointer(to: &ends) {
            $0.withMemoryRebound(to: Int32.self, capacity: 2) { cflow_pipe_cloexec($0) }
        }
        if rc != 0 { throw OpenedDescriptors.error(errno) }
        fds.append(ends.0)
        fds.append(ends.1)
        return (ends.0, ends.1)
    }

    /// Records `fd` (result of a call that returns -1 on failure).
    mutating func add(_ fd: Int32) throws(SpawnError) -> Int32 {
        if fd < 0 { throw OpenedDescriptors.error(errno) }
        fds.append(fd)
        return fd
    }

    mutating func close(_ fd: Int32) {
        if let i = fds.firstIndex(of: fd) { fds.remove(at: i) }
        _ = Glibc.close(fd)
    }

    func closeAll() {
        for fd in fds { _ = Glibc.close(fd) }
    }

    private static func error(_ code: Int32) -> SpawnError {
        SpawnError.isExhaustion(code) ? .resourcesExhausted(errno: code) : .failed(executable: "pipe", errno: code)
    }
}
