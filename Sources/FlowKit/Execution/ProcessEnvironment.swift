#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// flow's own environment, which every step starts from.
public enum ProcessEnvironment {
    public static func current() -> [String: String] {
        var result: [String: String] = [:]
        var raw: [String: (value: String, entry: [UInt8])] = [:]
        var pointer = environ
        // Split at the first `=` by byte (strchr): a Character-wise `firstIndex(of:)` over
        // the whole environment was a sixth of the instructions of a one-step run.
        while let entry = pointer.pointee {
            if let equals = strchr(entry, Int32(UInt8(ascii: "="))) {
                let nameBytes = UnsafeRawBufferPointer(start: entry, count: equals - entry)
                if let name = String(validating: nameBytes, as: UTF8.self), let value = String(validatingCString: equals + 1) {
                    result[name] = value
                    if !raw.isEmpty { raw[name] = nil }
                } else {
                    // Not UTF-8 (a Latin-1 directory in PATH or HOME): the String has U+FFFD
                    // for the bytes; the child gets the bytes themselves (`rawEntries`).
                    let name = String(decoding: nameBytes, as: UTF8.self)
                    let value = String(cString: equals + 1)
                    result[name] = value
                    raw[name] = (value, Array(UnsafeRawBufferPointer(start: entry, count: strlen(entry))))
                }
            }
            pointer += 1
        }
        undecodable.withLock { $0 = raw }
        return result
    }

    /// The entries of flow's environment (as last read by `current`) that are not UTF-8, by
    /// the name and value `current` gave them: `KEY=VALUE` as flow got it.
    private static let undecodable = Mutex<[String: (value: String, entry: [UInt8])]>([:])

    /// The bytes of flow's own `name=value` entry when `current` had to replace some of them
    /// (they are not UTF-8) and `value` is still what it gave: a child that inherits the
    /// variable unchanged gets it byte for byte.
    static func rawEntries() -> [String: (value: String, entry: [UInt8])] {
        undecodable.withLock { $0 }
    }

    /// A short, unique run id: the second it was drawn, in hex (ids sort by time), and 32
    /// random bits (`6a3f0c2e-9b1d40c7`). With 16 (`6a3f0c2e-9b1d`, the ids of journals
    /// written before), two runs started in the same second drew the same id once in 65,536
    /// pairs, and the second one was not recorded; now once in 4 billion.
    public static func newRunID() -> String {
        let seconds = UInt32(truncatingIfNeeded: Int(Timestamp.now().unix))
        let random = UInt32.random(in: 0...UInt32.max)
        func hex<T: BinaryInteger>(_ v: T, _ width: Int) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return hex(seconds, 8) + "-" + hex(random, 8)
    }
}
