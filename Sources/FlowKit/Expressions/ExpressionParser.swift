/// Parses expression text into an `Expression` with spans.
///
/// Precedence, lowest first: `||`, `&&`, `==`/`!=`, `!`, then literals, references,
/// function calls and parentheses.
public struct ExpressionParser {
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
            throw Failure(message: error.message, span: span(error.start, error.end), help: error.help)
        }
        if case .end = tokens[0].kind {
            throw Failure(message: "empty expression", span: span(0, max(scalars.count, 1)), help: "write an expression between `${{` and `}}`")
        }
        let expression = try parseOr()
        let token = tokens[position]
        if token.kind != .end {
            throw Failure(message: "unexpected \(describe(token)) after the expression", span: span(token.start, token.end),
                          help: token.kind == .identifier("and") || token.kind == .identifier("or") ? "use `&&` or `||`" : nil)
        }
        return expression
    }

    mutating func parseOr() throws(Failure) -> Expression {
        var left = try parseAnd()
        while tokens[position].kind == .or {
            position += 1
            let right = try parseAnd()
            left = .binary(.or, left, right, SourceSpan(start: left.span.start, end: right.span.end))
        }
        return left
    }

    mutating func parseAnd() throws(Failure) -> Expression {
        var left = try parseEquality()
        while tokens[position].kind == .and {
            position += 1
            let right = try parseEquality()
            left = .binary(.and, left, right, SourceSpan(start: left.span.start, end: right.span.end))
        }
        return left
    }

    mutating func parseEquality() throws(Failure) -> Expression {
        var left = try parseUnary()
        while tokens[position].kind == .equal || tokens[position].kind == .notEqual {
            let op: Expression.Operator = tokens[position].kind == .equal ? .equal : .notEqual
            position += 1
            let right = try parseUnary()
            left = .binary(op, left, right, SourceSpan(start: left.span.start, end: right.span.end))
        }
        return left
    }

    mutating func parseUnary() throws(Failure) -> Expression {
        let token = tokens[position]
        if token.kind == .not {
            position += 1
            let inner = try parseUnary()
            return .not(inner, SourceSpan(start: locate(token.start), end: inner.span.end))
        }
        return try parsePrimary()
    }

    mutating func parsePrimary() throws(Failure) -> Expression {
        let token = tokens[position]
        switch token.kind {
        case .string(let s):
            position += 1
            return .literal(.string(s), span(token.start, token.end))
        case .number(let n):
            position += 1
            return .literal(.number(n), span(token.start, token.end))
        case .leftParen:
            position += 1
            let inner = try parseOr()
            guard tokens[position].kind == .rightParen else {
                let t = tokens[position]
                throw Failure(message: "expected `)`, found \(describe(t))", span: span(t.start, t.end),
                              help: "the `(` at column \(locate(token.start).column) is not closed")
            }
            position += 1
            return inner
        case .identifier(let name):
            position += 1
            switch name {
            case "true": return .literal(.bool(true), span(token.start, token.end))
            case "false": return .literal(.bool(false), span(token.start, token.end))
            case "null": return .literal(.null, span(token.start, token.end))
            default: break
            }
            if tokens[position].kind == .leftParen {
                let open = tokens[position]
                position += 1
                guard tokens[position].kind == .rightParen else {
                    let t = tokens[position]
                    throw Failure(message: "`\(name)()` takes no arguments", span: span(open.start, t.end))
                }
                let close = tokens[position]
                position += 1
                guard Expression.functions.contains(name) else {
                    throw Failure(message: "unknown function `\(name)()`", span: span(token.start, close.end),
                                  help: Suggestion.closest(to: name, in: Expression.functions).map { "did you mean `\($0)()`?" }
                                    ?? "the functions are success(), failure(), always() and cancelled()")
                }
                return .call(Located(name, span(token.start, token.end)), span(token.start, close.end))
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
            return .reference(path, span(token.start, end))
        default:
            throw Failure(message: "expected a value, found \(describe(token))", span: span(token.start, max(token.end, token.start + 1)))
        }
    }

    func describe(_ token: ExpressionToken) -> String {
        switch token.kind {
        case .end: return "the end of the expression"
        case .identifier(let s): return "`\(s)`"
        case .string: return "a string"
        case .number: return "a number"
        default: return "`" + String(String.UnicodeScalarView(scalars[token.start..<min(token.end, scalars.count)])) + "`"
        }
    }
}
