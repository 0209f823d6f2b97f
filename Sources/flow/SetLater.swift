import Synchronization

/// A value that is set once it exists, for a closure made before it (a signal handler
/// installed before what it cleans up is made) to read: nil until then.
final class SetLater<Value: Sendable>: Sendable {
    private let stored = Mutex<Value?>(nil)

    var value: Value? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
