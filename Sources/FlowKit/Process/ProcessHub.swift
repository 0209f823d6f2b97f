#if canImport(Glibc)
import Glibc
#endif
import CFlowSys
import Synchronization

/// Starts flow's child processes and watches all of them from ONE event-loop thread.
///
/// The loop waits with epoll on every child's output pipes, stdin pipe and pidfd, so a
/// thousand children cost a thousand registrations, not a thousand threads. When a
/// leader exits, the loop sweeps its process group with SIGKILL (so `cmd &` grandchildren
/// never survive), reaps it, drains the pipes to end-of-file (bounded, in case something
/// escaped the group) and only then publishes the `Termination`.
///
/// Kernels without pidfd (before 5.3) fall back to a chained SIGCHLD handler that wakes
/// the loop, which then polls its children with `waitid(WNOWAIT)`.
public final class ProcessHub: Sendable {
    /// The hub flow uses; its thread starts on first use and lives as long as the process.
    public static let shared = ProcessHub()

    /// Read size for captured output: large chunks keep syscalls per megabyte low.
    static let readChunk = 64 * 1024

    let epollFD: Int32
    /// eventfd the SIGCHLD notifier writes to (fallback mode); also a generic wake-up.
    let wakeFD: Int32
    /// Shared read/write `/dev/null` given to children as stdin (saves an open per child),
    /// or an empty pipe's read end where there is none (see `emptyInput`).
    let devNullFD: Int32
    /// The controlling terminal, or -1 (no terminal: interactive children just inherit).
    let ttyFD: Int32
    let usesPidfd: Bool
    /// Whether orphans below flow become its children (flow is pid 1, or a subreaper): their
    /// zombies are then flow's to reap (see `HubEventLoop.reapOrphans`).
    let reapsOrphans: Bool
    /// Spawns under way: a child that exists but is not registered yet must not be taken
    /// for an orphan.
    let spawnsUnderWay = Atomic<Int>(0)
    /// Set by `killEverything`: no spawn starts any more.
    let killingEverything = Atomic<Bool>(false)
    let drainNanoseconds: UInt64
    /// flow's pid, for the children's parent-death check (flow never forks without exec;
    /// glibc's getpid is a system call every time).
    let processID = getpid()

    /// Runs tasks on this hub's thread (see `HubTaskExecutor` for when and why).
    public let executor: HubTaskExecutor

    /// Children the loop still watches, by token. Written by spawners and the loop.
    let registry = Mutex<[UInt64: ChildIO]>([:])
    let nextToken = Atomic<UInt64>(1)
    /// Work to do once, the next time the loop has nothing else to do (see `whenIdle`).
    private let idleWork = Mutex<[@Sendable () -> Void]>([])

    /// A descriptor that reads as empty, for the steps' stdin: `/dev/null`, or, where it
    /// cannot be opened (a chroot or sandbox without `/dev`), the read end of a pipe whose
    /// write end is closed, which reads as end-of-file at once just the same. flow died on
    /// a failed precondition there, at its first shell step, its run left `interrupted`.
    private static func emptyInput() -> Int32 {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        if null >= 0 { return null }
        var ends: [Int32] = [-1, -1]
        let made = ends.withUnsafeMutableBufferPointer { cflow_pipe_cloexec($0.baseAddress!) }
        precondition(made == 0, "flow: cannot open /dev/null, nor make a pipe in its place")
        close(ends[1])
        return ends[0]
    }

    /// A hub with pidfds when the kernel has them and a 200 ms output drain.
    public convenience init() {
        self.init(useProcessDescriptors: true, drainMilliseconds: 200)
    }

    /// `useProcessDescriptors: false` forces the SIGCHLD fallback (for tests).
    init(useProcessDescriptors: Bool, drainMilliseconds: Int) {
        // Done first in `main`; again for a hub made elsewhere (tests, other tools).
        StandardDescriptors.reserve()
        // First, while descriptor numbers are low: see `cflow_spawn_prepare`.
        _ = cflow_spawn_prepare()
        devNullFD = Self.emptyInput()
        ttyFD = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epollFD >= 0, "flow: epoll_create1 failed")
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(wakeFD >= 0, "flow: eventfd failed")
        var pidfdWorks = false
        if useProcessDescriptors {
            let probe = cflow_pidfd_open(getpid())
            if probe >= 0 {
                close(probe)
                pidfdWorks = true
            }
        }
        usesPidfd = pidfdWorks
        reapsOrphans = cflow_reaps_orphans() != 0
        drainNanoseconds = UInt64(max(0, drainMilliseconds)) * 1_000_000
        executor = HubTaskExecutor(wakeFD: wakeFD)

