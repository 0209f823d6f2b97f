/// A range of source text: `start` inclusive, `end` exclusive.
public struct SourceSpan: Hashable, Sendable {
    public var start: SourceLocation
    public var end: SourceLocation

    public init(start: SourceLocation, end: SourceLocation) {
        self.start = start
        self.end = max(start, end)
    }

    /// A span covering `length` scalars on one line.
    public init(line: Int, column: Int, length: Int) {
        start = SourceLocation(line: line, column: column)
        end = SourceLocation(line: line, column: column + max(length, 0))
    }

    /// The span of a point (used when only a start position is known).
    public static func point(_ location: SourceLocation) -> SourceSpan {
        SourceSpan(start: location, end: location)
    }
}
