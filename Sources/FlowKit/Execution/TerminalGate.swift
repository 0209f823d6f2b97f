import Synchronization

/// Lets an `interactive` step have the terminal alone: it waits until no other shell step
/// runs, and no other shell step starts while it runs.
final class TerminalGate: Sendable {
    private struct State {
        var shared = 0
        var exclusive = false
        var waiters: [(exclusive: Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    func acquire(exclusive: Bool) async {
        // Fast path, without suspending: the usual case (no interactive step anywhere).
        let granted = state.withLock { s -> Bool in
            guard s.waiters.isEmpty, Self.canGrant(exclusive: exclusive, s) else { return false }
            Self.grant(exclusive: exclusive, &s)
            return true
        }
        if granted { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { s -> Bool in
                if Self.canGrant(exclusive: exclusive, s), s.waiters.isEmpty || !exclusive && !s.waiters.contains(where: \.exclusive) {
                    Self.grant(exclusive: exclusive, &s)
                    return true
                }
                s.waiters.append((exclusive, continuation))
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release(exclusive: Bool) {
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            if exclusive { s.exclusive = false } else { s.shared -= 1 }
            var ready: [CheckedContinuation<Void, Never>] = []
            while let first = s.waiters.first, Self.canGrant(exclusive: first.exclusive, s) {
                s.waiters.removeFirst()
                Self.grant(exclusive: first.exclusive, &s)
                ready.append(first.continuation)
                if first.exclusive { break }
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    private static func canGrant(exclusive: Bool, _ s: State) -> Bool {
        exclusive ? !s.exclusive && s.shared == 0 : !s.exclusive
    }

    private static func grant(exclusive: Bool, _ s: inout State) {
        if exclusive { s.exclusive = true } else { s.shared += 1 }
    }
}
