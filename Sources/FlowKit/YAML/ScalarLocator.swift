/// Maps an offset in a scalar's value back to its location in the source text.
///
/// Exact for single-line scalars (plain, single- and double-quoted, with escapes) and for
/// literal block scalars (`|`); for folded and multi-line flow scalars, whose line breaks
/// YAML rewrites, it points at the scalar's first character.
public struct ScalarLocator: Sendable {
    /// For single-line scalars: the source column of each value scalar (plus one past the end).
    private let columns: [Int]?
    private let line: Int
    /// For literal blocks: the first content line and the indentation.
    private let blockIndent: Int?
    private let lineStarts: [Int]
    private let fallback: SourceLocation

    public init(node: YAMLNode, file: SourceFile) {
        fallback = node.span.start
        line = node.span.start.line
        let value = Array(node.value.unicodeScalars)
        let source = Array(file.lineText(node.span.start.line).unicodeScalars)
        let startIndex = node.span.start.column - 1
        let singleLine = node.span.end.line == node.span.start.line
            || (node.span.end.line == node.span.start.line + 1 && node.span.end.column == 1)
        switch node.style {
        case .plain where singleLine:
            columns = Array((0...value.count).map { node.span.start.column + $0 })
            blockIndent = nil
            lineStarts = []
        case .singleQuoted where singleLine, .doubleQuoted where singleLine:
            var result: [Int] = []
            var i = startIndex + 1
            let double = node.style == .doubleQuoted
            while result.count < value.count, i < source.count {
                result.append(i + 1)
                if !double, source[i] == "'", i + 1 < source.count, source[i + 1] == "'" {
                    i += 2
                } else if double, source[i] == "\\", i + 1 < source.count {
                    switch source[i + 1] {
                    case "x": i += 4
                    case "u": i += 6
                    case "U": i += 10
                    default: i += 2
                    }
                } else {
                    i += 1
                }
            }
            while result.count <= value.count { result.append(i + 1) }
            columns = result
            blockIndent = nil
            lineStarts = []
        case .literal:
            columns = nil
            // The value's lines are the source lines after the header, less the indentation.
            var indent = 0
            var probe = node.span.start.line + 1
            while probe <= file.lineCount {
                let text = file.lineBytes(probe)
                if text.contains(where: { $0 != UInt8(ascii: " ") }) {
                    indent = text.prefix { $0 == UInt8(ascii: " ") }.count
                    break
                }
                probe += 1
            }
            blockIndent = indent
            var starts = [0]
            for (i, scalar) in value.enumerated() where scalar == "\n" { starts.append(i + 1) }
            lineStarts = starts
        default:
            columns = nil
            blockIndent = nil
            lineStarts = []
        }
    }

    /// The source location of the value scalar at `offset`.
    public func location(ofValueOffset offset: Int) -> SourceLocation {
        if let columns {
            let index = min(max(offset, 0), columns.count - 1)
            return SourceLocation(line: line, column: columns[index])
        }
        if let blockIndent {
            var low = 0, high = lineStarts.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
            }
            return SourceLocation(line: line + 1 + low, column: blockIndent + 1 + offset - lineStarts[low])
        }
        return fallback
    }
}
