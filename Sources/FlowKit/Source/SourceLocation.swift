/// A 1-based line and column (in Unicode scalars) in a source file.
public struct SourceLocation: Hashable, Comparable, Sendable, CustomStringConvertible {
    // Stored as 32-bit numbers: every YAML node and parsed value carries a span of two
    // locations, and a 100,000-step workflow has about a million of them (16 bytes fewer
    // each; a file with more than 2^31 lines cannot be read into memory anyway).
    private var storedLine: Int32
    private var storedColumn: Int32

    public var line: Int {
        get { Int(storedLine) }
        set { storedLine = Int32(clamping: newValue) }
    }

    public var column: Int {
        get { Int(storedColumn) }
        set { storedColumn = Int32(clamping: newValue) }
    }

    public init(line: Int, column: Int) {
        storedLine = Int32(clamping: line)
        storedColumn = Int32(clamping: column)
    }

    public static func < (a: SourceLocation, b: SourceLocation) -> Bool {
        (a.storedLine, a.storedColumn) < (b.storedLine, b.storedColumn)
    }

    public var description: String { "\(line):\(column)" }
}
