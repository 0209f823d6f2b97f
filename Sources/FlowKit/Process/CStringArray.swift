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

    /// envp-style: one `KEY=VALUE` C string per entry.
    init(environment: [String: String]) {
        var total = 0
        for (k, v) in environment { total += k.utf8.count + v.utf8.count + 2 }
        storage = .allocate(capacity: max(total, 1))
        pointers = .allocate(capacity: environment.count + 1)
        var offset = 0
        var i = 0
        for (k, v) in environment {
            pointers[i] = storage + offset
            offset = CStringArray.copy(k, into: storage, at: offset)
            storage[offset] = 0x3D  // "="
            offset = CStringArray.copy(v, into: storage, at: offset + 1)
            storage[offset] = 0
            offset += 1
            i += 1
        }
        pointers[i] = nil
    }

    deinit {
        pointers.deallocate()
        storage.deallocate()
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
