#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// Whether the text holds a NUL byte, which no C string (an argument, an environment
    /// variable, a path) can carry.
    ///
    /// `utf8.contains(0)` walks a generic iterator byte by byte (about 900 instructions for
    /// a step's `FLOW_OUTPUT` path, on the path to every spawn); a native string's bytes are
    /// contiguous, and `memchr` scans them vectorised.
    var containsNUL: Bool { containsByte(0) }

    /// Whether the text holds `byte` (a NUL, or an ASCII character such as `\n` or `/`),
    /// with `memchr` over a native string's contiguous bytes (see `containsNUL`).
    func containsByte(_ byte: UInt8) -> Bool {
        if let found = utf8.withContiguousStorageIfAvailable({ $0.isEmpty ? false : memchr($0.baseAddress!, Int32(byte), $0.count) != nil }) {
            return found
        }
        return utf8.contains(byte)
    }

    /// The text of `scalars`, encoded in one pass.
    ///
    /// `String(String.UnicodeScalarView(slice))` appends the scalars one by one through a
    /// generic path of the standard library that is not specialised for arrays: with names
    /// hundreds of characters long it was half the time `flow validate` took on a file of
    /// references to them.
    init(scalars: ArraySlice<Unicode.Scalar>) {
        self = scalars.withUnsafeBufferPointer { source in
            var count = 0
            for scalar in source { count += UTF8.width(scalar) }
            return String(unsafeUninitializedCapacity: count) { buffer in
                var at = 0
                for scalar in source {
                    let value = scalar.value
                    switch value {
                    case ..<0x80:
                        buffer[at] = UInt8(value)
                        at += 1
                    case ..<0x800:
                        buffer[at] = UInt8(0xC0 | value >> 6)
                        buffer[at + 1] = UInt8(0x80 | value & 0x3F)
                        at += 2
                    case ..<0x10000:
                        buffer[at] = UInt8(0xE0 | value >> 12)
                        buffer[at + 1] = UInt8(0x80 | value >> 6 & 0x3F)
                        buffer[at + 2] = UInt8(0x80 | value & 0x3F)
                        at += 3
                    default:
                        buffer[at] = UInt8(0xF0 | value >> 18)
                        buffer[at + 1] = UInt8(0x80 | value >> 12 & 0x3F)
                        buffer[at + 2] = UInt8(0x80 | value >> 6 & 0x3F)
                        buffer[at + 3] = UInt8(0x80 | value & 0x3F)
                        at += 4
                    }
                }
                return at
            }
        }
    }
}

extension String {
    /// The same text, scalar for scalar: what "identical" means for the values of a
    /// workflow (`==` in expressions, `allowed` values). Swift's `==` takes canonically
    /// equivalent strings as equal (`é` precomposed and `e` + a combining accent), which
    /// the shell, a file name and `[ "$a" = "$b" ]` tell apart.
    func isIdentical(to other: String) -> Bool {
        utf8.elementsEqual(other.utf8)
    }
}
