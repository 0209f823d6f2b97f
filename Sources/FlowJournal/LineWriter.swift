/// Writes one line of JSON into memory the caller sized for it, with plain stores and
/// copies: the journal's lock-file lines are made on the path from one step's exit to the
/// next spawn, and `Array` appends cost ~90 instructions each, a line ~3,500 that way.
struct LineWriter {
    private let base: UnsafeMutablePointer<UInt8>
    /// Bytes written so far.
    private(set) var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
    }

    /// The room `quoted` may need for `s` at most: every byte could become `\u00XX`.
    static func quotedBound(_ s: String) -> Int { 6 * s.utf8.count + 2 }

    /// The room `decimal` needs at most (`Int.min`).
    static let decimalBound = 20

    mutating func raw(_ text: StaticString) {
        (base + count).update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        count += text.utf8CodeUnitCount
    }

    mutating func raw(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
        (base + count).update(from: start, count: bytes.count)
        count += bytes.count
    }

    mutating func byte(_ value: UInt8) {
        base[count] = value
        count += 1
    }

    /// `number` as `String(number)` spells it.
    mutating func decimal(_ number: Int) {
        if number < 0 { byte(0x2D) }  // "-"
        // The magnitude as unsigned: `Int.min` has no positive counterpart.
        var magnitude = number.magnitude
        var digits = 1
        var rest = magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var index = count + digits
        count = index
        repeat {
            index -= 1
            base[index] = UInt8(truncatingIfNeeded: 0x30 + magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
    }

    /// `s` as a JSON string literal, escaped as `JSONValue.appendQuoted` does: runs that
    /// need no escape (multi-byte characters among them: their bytes are all ≥ 0x80) are
    /// copied whole.
    mutating func quoted(_ s: String) {
        var s = s
        byte(0x22)
        s.withUTF8 { bytes in
            var start = 0
            for i in 0..<bytes.count {
                let value = bytes[i]
                guard value < 0x20 || value == 0x22 || value == 0x5C || value == 0x7F else { continue }
                raw(UnsafeBufferPointer(rebasing: bytes[start..<i]))
                start = i + 1
                byte(0x5C)
                switch value {
                case 0x22: byte(0x22)
                case 0x5C: byte(0x5C)
                case 0x0A: byte(0x6E)
                case 0x0D: byte(0x72)
                case 0x09: byte(0x74)
                default:
                    let hex: StaticString = "0123456789abcdef"
                    raw("u00")
                    byte(hex.utf8Start[Int(value >> 4)])
                    byte(hex.utf8Start[Int(value & 0xF)])
                }
            }
            raw(UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        byte(0x22)
    }
}
