/// Parses expression text into an `Expression` with spans.
///
/// Precedence, lowest first: `||`, `&&`, `==`/`!=`, `!`, then literals, references,
/// function calls and parentheses.
///
/// Nesting is limited to `maximumDepth` levels, counting each `(`, each `!` and each binary
/// operator above an operand (so a flat `a && b && …` chain counts one level per `&&`).
/// The parser, the evaluator and every walk over the tree recurse once per level, so the
/// limit keeps a hostile or generated expression from overflowing the stack.
public struct ExpressionParser {
    /// The deepest expression accepted, as compilers limit bracket nesting.
    public static let maximumDepth = 256

    /// Maps a scalar offset in the expression text to a source location.
    public typealias Locator = (Int) -> SourceLocation

    /// A syntax error with its span.
    public struct Failure: Error, Sendable {
        public var message: String
        public var span: SourceSpan
        public var help: String?
    }

    let scalars: [Unicode.Scalar]
    let locate: Locator
    var tokens: [ExpressionToken] = []
    var position = 0
    /// Open `(` and `!` around the token being parsed: how deep the parser has recursed.
    var nesting = 0

    /// A parsed subexpression with the depth of its tree (a leaf is 1).
    struct Parsed {
        var expression: Expression
        var depth: Int

        /// A literal, reference or call: one level.
        static func leaf(_ expression: Expression) -> Parsed { Parsed(expression: expression, depth: 1) }
    }

    /// Parses `text`; `locate` turns offsets into locations for spans.
    public static func parse(_ text: String, locate: @escaping Locator) -> Result<Expression, Failure> {
        var parser = ExpressionParser(scalars: Array(text.unicodeScalars), locate: locate)
        do {
            return .success(try parser.parseAll())
        } catch {
            return .failure(error)
        }
    }

    init(scalars: [Unicode.Scalar], locate: @escaping Locator) {
        self.scalars = scalars
        self.locate = locate
    }

    func span(_ start: Int, _ end: Int) -> SourceSpan {
        let from = locate(start)
        let to = locate(max(end, start))
        return SourceSpan(start: from, end: to.line == from.line ? max(to, SourceLocation(line: from.line, column: from.column + 1)) : to)
    }

    mutating func parseAll() throws(Failure) -> Expression {
        do {
            tokens = try ExpressionLexer(scalars).tokens()
        } catch {
            // `format("{0}", x)`: the call to a function flow does not have is the problem
            // to report, not a character of its arguments.
            let before = error.before
            for (k, token) in before.enumerated() where k + 1 < before.count && before[k + 1].kind == .leftParen {
                guard case .identifier(let name) = token.kind, k == 0 || before[k - 1].kind != .dot,
                      !Self.isLiteralName(name), !Expression.functions.contains(name) else { continue }
                throw unknownFunction(name, span: span(token.start, Self.callEnd(before, open: k + 1) ?? before[k + 1].end))
            }
            throw Failure(message: error.message, span: span(error.start, error.end), help: error.help)
        }
        if case .end = tokens[0].kind {
            throw Failure(message: "empty expression", span: span(0, max(scalars.count, 1)), help: "write an expression between `${{` and `}}`")
        }
        let expression = try parseOr().expression
        let token = tokens[position]
        if token.kind != .end {
            throw Failure(message: "unexpected \(describe(token)) after the expression", span: span(token.start, token.end),
                          help: token.kind == .identifier("and") || token.kind == .identifier("or") ? "use `&&` or `||`" : nil)
        }
        return expression
    }

    /// The error for passing `maximumDepth` at `token`.
    func tooDeep(at token: ExpressionToken) -> Failure {
        Failure(message: "expression nested more than \(Self.maximumDepth) levels deep", span: span(token.start, token.end),
                help: "each `(`, `!`, `&&`, `||`, `==` and `!=` above an operand is a level; split the condition")
    }

    /// A binary node over `left` and `right`, unless it would pass the depth limit.
    func binary(_ op: Expression.Operator, _ left: Parsed, _ right: Parsed, at token: ExpressionToken) throws(Failure) -> Parsed {
        let depth = max(left.depth, right.depth) + 1
        guard depth <= Self.maximumDepth else { throw tooDeep(at: token) }
        return Parsed(expression: .binary(op, left.expression, right.expression,
                                          SourceSpan(start: left.expression.span.start, end: right.expression.span.end)),
                      depth: depth)
    }

    mutating func parseOr() throws(Failure) -> Parsed {
        var left = try parseAnd()
        while tokens[position].kind == .or {
            let token = tokens[position]
            position += 1
            left = try binary(.or, left, try parseAnd(), at: token)
        }
        return left
    }

    mutating func parseAnd() throws(Failure) -> Parsed {
        var left = try parseEquality()
        while tokens[position].kind == .and {
            let token = tokens[position]
            position += 1
            left = try binary(.and, left, try parseEquality(), at: token)
        }
        return left
    }

    mutating func parseEquality() throws(Failure) -> Parsed {
        var left = try parseUnary()
        while tokens[position].kind == .equal || tokens[position].kind == .notEqual {
            let token = tokens[position]
            position += 1
            left = try binary(token.kind == .equal ? .equal : .notEqual, left, try parseUnary(), at: token)
        }
        return left
    }

