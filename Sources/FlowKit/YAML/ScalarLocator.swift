/// Maps an offset in a scalar's value back to its location in the source text.
///
/// Exact for every style: plain, single- and double-quoted (escapes, and line folding when
/// they span lines), literal and folded block scalars (with or without an indentation
/// indicator). The source is read again by `ScalarScanner`; when what it reads differs from
/// libyaml's value (a rule it does not follow), every offset maps to the scalar's start.
public struct ScalarLocator: Sendable {
    /// For single-line scalars (most of them): the source column of each value scalar
    /// (plus one past the end), on `line`. Worked out directly from the line: the general
    /// reading took twice as long over a workflow with an expression in every step.
    private let columns: [Int]?
    private let line: Int
    /// For the others: the source location of each value scalar, plus one past the end.
    /// Both nil when the scalar's source could not be followed.
    private let locations: [SourceLocation]?
    private let fallback: SourceLocation

    public init(node: YAMLNode, file: SourceFile) {
        fallback = node.span.start
        line = node.span.start.line
        if let columns = Self.singleLineColumns(of: node, in: file) {
            self.columns = columns
            locations = nil
        } else {
            columns = nil
            locations = Self.locations(of: node, in: file)
        }
    }

    /// The columns of a plain or quoted scalar on one line, written without an anchor or
    /// tag before it; nil for any other.
    private static func singleLineColumns(of node: YAMLNode, in file: SourceFile) -> [Int]? {
        let singleLine = node.span.end.line == node.span.start.line
            || (node.span.end.line == node.span.start.line + 1 && node.span.end.column == 1)
        guard node.kind == .scalar, singleLine, node.span.start.column >= 1 else { return nil }
        let value = Array(node.value.unicodeScalars)
        // The scalar's own text, not its whole line: a generated line may hold thousands.
        // At least its first character, which says how it is written (an empty plain
        // scalar has an empty span).
        let line = node.span.start.line
        let startColumn = node.span.start.column
        let from = file.byteIndex(line: line, column: startColumn)
        let to = node.span.end.line == line
            ? file.byteIndex(line: line, column: max(node.span.end.column, startColumn + 1)) : file.lineBytes(line).endIndex
        // Index 0 of `source` is the scalar's first character, at column `startColumn`.
        let source = Array(String(decoding: file.bytes[from..<max(from, to)], as: UTF8.self).unicodeScalars)
        guard !source.isEmpty else { return nil }
        switch node.style {
        case .plain where source[0] != "&" && source[0] != "!":
            return Array((0...value.count).map { startColumn + $0 })
        case .doubleQuoted where source[0] == "!" && node.tag == nil && source.starts(with: value):
            // An unquoted negation (`if: !vars.deploy`) that `YAMLReader.textMeant` read as
            // its text: the value is the source as written, so a diagnostic inside it
            // (`unknown variable`) points at its place, as when it is quoted.
            return Array((0...value.count).map { startColumn + $0 })
        case .singleQuoted where source[0] == "'", .doubleQuoted where source[0] == "\"":
            var result: [Int] = []
            var i = 1
            let double = node.style == .doubleQuoted
            while result.count < value.count, i < source.count {
                result.append(startColumn + i)
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
            while result.count <= value.count { result.append(startColumn + i) }
            return result
        default:
            return nil
        }
    }

    private static func locations(of node: YAMLNode, in file: SourceFile) -> [SourceLocation]? {
        guard node.kind == .scalar, let scanner = ScalarScanner(file: file, span: node.span) else { return nil }
        let value = Array(node.value.unicodeScalars)
        func matching(_ output: ScalarScanner.Output?) -> [SourceLocation]? {
            guard let output, output.count == value.count,
                  zip(output, value).allSatisfy({ $0.0.scalar == $0.1 }) else { return nil }
            var result = output.map(\.location)
            // One past the end: right after the last scalar (on its line), or the start.
            let last = output.last.map { SourceLocation(line: $0.location.line, column: $0.location.column + 1) }
            result.append(last ?? node.span.start)
            return result
        }
        switch node.style {
        case .plain: return matching(scanner.plain())
        case .singleQuoted: return matching(scanner.quoted(double: false))
        case .doubleQuoted: return matching(scanner.quoted(double: true))
        case .literal, .folded:
            for indent in scanner.blockIndentCandidates() {
                if let found = matching(scanner.block(indent: indent)) { return found }
            }
            return nil
        case .flow, .block:
            return nil
        }
    }

    /// The source location of the value scalar at `offset`.
    public func location(ofValueOffset offset: Int) -> SourceLocation {
        if let columns { return SourceLocation(line: line, column: columns[min(max(offset, 0), columns.count - 1)]) }
        guard let locations else { return fallback }
        return locations[min(max(offset, 0), locations.count - 1)]
    }
}
