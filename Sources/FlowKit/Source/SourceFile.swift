#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The text of one workflow file, with the line index used to render diagnostics.
public final class SourceFile: Sendable {
    /// The path as the user gave it (diagnostics print it unchanged).
    public let path: String
    /// The raw bytes of the file.
    public let bytes: [UInt8]
    /// Byte offset of the start of every line (line 1 at index 0), built at the first
    /// question about lines: spans come with their line and column from libyaml, so a
    /// valid file without expressions is read and checked without it (measured on 100,000
    /// steps: 25 M instructions and a 1 MB array, 1.4% of `flow validate`).
    private let lineIndex = Mutex<[Int]?>(nil)

    /// The last column found by `byteIndex(line:column:)`, where the next search starts
    /// when it is on the same line and not past the column sought.
    private let columnCursor = Mutex<(line: Int, column: Int, index: Int)>((0, 0, 0))

    /// Whether the file was read from standard input (`-`), which `path` names as
    /// `<stdin>`: decided by where it came from, not by the name, which a file may have too.
    public let isStandardInput: Bool

    public init(path: String, bytes: [UInt8], isStandardInput: Bool = false) {
        self.path = path
        self.bytes = bytes
        self.isStandardInput = isStandardInput
    }

    private var lineStarts: [Int] {
        lineIndex.withLock { index in
            if let index { return index }
            let built = Self.lineStarts(of: bytes)
            index = built
            return built
        }
    }

    /// Line starts after exactly the line breaks libyaml counts (its marks give every
    /// span's line): LF, CR LF, a lone CR, and U+0085, U+2028, U+2029. A UTF-8 byte order
    /// mark is not part of line 1 (libyaml skips it, and editors do not show it).
    /// memchr finds each LF (vectorised); the byte-by-byte scan runs only for files that
    /// hold a CR or a lead byte of the other breaks.
    private static func lineStarts(of bytes: [UInt8]) -> [Int] {
        var starts = [bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0]
        starts.reserveCapacity(bytes.count / 32 + 1)
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            let onlyLF = memchr(base, 0x0D, buffer.count) == nil && memchr(base, 0xC2, buffer.count) == nil
                && memchr(base, 0xE2, buffer.count) == nil
            if onlyLF {
                var offset = 0
                while offset < buffer.count, let found = memchr(base + offset, 0x0A, buffer.count - offset) {
                    offset = UnsafeRawPointer(found) - UnsafeRawPointer(base) + 1
                    starts.append(offset)
                }
                return
            }
            var i = starts[0]
            while i < buffer.count {
                let breakLength = lineBreakLength(buffer, at: i)
                if breakLength > 0 {
                    i += breakLength
                    starts.append(i)
                } else {
                    i += 1
                }
            }
        }
        return starts
    }

    /// The length in bytes of the line break at `i` (0 when there is none there).
    private static func lineBreakLength(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Int {
        switch b[i] {
        case 0x0A: return 1
        case 0x0D: return i + 1 < b.count && b[i + 1] == 0x0A ? 2 : 1
        case 0xC2: return i + 1 < b.count && b[i + 1] == 0x85 ? 2 : 0
        case 0xE2: return i + 2 < b.count && b[i + 1] == 0x80 && (b[i + 2] == 0xA8 || b[i + 2] == 0xA9) ? 3 : 0
        default: return 0
        }
    }

    /// The length of the line break that ends just before `end` (the start of a line).
    private func lineBreakLength(endingAt end: Int) -> Int {
        guard end > 0 else { return 0 }
        switch bytes[end - 1] {
        case 0x0A: return end >= 2 && bytes[end - 2] == 0x0D ? 2 : 1
        case 0x0D: return 1
        case 0x85: return 2
        case 0xA8, 0xA9: return 3
        default: return 0
        }
    }

    public convenience init(path: String, text: String) {
        self.init(path: path, bytes: Array(text.utf8))
    }

    /// The number of lines (a final newline does not start a new line).
    public var lineCount: Int {
        let lineStarts = self.lineStarts
        if let last = lineStarts.last, last == bytes.count, lineStarts.count > 1 { return lineStarts.count - 1 }
        return lineStarts.count
    }

    /// The bytes of line `line` (1-based), without its line break.
    public func lineBytes(_ line: Int) -> ArraySlice<UInt8> {
        let lineStarts = self.lineStarts
        guard line >= 1, line <= lineStarts.count else { return [] }
        let start = lineStarts[line - 1]
        let end = line < lineStarts.count ? lineStarts[line] - lineBreakLength(endingAt: lineStarts[line]) : bytes.count
        return bytes[start..<max(start, end)]
    }

    /// The line break that ends line `line` as it reads in a YAML scalar's value: LF for
    /// LF, CR LF, CR and U+0085 (libyaml normalises those), U+2028 or U+2029 as they are;
    /// nil when the line is the last and has none.
    public func lineBreak(after line: Int) -> Unicode.Scalar? {
        let lineStarts = self.lineStarts
        guard line >= 1, line < lineStarts.count else { return nil }
        let end = lineStarts[line]
        switch bytes[end - 1] {
        case 0xA8: return "\u{2028}"
        case 0xA9: return "\u{2029}"
        default: return "\n"
        }
    }

    /// The index in `bytes` of the character at `column` (1-based, in Unicode scalars) of
    /// `line`, or of the line's end when the line is shorter.
    ///
    /// Scalars are looked up in file order (a line's expressions one after the other), so
    /// the search goes on from the column found last: from the line's start each time, a
    /// generated line of 10,000 expressions took 8 s to validate (its 900 KB decoded for
    /// each of them).
    public func byteIndex(line: Int, column: Int) -> Int {
        let bytes = lineBytes(line)
        var (at, index) = columnCursor.withLock { cursor in
            cursor.line == line && cursor.column <= column && bytes.indices.contains(cursor.index)
                ? (cursor.column, cursor.index) : (1, bytes.startIndex)
        }
        while at < column, index < bytes.endIndex {
            index += 1
            while index < bytes.endIndex, bytes[index] & 0xC0 == 0x80 { index += 1 }
            at += 1
        }
        columnCursor.withLock { $0 = (line, at, index) }
        return index
    }

    /// Line `line` as text (invalid UTF-8 is replaced, so rendering never fails).
    public func lineText(_ line: Int) -> String {
        String(decoding: lineBytes(line), as: UTF8.self)
    }

    /// The location of byte `offset` (1-based line, column in Unicode scalars).
    public func location(ofByte offset: Int) -> SourceLocation {
        let lineStarts = self.lineStarts
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        let start = lineStarts[low]  // after a byte order mark on line 1
        var column = 1
        var i = start
        while i < offset, i < bytes.count {
            // Count scalars: continuation bytes do not start a new column.
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return SourceLocation(line: low + 1, column: column)
    }
}
