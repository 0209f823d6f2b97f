/// Shows text from a workflow (names, messages, source lines, file names) on a terminal
/// without letting it act there: every control character (C0, DEL, C1) is written as
/// `\u{1B}`, so an ESC in a key name cannot recolour or clear the screen, a CR cannot
/// overwrite the line, and a NUL cannot cut it. So are the bidirectional overrides and
/// isolates (U+202A–U+202E, U+2066–U+2069), which make a terminal that applies them show
/// a command in another order than it runs ("Trojan Source"), as rustc escapes them.
///
/// One convention for every text output (diagnostics, `flow plan`); JSON escapes in its
/// own way. File names that are not valid UTF-8 show their bad bytes as `\xE9` (see
/// `displayName(ofPathBytes:)`).
public enum ControlEscaping {
    /// Whether `scalar` is shown escaped: a control character (U+0000–U+001F, U+007F,
    /// U+0080–U+009F) or a bidirectional override or isolate (U+202A–U+202E, U+2066–U+2069).
    @inline(__always)
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (value >= 0x7F && value <= 0x9F)
            || (value >= 0x202A && value <= 0x202E) || (value >= 0x2066 && value <= 0x2069)
    }

    /// `scalar` as shown: itself, or `\u{X}` (hex, uppercase) for a control character.
    public static func escaped(_ scalar: Unicode.Scalar) -> String {
        isControl(scalar) ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(Character(scalar))
    }

    /// `text` with every control character escaped; `except` names ones to keep (a caller
    /// that escapes them in its own way, as GitHub commands do CR and LF).
    public static func escaped(_ text: String, except kept: Set<Unicode.Scalar> = []) -> String {
        // Fast path: most text has no control byte at all (C1 characters start with 0xC2,
        // the bidirectional ones with 0xE2). Scanned as contiguous bytes:
        // `utf8.contains(where:)` walks a generic iterator, which was a twentieth of
        // `flow plan`'s time on 100,000 steps.
        let mayHold = { (byte: UInt8) in byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xE2 }
        guard text.utf8.withContiguousStorageIfAvailable({ $0.contains(where: mayHold) }) ?? text.utf8.contains(where: mayHold)
        else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if isControl(scalar), !kept.contains(scalar) {
                out += escaped(scalar)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A file name given as raw bytes, as shown in messages: valid UTF-8 unchanged (control
    /// characters are escaped where it is printed), each byte of an invalid sequence as `\xE9`.
    public static func displayName(ofPathBytes bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var out = ""
        var i = 0
        while i < bytes.count {
            let length = validSequenceLength(bytes, at: i)
            if length > 0 {
                out += String(decoding: bytes[i..<(i + length)], as: UTF8.self)
                i += length
            } else {
                out += "\\x" + (bytes[i] < 0x10 ? "0" : "") + String(bytes[i], radix: 16, uppercase: true)
                i += 1
            }
        }
        return out
    }

    /// The length of the valid UTF-8 sequence at `i`, or 0 when the byte there starts none.
    private static func validSequenceLength(_ bytes: [UInt8], at i: Int) -> Int {
        let lead = bytes[i]
        let length: Int
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return 0
        }
        guard i + length <= bytes.count else { return 0 }
        return String(validating: bytes[i..<(i + length)], as: UTF8.self) == nil ? 0 : length
    }
}
