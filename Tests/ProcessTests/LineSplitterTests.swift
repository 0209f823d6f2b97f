@testable import FlowKit
import Testing

/// Lines out of arbitrarily chunked bytes.
struct LineSplitterTests {
    private func split(_ chunks: [String]) -> [String] {
        var splitter = LineSplitter()
        var lines: [String] = []
        for chunk in chunks {
            splitter.feed(Array(chunk.utf8)) { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        splitter.finish { lines.append(String(decoding: $0, as: UTF8.self)) }
        return lines
    }

    @Test func wholeLines() {
        #expect(split(["a\nb\n"]) == ["a", "b"])
        #expect(split(["\n\n"]) == ["", ""])
        #expect(split([]) == [])
        #expect(split([""]) == [])
    }

    @Test func crlf() {
        #expect(split(["a\r\nb\r\n"]) == ["a", "b"])
        #expect(split(["a\r", "\nb"]) == ["a", "b"], "\\r\\n split across chunks")
        #expect(split(["\r\n"]) == [""])
        #expect(split(["50%\r100%\n"]) == ["50%\r100%"], "a lone \\r is content")
    }

    @Test func partialLinesAreJoinedAndFlushed() {
        #expect(split(["ab", "c", "d\ne", "f"]) == ["abcd", "ef"])
        #expect(split(["abc"]) == ["abc"])
        #expect(split(["a", "", "\n"]) == ["a"])
    }

    @Test func everyChunkingGivesTheSameLines() {
        let text = "one\r\ntwo\n\nthree\rx\nlast"
        let expected = ["one", "two", "", "three\rx", "last"]
        let bytes = Array(text.utf8)
        for size in 1...bytes.count {
            var chunks: [String] = []
            var i = 0
            while i < bytes.count {
                chunks.append(String(decoding: bytes[i..<min(i + size, bytes.count)], as: UTF8.self))
                i += size
            }
            #expect(split(chunks) == expected, "chunk size \(size)")
        }
    }

    @Test func partialLineFlag() {
        var splitter = LineSplitter()
        splitter.feed(Array("x".utf8)) { _ in }
        #expect(splitter.hasPartialLine)
        splitter.feed(Array("\n".utf8)) { _ in }
        #expect(!splitter.hasPartialLine)
    }

    /// Runs of whole lines: every run ends in a newline, they add up to the input (plus a
    /// newline for an unterminated last line), and a chunk's inner lines come as one run.
    @Test func runsOfWholeLines() {
        let text = "one\r\ntwo\n\nthree\rx\nlast"
        let bytes = Array(text.utf8)
        for size in 1...bytes.count {
            var splitter = LineSplitter()
            var runs: [[UInt8]] = []
            var i = 0
            while i < bytes.count {
                Array(bytes[i..<min(i + size, bytes.count)]).withUnsafeBytes { chunk in
                    splitter.feedLines(chunk) { runs.append(Array($0)) }
                }
                i += size
            }
            splitter.finishLines { runs.append(Array($0)) }
            #expect(runs.allSatisfy { $0.last == 0x0A }, "chunk size \(size)")
            #expect(runs.flatMap { $0 } == bytes + [0x0A], "chunk size \(size)")
        }
        var splitter = LineSplitter()
        var runs = 0
        Array("a\nb\nc\nd".utf8).withUnsafeBytes { splitter.feedLines($0) { _ in runs += 1 } }
        #expect(runs == 1 && splitter.hasPartialLine)
    }
    /// A line without an end is handed out in pieces of `longestLine` rather than held
    /// whole: a step writing hundreds of megabytes without a newline made flow hold them
    /// all (600 MB of memory for a 200 MB line in `prefixed`). No byte is lost, none is
    /// held beyond the limit, and no piece ends inside a UTF-8 sequence.
    @Test func aLineWithoutEndIsHandedOutInPieces() {
        let limit = LineSplitter.longestLine
        var splitter = LineSplitter()
        var pieces: [[UInt8]] = []
        // "é" is two bytes: after one "x", every chunk boundary and the limit fall between
        // a lead byte and its continuation byte.
        let chunk = [UInt8(ascii: "x")] + Array(String(repeating: "é", count: 32 * 1024).utf8)
        var fed: [UInt8] = []
        for _ in 0..<40 {
            chunk.withUnsafeBytes { splitter.feedLines($0) { pieces.append(Array($0)) } }
            fed += chunk
        }
        #expect(pieces.count == 2, "\(pieces.map(\.count))")
        #expect(pieces.allSatisfy { $0.count <= limit + 1 && $0.count >= limit - 2 && $0.last == 0x0A })
        #expect(pieces.allSatisfy { String(validating: $0, as: UTF8.self) != nil }, "cut inside a UTF-8 sequence")
        splitter.finishLines { pieces.append(Array($0)) }
        #expect(pieces.flatMap { $0.dropLast() } == fed, "bytes lost or reordered")
        // A line that ends before the limit is whole, however it came.
        var whole = LineSplitter()
        var lines: [Int] = []
        let text = Array(repeating: UInt8(ascii: "y"), count: limit) + [0x0A]
        for start in stride(from: 0, to: text.count, by: 65_536) {
            Array(text[start..<min(start + 65_536, text.count)]).withUnsafeBytes { whole.feedLines($0) { lines.append($0.count) } }
        }
        #expect(lines == [limit + 1])
    }
}
