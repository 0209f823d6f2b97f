/// A NULL-terminated `char *[]` (argv or envp) in two allocations, built without an
/// intermediate `String` per entry because every spawn pays for it.
struct CStringArray: ~Copyable {
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let storage: UnsafeMutablePointer<CChar>

    /// argv-style: one C string per element.
    init(_ strings: [String]) {
        var total = 0
        for s in strings { total += s.utf8.count + 1 }
        storage = .allocate(capacity: max(total, 1))
        pointers = .allocate(capacity: strings.count + 1)
        var offset = 0
        for (i, s) in strings.enumerated() {
            pointers[i] = storage + offset
            offset = CStringArray.copy(s, into: storage, at: offset)
            storage[offset] = 0
            offset += 1
        }
        pointers[strings.count] = nil
    }

    /// envp-style: the base's `KEY=VALUE` strings (pointed at, not copied) except those
    /// overridden, then the overrides, encoded here.
    init(environment: ChildEnvironment) {
        let base = environment.base
        let overrides = environment.overrides
        var total = 0
        for (key, value) in overrides { total += key.utf8.count + value.utf8.count + 2 }
        storage = .allocate(capacity: max(total, 1))
        pointers = .allocate(capacity: base.values.count + overrides.count + 1)
        var count = 0
        // Few overrides (a step's FLOW_* and env:): look each up, rather than hash every
        // base variable. Usually none of them is in the base: then the base's pointers go
        // over in one copy.
        var skipped: [Int] = []
        for (key, _) in overrides {
            if let i = base.index[key] { skipped.append(i) }
        }
        let baseCount = base.values.count
        if skipped.isEmpty {
            pointers.update(from: base.entries, count: baseCount)
            count = baseCount
        } else {
            for i in 0..<baseCount where !skipped.contains(i) {
                pointers[count] = base.entries[i]
                count += 1
            }
        }
        var offset = 0
        for (key, value) in overrides {
            pointers[count] = storage + offset
            count += 1
            offset = CStringArray.appendEntry(key, value, into: storage, at: offset)
        }
        pointers[count] = nil
    }

    deinit {
        pointers.deallocate()
        storage.deallocate()
    }

    /// Writes `key=value` and its NUL at `offset`; returns the offset just past them.
    static func appendEntry(_ key: String, _ value: String, into storage: UnsafeMutablePointer<CChar>, at offset: Int) -> Int {
        var offset = copy(key, into: storage, at: offset)
        storage[offset] = 0x3D  // "="
        offset = copy(value, into: storage, at: offset + 1)
        storage[offset] = 0
        return offset + 1
    }

    /// Copies the UTF-8 of `s` at `offset`; returns the offset just past it.
    private static func copy(_ s: String, into storage: UnsafeMutablePointer<CChar>, at offset: Int) -> Int {
        var s = s
        return s.withUTF8 { bytes in
            if let base = bytes.baseAddress, bytes.count > 0 {
                UnsafeMutableRawPointer(storage + offset).copyMemory(from: base, byteCount: bytes.count)
            }
            return offset + bytes.count
        }
    }
}
