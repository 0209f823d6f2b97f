#if canImport(Glibc)
import Glibc
#endif

/// The descriptors and buffers of one child, as seen by the hub's event loop.
///
/// `@unchecked Sendable` by confinement: the spawning thread fills it in completely, then
/// publishes it through the hub's registry lock; from then on only the event-loop thread
/// reads or writes it. That keeps the hot path (reads, reaping) free of per-field locks.
final class ChildIO: @unchecked Sendable {
    let token: UInt64
    let child: ChildProcess
    let onOutput: @Sendable (OutputChannel, UnsafeRawBufferPointer) -> Void

    /// Its slot in `ProcessGuard`'s list, or -1.
    var guardSlot: Int32 = -1
    var pidfd: Int32 = -1
    var stdoutFD: Int32 = -1
    var stderrFD: Int32 = -1
    /// Whether O_NONBLOCK was set on the read ends (see `HubEventLoop.readOutput`).
    var stdoutNonBlocking = false
    var stderrNonBlocking = false
    /// Flow's own copies of the output pipes' write ends, held until the child exits so
    /// that its exit does not hang the pipes up before its pidfd fires (-1: none held).
    var heldWriteEnds: (Int32, Int32) = (-1, -1)
    /// Write end of the stdin pipe while bytes remain to be written.
    var stdinFD: Int32 = -1
    var pendingInput: [UInt8] = []
    var inputOffset = 0

    /// Set when the leader has been reaped.
    var exit: Termination?
    /// The terminal to take back when an interactive child ends.
    var terminal: TerminalHandoff?
    /// Whether the drain deadline cut the output short.
    var drainTimedOut = false
    /// Whether the result was published (the record is then out of the registry).
    var finished = false

    init(token: UInt64, child: ChildProcess,
         onOutput: @escaping @Sendable (OutputChannel, UnsafeRawBufferPointer) -> Void) {
        self.token = token
        self.child = child
        self.onOutput = onOutput
    }

    var outputsOpen: Bool { stdoutFD >= 0 || stderrFD >= 0 }

    /// Closes the held write ends: once the child has exited, only the processes it left
    /// behind keep the pipes open, and EOF can come.
    func releaseWriteEnds() {
        if heldWriteEnds.0 >= 0 { close(heldWriteEnds.0) }
        if heldWriteEnds.1 >= 0 { close(heldWriteEnds.1) }
        heldWriteEnds = (-1, -1)
    }
}
