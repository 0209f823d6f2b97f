#if canImport(Glibc)
import Glibc
#endif
import CFlowSys
import Dispatch
import Synchronization

/// Kills the process groups of flow's running children when flow dies without a chance to
/// do it itself (SIGKILL, a crash).
///
/// Why a second process: SIGKILL cannot be caught, and the parent-death signal each child
/// carries reaches that child only. A step's `sh -c` died with flow, but what the shell had
/// started lived on. So a run that will spawn starts a guard: a process named `flow-guard`
/// that waits for end-of-file on a pipe whose only write end flow holds (its end, however
/// it came) and then SIGKILLs every group listed. Flow lists a child's group after its
/// spawn and takes it off after the group's sweep and before its leader is reaped, so a
/// listed id is never one the kernel could have given to someone else while flow lived.
///
/// The guard shares flow's memory (see `guard.c`): it reads the list where flow wrote it,
/// and it costs one `clone` to start and one store per spawn and per reap; it never wakes
/// while flow runs. Measured on a one-step run, a guard that was `/bin/sh` reading the list
/// from a memfd instead cost 6–11% of the wall time (exec and dynamic loading of another
/// program on a 2-core machine); this one costs nothing measurable. The price of sharing:
/// the kernel's OOM killer kills every process that shares the victim's memory, so a flow
/// killed for lack of memory takes its guard along and the grandchildren survive. A normal
/// exit reaps the guard first (`stop`), so it never outlives flow.
public final class ProcessGuard: Sendable {
    /// The guard of this process.
    public static let shared = ProcessGuard()

    private struct State {
        var phase = Phase.idle
        var freeSlots: [Int32] = []
        var slotCount: Int32 = 0
        var listed = 0
    }

    /// Not started yet, running, or off (it could not start, or it was stopped).
    private enum Phase { case idle, running, off }

    private let state = Mutex(State())

    init() {}

    /// Starts the guard on another thread, for a run that will spawn, so that even the
    /// clone stays off the first step's path.
    func startSoon() {
        DispatchPool.queue("flow.process-guard", qos: .userInitiated).async {
            self.state.withLock { Self.start(&$0) }
        }
    }

    /// Takes a slot for a child about to be spawned, which lists its own group in it before
    /// it execs (`cflow_spawn_request.guard_slot`); -1 when there is no guard. Starts the
    /// guard if `startSoon` has not. A spawn that fails gives the slot back with `release`.
    func reserve() -> Int32 {
        state.withLock { state in
            Self.start(&state)
            guard state.phase == .running else { return -1 }
            let slot: Int32
            if let free = state.freeSlots.popLast() {
                slot = free
            } else {
                slot = state.slotCount
                state.slotCount += 1
            }
            state.listed += 1
            return slot
        }
    }

    /// Takes `slot`'s group off the list (after the group's sweep, before its leader is
    /// reaped).
    func release(_ slot: Int32) {
        guard slot >= 0 else { return }
        state.withLock { state in
            guard state.phase == .running else { return }
            cflow_guard_set(slot, 0)
            state.freeSlots.append(slot)
            state.listed -= 1
        }
    }

    /// Ends the guard and reaps it, so that it does not outlive flow: at once when no group
    /// is listed, otherwise by closing the pipe, so that it kills those groups first. Runs
    /// at exit by itself; call it before `_exit`.
    public func stop() {
        state.withLock { state in
            guard state.phase == .running else { return }
            state.phase = .off
            cflow_guard_stop(state.listed == 0 ? 1 : 0)
        }
    }

    /// Reaps the guard if it has died before flow (someone killed it) and goes on without
    /// one; true if it did. For the loop that reaps orphans (see
    /// `HubEventLoop.reapOrphans`): the guard's zombie, first in the kernel's line of
    /// exited children, kept every orphan behind it unreaped.
    func reapIfExited() -> Bool {
        state.withLock { state in
            guard state.phase == .running, cflow_guard_reap_if_exited() != 0 else { return false }
            state.phase = .off
            return true
        }
    }

    /// Starts the guard if nobody has tried yet; if it cannot start, flow runs unguarded.
    private static func start(_ state: inout State) {
        guard state.phase == .idle else { return }
        state.phase = cflow_guard_start() > 0 ? .running : .off
        if state.phase == .running { atexit { ProcessGuard.shared.stop() } }
    }
}
