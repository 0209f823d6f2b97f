#if canImport(Glibc)
import Glibc
#endif

/// flow's own environment, which every step starts from.
public enum ProcessEnvironment {
    public static func current() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        // Split at the first `=` by byte (strchr): a Character-wise `firstIndex(of:)` over
        // the whole environment was a sixth of the instructions of a one-step run.
        while let entry = pointer.pointee {
            if let equals = strchr(entry, Int32(UInt8(ascii: "="))) {
                let name = UnsafeRawBufferPointer(start: entry, count: equals - entry)
                result[String(decoding: name, as: UTF8.self)] = String(cString: equals + 1)
            }
            pointer += 1
        }
        return result
    }

    /// A short, unique run id: time-ordered hex and random bits (`6a3f0c2e-9b1d`).
    public static func newRunID() -> String {
        let seconds = UInt32(truncatingIfNeeded: Int(Timestamp.now().unix))
        let random = UInt16.random(in: 0...UInt16.max)
        func hex<T: BinaryInteger>(_ v: T, _ width: Int) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return hex(seconds, 8) + "-" + hex(random, 4)
    }
}
