/// A token of the expression language, with the scalar offsets it spans.
struct ExpressionToken: Sendable {
    /// What a token is.
    enum Kind: Sendable, Equatable {
        case identifier(String)
        case string(String)
        case number(Double)
        case dot, leftParen, rightParen
        /// Valid nowhere: read so that `contains(a, 'b')` is reported as a call of a
        /// function flow does not have, not at its comma.
        case comma
        case equal, notEqual, and, or, not
        case end
    }

    var kind: Kind
    var start: Int
    var end: Int
}
