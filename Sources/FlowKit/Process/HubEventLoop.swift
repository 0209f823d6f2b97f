#if canImport(Glibc)
import Glibc
#endif
import CFlowSys

/// The body of `ProcessHub`'s single thread: epoll over every child's pipes and pidfd,
/// reaping, group sweeps, stdin feeding and bounded output drains.
///
/// Everything here runs on that one thread, which is what makes `ChildIO` safe to use
/// without locks. Events are level-triggered, so doing a bounded amount of work per
/// event (at most 1 MiB read per pipe) keeps one noisy child from starving the others.
final class HubEventLoop {
    /// epoll data layout: `token << 2 | kind`; the wake eventfd uses `wakeToken`.
    static let kindPidfd: UInt64 = 0
    static let kindStdout: UInt64 = 1
    static let kindStderr: UInt64 = 2
    static let kindStdin: UInt64 = 3
    static let wakeToken = UInt64.max

    private let hub: ProcessHub
    private let buffer: UnsafeMutableRawPointer
    private let events: UnsafeMutablePointer<epoll_event>
    private let eventCapacity: Int32 = 256
    /// Children reaped with a pipe still open, oldest first. Every deadline is "reap time
    /// + the same drain", so appending keeps the queue sorted.
    private var drains: [(deadline: UInt64, io: ChildIO)] = []
    private var drainHead = 0
    /// Leaders that exited while their group had a grace period running: kept unreaped (so
    /// the group id cannot be recycled) until the pipes close or the grace ends.
    private var deferred: [(deadline: UInt64, io: ChildIO)] = []

    private init(hub: ProcessHub) {
        self.hub = hub
        buffer = .allocate(byteCount: ProcessHub.readChunk, alignment: 16)
        events = .allocate(capacity: Int(eventCapacity))
    }

    /// Starts the detached thread. It keeps the hub alive for the rest of the process.
    static func start(hub: ProcessHub) {
        let loop = HubEventLoop(hub: hub)
        // The loop's own (retained) reference keeps it alive: it never returns.
        nonisolated(unsafe) let unsafeLoop = loop
        guard BackgroundThread.start({ unsafeLoop.run() }) else {
            // No thread to be had (`ulimit -u` filled since `ProcessLimit` was checked at
            // start, or `ulimit -v` too low for its stack): said in words before any step starts, not a failed precondition's
            // backtrace (a crash, exit 132).
            // (pthread_create says EAGAIN for a stack `ulimit -v` has no room for, too.)
            let text = "error: flow cannot start the thread of its process event loop: the limit on this user's "
                + "processes and threads (ulimit -u) or on memory (ulimit -v) is reached; nothing was run\n"
            _ = text.withCString { Glibc.write(2, $0, strlen($0)) }
            _exit(2)
        }
    }

    private func run() -> Never {
        // SIGPIPE blocked: a stdin write to an exited child must fail with EPIPE, not kill
        // flow (the pending signal is then consumed). SIGTTOU blocked: taking the terminal
        // back must not stop flow.
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGPIPE)
        sigaddset(&mask, SIGTTOU)
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        // SIGCHLD unblocked, whatever the mask this thread inherited (libdispatch's threads
        // block nearly everything). The children are started from this thread, so it is
        // their parent: with SIGCHLD at its default (ignore) and not blocked here, the
        // kernel drops the signal when a child exits. Blocked, it would be queued and
        // delivered to the main thread, which libdispatch parks in sigsuspend, and it
        // would wake libdispatch's epoll through its signalfd: two wake-ups per child
        // (measured: ~20% more CPU beside each sequential step of 1,000). In the fallback
        // mode, with the notifier installed, it is delivered here, to the loop it wakes.
        sigemptyset(&mask)
        sigaddset(&mask, SIGCHLD)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        cflow_set_thread_name("flow-proc")

        hub.executor.loopThread.store(pthread_self(), ordering: .relaxed)

