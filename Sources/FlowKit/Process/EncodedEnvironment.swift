/// An environment encoded once as `KEY=VALUE` C strings, shared by every child spawned with
/// it as a base.
///
/// Most steps of a run see the same environment (flow's own, plus the workflow's), so it is
/// encoded when the run starts rather than at each spawn: building a thousand-step
/// sequence's envp from a dictionary every time was a sixth of flow's instructions per step.
/// Immutable after `init`, so it is shared across threads freely.
public final class EncodedEnvironment: @unchecked Sendable {
    /// The variables, as given.
    public let values: [String: String]
    /// Each variable's position in `entries`, to leave out the ones a spawn overrides.
    let index: [String: Int]
    /// Pointers to the `KEY=VALUE` strings inside `storage`, in `index` order.
    let entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let storage: UnsafeMutablePointer<CChar>

    public init(_ values: [String: String]) {
        self.values = values
        var total = 0
        for (key, value) in values { total += key.utf8.count + value.utf8.count + 2 }
        storage = .allocate(capacity: max(total, 1))
        entries = .allocate(capacity: max(values.count, 1))
        var index: [String: Int] = [:]
        index.reserveCapacity(values.count)
        var offset = 0
        for (i, (key, value)) in values.enumerated() {
            entries[i] = storage + offset
            offset = CStringArray.appendEntry(key, value, into: storage, at: offset)
            index[key] = i
        }
        self.index = index
    }

    deinit {
        entries.deallocate()
        storage.deallocate()
    }
}
