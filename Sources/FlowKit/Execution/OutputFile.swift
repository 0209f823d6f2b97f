/// Parses what a step wrote to `$FLOW_OUTPUT`: `key=value` lines and `key<<DELIM` blocks.
public enum OutputFile {
    /// A malformed line, with its 1-based number.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "FLOW_OUTPUT line \(line): \(message)" }
    }

    public static func parse(_ text: String) throws(Failure) -> [String: String] {
        var outputs: [String: String] = [:]
        // Split on the byte, not the Character: Swift reads `\r\n` as one Character, so a
        // Character split would leave CRLF files (written on Windows, or by `printf …\r\n`)
        // as one long line. A line's trailing `\r` is dropped.
        var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { bytes -> Substring in
            Substring(bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes)
        }
        if lines.last == "" { lines.removeLast() }
        var i = 0
        while i < lines.count {
            let line = lines[i]
            i += 1
            if line.isEmpty { continue }
            if let heredoc = line.firstRange(of: "<<"),
               line.firstIndex(of: "=").map({ $0 > heredoc.lowerBound }) ?? true {
                let key = String(line[..<heredoc.lowerBound])
                let delimiter = String(line[heredoc.upperBound...])
                guard WorkflowParser.isIdentifier(key) else { throw Failure(line: i, message: "invalid output key `\(key)`") }
                guard !delimiter.isEmpty else { throw Failure(line: i, message: "`\(key)<<` needs a delimiter") }
                // Reported at the `key<<DELIM` line: the end of the file, where the search
                // stopped, says nothing about which value was left open.
                let opening = i
                var value: [Substring] = []
                var closed = false
                while i < lines.count {
                    let next = lines[i]
                    i += 1
                    if next == delimiter { closed = true; break }
                    value.append(next)
                }
                guard closed else {
                    throw Failure(line: opening, message: "the value of `\(key)` is not closed: no line `\(delimiter)` follows")
                }
                outputs[key] = value.joined(separator: "\n")
            } else if let equals = line.firstIndex(of: "=") {
                let key = String(line[..<equals])
                guard WorkflowParser.isIdentifier(key) else { throw Failure(line: i, message: "invalid output key `\(key)`") }
                outputs[key] = String(line[line.index(after: equals)...])
            } else {
                throw Failure(line: i, message: "expected `key=value` or `key<<DELIMITER`")
            }
        }
        return outputs
    }
}
