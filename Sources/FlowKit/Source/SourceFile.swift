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

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }

    private var lineStarts: [Int] {
        lineIndex.withLock { index in
            if let index { return index }
            let built = Self.lineStarts(of: bytes)
            index = built
            return built
        }
    }

    /// memchr finds each line break (vectorised) instead of a test per byte.
    private static func lineStarts(of bytes: [UInt8]) -> [Int] {
        var starts = [0]
        starts.reserveCapacity(bytes.count / 32 + 1)
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count, let found = memchr(base + offset, 0x0A, buffer.count - offset) {
                offset = UnsafeRawPointer(found) - UnsafeRawPointer(base) + 1
                starts.append(offset)
            }
        }
        return starts
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
        var end = line < lineStarts.count ? lineStarts[line] - 1 : bytes.count
        if end > start, bytes[end - 1] == 0x0D { end -= 1 }
        return bytes[start..<max(start, end)]
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
        let start = lineStarts[low]
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
