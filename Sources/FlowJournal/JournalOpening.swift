#if canImport(Glibc)
import Glibc
#endif
import FlowKit
import Dispatch
import Synchronization

/// The journal of a state dir, opened on a thread of its own as soon as `flow run` starts,
/// while the workflow is still being read, checked and planned.
///
/// Why: opening is most of the journal's cost on a short run (SQLite parses the schema and
/// rebuilds the WAL index in every new process: about 0.9 M instructions), and until the
/// plan exists flow's other core is idle. The run's recorder then does its own first
/// transaction on the same thread (`then`), so no second thread is made.
///
/// Only a journal that already exists is opened this early: for a workflow that turns out
/// invalid, nothing must be created. The first run of a state dir opens it as before, when
/// the run starts.
public final class JournalOpening: Sendable {
    private let next = Mutex<(@Sendable (Result<Journal, JournalError>) -> Void)?>(nil)
    private let wake = DispatchSemaphore(value: 0)

    private let stateDir: String

    private init(stateDir: String) {
        self.stateDir = stateDir
    }

    /// Starts opening the journal of `stateDir` if it exists; nil if it does not (or no
    /// thread could be made).
    public static func startIfPresent(stateDir: String) -> JournalOpening? {
        guard access(stateDir + "/journal.sqlite", F_OK) == 0 else { return nil }
        let opening = JournalOpening(stateDir: stateDir)
        guard BackgroundThread.start({ opening.openThenWait() }) else { return nil }
        return opening
    }

    /// Runs `body` with the outcome of the opening, on the opening's thread, once it is done.
    /// Called at most once.
    func then(_ body: @escaping @Sendable (Result<Journal, JournalError>) -> Void) {
        next.withLock { $0 = body }
        wake.signal()
    }

    private func openThenWait() {
        let result = Result { () throws(JournalError) -> Journal in try Journal.open(stateDir: stateDir, create: true) }
        // A run that never starts (an invalid workflow) never calls `then`: this thread
        // then waits until flow exits, with the connection open as after any run.
        wake.wait()
        next.withLock { $0 }?(result)
    }
}
