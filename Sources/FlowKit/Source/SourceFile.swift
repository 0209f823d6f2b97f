/// The text of one workflow file, with the line index used to render diagnostics.
public final class SourceFile: Sendable {
    /// The path as the user gave it (diagnostics print it unchanged).
    public let path: String
    /// The raw bytes of the file.
    public let bytes: [UInt8]
    /// Byte offset of the start of every line (line 1 at index 0).
    private let lineStarts: [Int]

    public init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
        var starts = [0]
        starts.reserveCapacity(bytes.count / 32 + 1)
        bytes.withUnsafeBufferPointer { buffer in
            for i in 0..<buffer.count where buffer[i] == 0x0A {
                starts.append(i + 1)
            }
        }
        self.lineStarts = starts
    }

    public convenience init(path: String, text: String) {
        self.init(path: path, bytes: Array(text.utf8))
    }

    /// The number of lines (a final newline does not start a new line).
    public var lineCount: Int {
        if let last = lineStarts.last, last == bytes.count, lineStarts.count > 1 { return lineStarts.count - 1 }
        return lineStarts.count
    }

    /// The bytes of line `line` (1-based), without its line break.
    public func lineBytes(_ line: Int) -> ArraySlice<UInt8> {
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