        if !usesPidfd {
            precondition(cflow_install_sigchld_notifier(wakeFD) == 0, "flow: cannot install SIGCHLD handler")
        } else if reapsOrphans {
            // An orphan's exit has no pidfd of ours: SIGCHLD is how the loop hears of it.
            _ = cflow_install_sigchld_notifier(wakeFD)
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = HubEventLoop.wakeToken
        precondition(epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0, "flow: epoll_ctl failed")

        HubEventLoop.start(hub: self)
    }

    /// Whether SIGCHLD also reports stopped children (set at the first interactive spawn).
    let reportsStops = Atomic<Bool>(false)

    /// Job control for a run: Ctrl-Z (SIGTSTP) stops every running step's group and then
    /// flow itself; `fg` or `bg` (SIGCONT) continues them, and gives the terminal back to
    /// an interactive step that had it. An interactive step that is stopped itself (Ctrl-Z
    /// goes to it, the terminal's foreground) stops flow the same way.
    ///
    /// Why: each step has a process group of its own, so the terminal's Ctrl-Z reaches
    /// flow (or the interactive step) alone, as Ctrl-C does; without this the steps would
    /// go on running behind a stopped flow, or an interactive step would stop with the
    /// shell still waiting for a flow that never stopped, holding the terminal.
    public func enableJobControl() {
        _ = cflow_install_suspend_notifier(wakeFD)
    }

    /// Makes SIGCHLD wake the loop when a child stops (see `enableJobControl`).
    func reportStops() {
        guard !reportsStops.load(ordering: .relaxed) else { return }
        if cflow_report_child_stops(wakeFD) == 0 { reportsStops.store(true, ordering: .relaxed) }
    }

    /// Children not yet finished (spawned and still running or draining).
    public var activeChildren: Int {
        registry.withLock { $0.count }
    }

    /// Sends `signal` to the process group of every unfinished child (see
    /// `ChildProcess.signalGroup`), e.g. for a second Ctrl-C that must end everything now.
    public func signalAll(_ signal: Int32) {
        let children = registry.withLock { $0.values.map(\.child) }
        for child in children { child.signalGroup(signal) }
    }

    /// SIGKILLs every child's process group, those still being spawned on another thread
    /// too, and starts no more: a second Ctrl-C or SIGQUIT, after which flow exits.
    ///
    /// `signalAll` alone missed a child whose spawn was under way (cloned, not yet
    /// registered, nor listed with the guard): it ran on, and what its shell started in the
    /// background outlived flow (found by a randomized signal audit: a `sleep` left behind
    /// after a SIGQUIT that came as a retry started). Spawns count themselves in
    /// `spawnsUnderWay` before they look at the flag; this sets the flag before it reads the
    /// count, so each spawn either sees the flag (and starts nothing) or is waited for and
    /// then killed by the second `signalAll`. That one is sent even when no spawn was
    /// counted: a spawn that ended just before the count was read registered its child
    /// after the first one's list was taken. A spawn takes well under a millisecond.
    public func killEverything() {
        killingEverything.store(true, ordering: .sequentiallyConsistent)
        signalAll(SIGKILL)
        while spawnsUnderWay.load(ordering: .sequentiallyConsistent) > 0 { sched_yield() }
        signalAll(SIGKILL)
    }

    /// Runs `body` once on the loop's thread, the next time it is about to wait with nothing
    /// queued: the moment when a child is running and flow has nothing to do for it.
    ///
    /// Why: bookkeeping that must happen soon but not before the next action (the journal's
    /// record of a step that has just started) then overlaps with the child's own start-up
    /// on another core instead of delaying the spawn. `body` must be short and must not wait
    /// for the loop.
    public func whenIdle(_ body: @escaping @Sendable () -> Void) {
        idleWork.withLock { $0.append(body) }
        if pthread_self() != executor.loopThread.load(ordering: .relaxed) { wake() }
    }

    /// Runs the idle work queued so far; false when there was none.
    func runIdleWork() -> Bool {
        var batch: [@Sendable () -> Void] = []
        idleWork.withLock { swap(&batch, &$0) }
        for body in batch { body() }
        return !batch.isEmpty
    }

    /// Wakes the loop (fallback mode: makes it look for exits it may have missed).
    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }
}