    mutating func parseUnary() throws(Failure) -> Parsed {
        let token = tokens[position]
        if token.kind == .not {
            // Checked before recursing: 200,000 `!` must not reach the stack's end.
            guard nesting < Self.maximumDepth else { throw tooDeep(at: token) }
            position += 1
            nesting += 1
            let inner = try parseUnary()
            nesting -= 1
            guard inner.depth < Self.maximumDepth else { throw tooDeep(at: token) }
            return Parsed(expression: .not(inner.expression, SourceSpan(start: locate(token.start), end: inner.expression.span.end)),
                          depth: inner.depth + 1)
        }
        return try parsePrimary()
    }

    mutating func parsePrimary() throws(Failure) -> Parsed {
        let token = tokens[position]
        switch token.kind {
        case .string(let s):
            position += 1
            return .leaf(.literal(.string(s), span(token.start, token.end)))
        case .number(let n):
            position += 1
            return .leaf(.literal(.number(n), span(token.start, token.end)))
        case .leftParen:
            guard nesting < Self.maximumDepth else { throw tooDeep(at: token) }
            position += 1
            nesting += 1
            let inner = try parseOr()
            nesting -= 1
            guard tokens[position].kind == .rightParen else {
                let t = tokens[position]
                throw Failure(message: "expected `)`, found \(describe(t))", span: span(t.start, t.end),
                              help: "the `(` at column \(locate(token.start).column) is not closed")
            }
            position += 1
            // Parentheses count as a level too, so the limit is one count along any path.
            guard inner.depth < Self.maximumDepth else { throw tooDeep(at: token) }
            return Parsed(expression: inner.expression, depth: inner.depth + 1)
        case .identifier(let name):
            position += 1
            switch name {
            case "true": return .leaf(.literal(.bool(true), span(token.start, token.end)))
            case "false": return .leaf(.literal(.bool(false), span(token.start, token.end)))
            case "null": return .leaf(.literal(.null, span(token.start, token.end)))
            default: break
            }
            if tokens[position].kind == .leftParen {
                let open = tokens[position]
                position += 1
                guard Expression.functions.contains(name) else {
                    // With or without arguments (`hashFiles('go.sum')`, `contains(a, 'b')`):
                    // the function does not exist. Underline the call to its `)`.
                    throw unknownFunction(name, span: span(token.start, Self.callEnd(tokens, open: position - 1) ?? open.end))
                }
                guard tokens[position].kind == .rightParen else {
                    let t = tokens[position]
                    // `success(` (or `success( && x`) never closes the call: the `)` is
                    // missing, not an argument too many.
                    guard Self.callEnd(tokens, open: position - 1) != nil else {
                        throw Failure(message: "expected `)`, found \(describe(t))", span: span(t.start, max(t.end, t.start + 1)),
                                      help: "the `(` at column \(locate(open.start).column) is not closed")
                    }
                    throw Failure(message: "`\(name)()` takes no arguments", span: span(open.start, t.end))
                }
                let close = tokens[position]
                position += 1
                return .leaf(.call(Located(name, span(token.start, token.end)), span(token.start, close.end)))
            }
            var path = [Located(name, span(token.start, token.end))]
            var end = token.end
            while tokens[position].kind == .dot {
                position += 1
                let t = tokens[position]
                guard case .identifier(let part) = t.kind else {
                    throw Failure(message: "expected a name after `.`, found \(describe(t))", span: span(t.start, t.end))
                }
                position += 1
                path.append(Located(part, span(t.start, t.end)))
                end = t.end
            }
            return .leaf(.reference(path, span(token.start, end)))
        default:
            // `${{ .VERSION }}`: go-task's `{{.VERSION}}` half converted.
            if token.kind == .dot, case .identifier(let name) = tokens[position + 1].kind {
                throw Failure(message: "expected a value, found \(describe(token))", span: span(token.start, token.end),
                              help: "flow's references have no leading `.`: `vars.\(name)` (a parameter: `params.\(name)`)")
            }
            throw Failure(message: "expected a value, found \(describe(token))", span: span(token.start, max(token.end, token.start + 1)))
        }
    }

    /// A call of a function that is not one of `Expression.functions`.
    func unknownFunction(_ name: String, span: SourceSpan) -> Failure {
        Failure(message: "unknown function `\(name)()`", span: span,
                help: Suggestion.closest(to: name, in: Expression.functions).map { "did you mean `\($0)()`?" }
                    ?? "the functions are success(), failure(), always() and cancelled()")
    }

    /// The end offset of the `)` that closes the `(` at `tokens[open]`, if there is one.
    static func callEnd(_ tokens: [ExpressionToken], open: Int) -> Int? {
        var depth = 0
        for token in tokens[open...] {
            if token.kind == .leftParen { depth += 1 }
            if token.kind == .rightParen { depth -= 1 }
            if depth == 0 { return token.end }
        }
        return nil
    }

    /// `true`, `false` and `null`: literals, never calls.
    static func isLiteralName(_ name: String) -> Bool {
        name == "true" || name == "false" || name == "null"
    }

    func describe(_ token: ExpressionToken) -> String {
        switch token.kind {
        case .end: return "the end of the expression"
        case .identifier(let s): return "`\(s)`"
        case .string: return "a string"
        case .number: return "a number"
        default: return "`" + String(scalars: scalars[token.start..<min(token.end, scalars.count)]) + "`"
        }
    }
}
