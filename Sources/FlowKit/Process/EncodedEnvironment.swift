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
        // Variables of flow's own environment that are not UTF-8 go over as flow got them
        // (the Strings have U+FFFD for those bytes), unless the value was changed.
        let undecodable = ProcessEnvironment.rawEntries()
        let raw = { (key: String, value: String) -> [UInt8]? in
            guard !undecodable.isEmpty, let original = undecodable[key], original.value == value else { return nil }
            return original.entry
        }
        var total = 0
        for (key, value) in values { total += raw(key, value).map { $0.count + 1 } ?? key.utf8.count + value.utf8.count + 2 }
        storage = .allocate(capacity: max(total, 1))
        entries = .allocate(capacity: max(values.count, 1))
        var index: [String: Int] = [:]
        index.reserveCapacity(values.count)
        var offset = 0
        for (i, (key, value)) in values.enumerated() {
            entries[i] = storage + offset
            if let bytes = raw(key, value) {
                let destination = UnsafeMutableRawPointer(storage + offset)
                bytes.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                offset += bytes.count
                storage[offset] = 0
                offset += 1
            } else {
                offset = CStringArray.appendEntry(key, value, into: storage, at: offset)
            }
            index[key] = i
        }
        self.index = index
    }

    deinit {
        entries.deallocate()
        storage.deallocate()
    }
}
