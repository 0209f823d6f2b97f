/// A value together with the span of source text it came from.
public struct Located<Value> {
    public var value: Value
    public var span: SourceSpan

    public init(_ value: Value, _ span: SourceSpan) {
        self.value = value
        self.span = span
    }
}

extension Located: Sendable where Value: Sendable {}
extension Located: Equatable where Value: Equatable {}