        while true {
            var timeout = hub.executor.hasPendingJobs ? 0 : nextTimeout()
            if timeout != 0, hub.runIdleWork() {
                timeout = hub.executor.hasPendingJobs ? 0 : nextTimeout()
            }
            let count = epoll_wait(hub.epollFD, events, eventCapacity, timeout)
            if count > 0 {
                // Pipes first: their data comes before the exit. (Where flow holds no
                // write ends, a child's exit closes the pipes before its pidfd fires, so
                // their EOF is usually in the same batch, and the reaping finds them closed.)
                for i in 0..<Int(count) where events[i].data.u64 & 3 != HubEventLoop.kindPidfd {
                    handle(data: events[i].data.u64)
                }
                for i in 0..<Int(count) where events[i].data.u64 & 3 == HubEventLoop.kindPidfd {
                    handle(data: events[i].data.u64)
                }
            }
            expireDrains()
            checkDeferred()
            hub.executor.runPendingJobs()
        }
    }

    private func handle(data: UInt64) {
        if data == HubEventLoop.wakeToken {
            var value: UInt64 = 0
            _ = read(hub.wakeFD, &value, 8)
            if cflow_take_suspend_request() != 0 || stoppedAtTheTerminal() { suspend() }
            if !hub.usesPidfd { scanForExits() }
            if hub.reapsOrphans { reapOrphans() }
            return
        }
        guard let io = hub.registry.withLock({ $0[data >> 2] }), !io.finished else { return }
        switch data & 3 {
        case HubEventLoop.kindPidfd:
            // It has exited (a pidfd is readable then): the pipes may close now.
            io.releaseWriteEnds()
            reap(io)
            // An orphan that exited while this child was the first zombie in line.
            if hub.reapsOrphans { reapOrphans() }
        case HubEventLoop.kindStdout: readOutput(io, .stdout, readable: true)
        case HubEventLoop.kindStderr: readOutput(io, .stderr, readable: true)
        default: writeInput(io)
        }
    }

    /// Whether the child holding the terminal has stopped (its Ctrl-Z, or a read after a
    /// `bg`), when stops are reported at all.
    private func stoppedAtTheTerminal() -> Bool {
        guard hub.reportsStops.load(ordering: .relaxed) else { return false }
        let holders = hub.registry.withLock { $0.values.filter { $0.terminal != nil && $0.exit == nil } }
        return holders.contains { cflow_child_stopped($0.child.pid) == 1 }
    }

    /// Ctrl-Z: stops every running step's group, then flow (the shell sees the job stop);
    /// once flow is continued, continues them, first giving the terminal back to the step
    /// that held it if flow got the foreground back (`fg`; after `bg` that step stops
    /// again at its next read of the terminal, and flow with it). The whole process is
    /// stopped meanwhile, so nothing else needs to wait for this.
    private func suspend() {
        let running = hub.registry.withLock { $0.values.filter { $0.exit == nil && !$0.finished } }
        // The interactive step, and whether it has the terminal now (not after a `bg`).
        let holder = running.first { $0.terminal != nil }
        let holds = holder.map { tcgetpgrp($0.terminal!.ttyFD) == $0.child.pid } ?? false
        // The step's terminal modes (a full-screen program's), for its return; flow's own
        // go back meanwhile, as a shell does for a stopped job.
        var holderModes = termios()
        let hasHolderModes = holds && tcgetattr(holder!.terminal!.ttyFD, &holderModes) == 0
        if holds { holder?.terminal?.takeBack() }
        for io in running { io.child.signalGroup(SIGTSTP) }
        cflow_stop_self()
        if let holder, let terminal = holder.terminal, tcgetpgrp(terminal.ttyFD) == getpgrp() {
            // SIGTTOU is blocked on this thread: flow may set the modes of its terminal.
            if hasHolderModes { _ = tcsetattr(terminal.ttyFD, TCSADRAIN, &holderModes) }
            terminal.handOver(to: holder.child.pid)
        }
        for io in running { io.child.signalGroup(SIGCONT) }
    }

    /// As pid 1 (a container's init) or a subreaper, flow becomes the parent of every
    /// process orphaned below it: what a step left running and the sweep killed once its
    /// shell was gone, a daemon whose parent exited. Their zombies are flow's to reap, or
    /// they would pile up for as long as flow runs. Only those: a child of flow's own (or
    /// its guard) is left to its owner, and the kernel shows one exited child at a time,
    /// so the rest wait for the next wake-up.
    private func reapOrphans() {
        var ours: Set<pid_t>?
        for _ in 0..<256 {
            // A child being spawned elsewhere may exist before it is registered.
            if hub.spawnsUnderWay.load(ordering: .sequentiallyConsistent) > 0 { return }
            let pid = cflow_some_exited_child()
            guard pid > 0 else { return }
            if ours == nil {
                var known = Set(hub.registry.withLock { $0.values.map(\.child.pid) })
                known.insert(cflow_guard_pid())
                ours = known
            }
            if ours!.contains(pid) {
                // The guard ends only with flow: exited, someone killed it, and its zombie
                // would stay first in line for the rest of the run, every orphan behind it
                // unreaped (found by reading this loop; reproduced by killing flow-guard
                // under a subreaper flow). Reaped, flow goes on unguarded.
                if pid == cflow_guard_pid(), ProcessGuard.shared.reapIfExited() {
                    ours = nil
                    continue
                }
                return
            }
            var status: Int32 = 0
            _ = waitpid(pid, &status, WNOHANG)
        }
    }

    /// Fallback without pidfds: after a SIGCHLD, find which of our children exited.
    private func scanForExits() {
        let candidates = hub.registry.withLock { registry in
            registry.values.filter { $0.exit == nil && !$0.finished }
        }
        for io in candidates { reap(io) }  // reap() itself checks, without reaping, who exited
    }

    /// Sweeps and reaps the leaders whose grace ended or whose pipes closed.
    private func checkDeferred() {
        guard !deferred.isEmpty else { return }
        let now = HubEventLoop.now()
        var keep: [(deadline: UInt64, io: ChildIO)] = []
        for entry in deferred {
            readOutput(entry.io, .stdout)
            readOutput(entry.io, .stderr)
            if entry.deadline <= now || !entry.io.outputsOpen {
                reap(entry.io, deferring: false)
            } else {
                keep.append(entry)
            }
        }
        deferred = keep
    }

    /// The leader exited: sweep its group, reap it, then drain its pipes.
    private func reap(_ io: ChildIO, deferring: Bool = true) {
        guard io.exit == nil else { return }
        let pid = io.child.pid
        if deferring, deferred.contains(where: { $0.io === io }) { return }
        if deferring, let deadline = io.child.state.withLock({ $0.graceDeadline }), deadline > HubEventLoop.now(),
           io.outputsOpen, cflow_child_has_exited(pid) == 1 {
            // Leave the rest of the group its grace; the pidfd stays readable, so stop
            // watching it and look again on a short timer.
            unwatchAndClose(&io.pidfd)
            deferred.append((deadline, io))
            return
        }
        let exit: Termination? = io.child.state.withLock { state in
            // Has it exited? Asked without reaping (WNOWAIT), so that while we sweep, the
            // zombie leader still holds its pid and the group id cannot be anyone else's.
            let exited = cflow_child_has_exited(pid)
            if exited == 0 { return nil }  // spurious wake-up (fallback scan)
            if exited < 0 {
                // ECHILD: someone else reaped it (a waitpid(-1) elsewhere, or SIGCHLD set to
                // SIG_IGN). The pid may already be recycled: no sweep, and the status is
                // lost, so report a failure rather than a success that may be false.
                state.reaped = true
                ProcessGuard.shared.release(io.guardSlot)
                return .exited(255)
            }
            // Sweep, then reap, under the lock `signalGroup` takes: no signal can reach
            // the group id once the pid may be recycled.
            _ = Glibc.kill(-pid, SIGKILL)
            // Off the guard's list before the pid can be recycled (it is, once reaped).
            ProcessGuard.shared.release(io.guardSlot)
            var status: Int32 = 0
            var r: pid_t
            repeat { r = waitpid(pid, &status, WNOHANG) } while r < 0 && errno == EINTR
            state.reaped = true
            guard r == pid else { return .exited(255) }
            var value: Int32 = 0
            switch cflow_decode_wait_status(status, &value) {
            case 1: return .exited(value)
            case 2: return .signaled(value)
            default: return .exited(255)
            }
        }
        guard let exit else { return }
        io.exit = exit
        unwatchAndClose(&io.pidfd)
        // The child is gone: nobody will read the rest of its input.
        unwatchAndClose(&io.stdinFD)
        io.pendingInput = []
        io.terminal?.takeBack(from: pid)
        io.terminal = nil
        // The group is dead, so its pipes are normally at EOF already: drain them now
        // rather than after another round of epoll_wait.
        drainAfterExit(io)
        if io.finished { return }
        if !io.outputsOpen {  // nothing captured (inherited output)
            finish(io)
            return
        }
        drains.append((deadline: HubEventLoop.now() + hub.drainNanoseconds, io: io))
    }

    /// Reads what is available (up to 1 MiB) and hands it over; closes at EOF.
    ///
    /// A read end starts blocking (two fcntl calls fewer per spawn, most steps printing
    /// little or nothing). When epoll said it is `readable`, one read cannot block; a
    /// second one is made only after a full chunk, and with O_NONBLOCK set first. Reads
    /// not prompted by epoll (after the reaping, on a drain's deadline) set it first too.
    private func readOutput(_ io: ChildIO, _ channel: OutputChannel, readable: Bool = false) {
        let fd = channel == .stdout ? io.stdoutFD : io.stderrFD
        guard fd >= 0 else { return }
        var blocking = channel == .stdout ? !io.stdoutNonBlocking : !io.stderrNonBlocking
        func makeNonBlocking() {
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            if channel == .stdout { io.stdoutNonBlocking = true } else { io.stderrNonBlocking = true }
            blocking = false
        }
        if blocking && !readable { makeNonBlocking() }
        var reads = 0
        while reads < 16 {
            let n = read(fd, buffer, ProcessHub.readChunk)
            if n > 0 {
                io.onOutput(channel, UnsafeRawBufferPointer(start: buffer, count: n))
                reads += 1
                if blocking {
                    // Less than a chunk: the pipe is most likely empty now, and epoll
                    // says when it is not.
                    if n < ProcessHub.readChunk { break }
                    makeNonBlocking()
                }
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == EAGAIN { break }
            // EOF (or a read error, which we cannot do better with).
            if channel == .stdout { unwatchAndClose(&io.stdoutFD) } else { unwatchAndClose(&io.stderrFD) }
            break
        }
        if io.exit != nil && !io.outputsOpen { finish(io) }
    }

    /// Reads what the exited child's pipes hold, and closes those at EOF. One `poll` asks
    /// both: a pipe that hangs up and holds nothing (a step that printed nothing, the usual
    /// case) is closed without a read, and a read goes only to a pipe that has something,
    /// so none can block (no fcntl for O_NONBLOCK). A pipe still held open by a process the
    /// step left behind is left to the loop and the drain deadline.
    private func drainAfterExit(_ io: ChildIO) {
        var fds = [pollfd(fd: io.stdoutFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: io.stderrFD, events: Int16(POLLIN), revents: 0)]
        guard io.outputsOpen, poll(&fds, 2, 0) >= 0 else {
            readOutput(io, .stdout)
            readOutput(io, .stderr)
            return
        }
        for (entry, channel) in zip(fds, [OutputChannel.stdout, .stderr]) where entry.fd >= 0 {
            if entry.revents & Int16(POLLIN) != 0 {
                readOutput(io, channel, readable: true)
            } else if entry.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                if channel == .stdout { unwatchAndClose(&io.stdoutFD) } else { unwatchAndClose(&io.stderrFD) }
            }
        }
        if !io.outputsOpen { finish(io) }
    }

    /// Feeds pending stdin bytes; closes the pipe when done or when the child went away.
    private func writeInput(_ io: ChildIO) {
        guard io.stdinFD >= 0 else { return }
        let (offset, error) = ProcessHub.writeSome(io.stdinFD, io.pendingInput, from: io.inputOffset)
        io.inputOffset = offset
        if offset >= io.pendingInput.count {
            unwatchAndClose(&io.stdinFD)
            io.pendingInput = []
        } else if error != EAGAIN {
            // EPIPE (child closed its stdin) or another error: stop feeding, quietly.
            cflow_consume_pending_sigpipe()
            unwatchAndClose(&io.stdinFD)
            io.pendingInput = []
        }
    }

    /// Publishes the result and forgets the child.
    private func finish(_ io: ChildIO) {
        guard !io.finished, let exit = io.exit else { return }
        io.finished = true
        io.releaseWriteEnds()
        unwatchAndClose(&io.stdoutFD)
        unwatchAndClose(&io.stderrFD)
        hub.registry.withLock { _ = $0.removeValue(forKey: io.token) }
        io.child.finish(exit, drainTimedOut: io.drainTimedOut)
    }

    /// Gives up on pipes held open past the drain by processes that left the group.
    private func expireDrains() {
        guard drainHead < drains.count else { return }
        let now = HubEventLoop.now()
        while drainHead < drains.count, drains[drainHead].io.finished || drains[drainHead].deadline <= now {
            let io = drains[drainHead].io
            drainHead += 1
            if io.finished { continue }
            // One last non-blocking read, so nothing already in the pipe is lost.
            readOutput(io, .stdout)
            readOutput(io, .stderr)
            if !io.finished {
                io.drainTimedOut = true
                finish(io)
            }
        }
        if drainHead == drains.count {
            drains.removeAll(keepingCapacity: true)
            drainHead = 0
        } else if drainHead > 1024 {
            drains.removeFirst(drainHead)
            drainHead = 0
        }
    }

    /// epoll_wait timeout in ms: until the oldest pending drain deadline, else forever.
    private func nextTimeout() -> Int32 {
        if !deferred.isEmpty { return 20 }
        while drainHead < drains.count && drains[drainHead].io.finished { drainHead += 1 }
        guard drainHead < drains.count else { return -1 }
        let now = HubEventLoop.now()
        let deadline = drains[drainHead].deadline
        if deadline <= now { return 0 }
        return Int32(min((deadline - now + 999_999) / 1_000_000, 60_000))
    }

    /// Closing is enough to leave the epoll set (no EPOLL_CTL_DEL: one syscall less per
    /// descriptor). If a concurrent spawn's child still holds a copy for an instant, a
    /// stale event may come; its token is no longer registered, so it is ignored.
    private func unwatchAndClose(_ fd: inout Int32) {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
