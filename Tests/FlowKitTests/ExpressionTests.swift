@testable import FlowKit
import Testing

/// The `${{ … }}` language: lexer, parser (with spans and precedence), templates and evaluator.
@Suite struct ExpressionTests {
    /// Offsets map to columns of line 1, starting at column 11 (as if after `print: ${{`).
    static func locate(_ offset: Int) -> FlowKit.SourceLocation { FlowKit.SourceLocation(line: 1, column: 11 + offset) }

    static func parse(_ text: String) throws -> Expression {
        try ExpressionParser.parse(text, locate: locate).get()
    }

    static func failure(_ text: String) -> ExpressionParser.Failure? {
        if case .failure(let f) = ExpressionParser.parse(text, locate: locate) { return f }
        return nil
    }

    /// Fully parenthesised form, to check the tree's shape.
    static func shape(_ e: Expression) -> String {
        switch e {
        case .literal(let v, _):
            if case .string(let s) = v { return "'\(s)'" }
            if case .null = v { return "null" }
            return v.description
        case .reference(let path, _): return path.map(\.value).joined(separator: ".")
        case .not(let inner, _): return "!" + shape(inner)
        case .binary(let op, let a, let b, _): return "(\(shape(a)) \(op.rawValue) \(shape(b)))"
        case .call(let name, _): return name.value + "()"
        }
    }

    // MARK: Lexer

    @Test func lexerTokensAndOffsets() throws {
        let tokens = try ExpressionLexer(Array("a.b-c == 'it''s' && !x || 1.5 != -2 (\t)".unicodeScalars)).tokens()
        let kinds = tokens.map(\.kind)
        #expect(kinds == [
            .identifier("a"), .dot, .identifier("b-c"), .equal, .string("it's"), .and, .not, .identifier("x"), .or,
            .number(1.5), .notEqual, .number(-2), .leftParen, .rightParen, .end,
        ])
        #expect(tokens.map(\.start) == [0, 1, 2, 6, 9, 17, 20, 21, 23, 26, 30, 33, 36, 38, 39])
        #expect(tokens[4].end == 16, "the string token covers both quotes")
    }

    @Test(arguments: [
        ("a = b", 2, "use `==` to compare"),
        ("a & b", 2, "use `&&`"),
        ("a | b", 2, "use `||`"),
        ("\"x\"", 0, "write 'text' instead of \"text\""),
        ("'open", 0, "close it with `'`"),
        ("a # b", 2, nil),
        ("1.2.3", 0, nil),
    ] as [(String, Int, String?)])
    func lexerErrors(text: String, offset: Int, help: String?) throws {
        let f = try #require(Self.failure(text))
        #expect(f.span.start.column == 11 + offset)
        #expect(f.help == help)
    }

    // MARK: Parser

    @Test(arguments: [
        ("a || b && c == d", "(a || (b && (c == d)))"),
        ("a && b || c", "((a && b) || c)"),
        ("(a || b) && c", "((a || b) && c)"),
        ("!a == b", "(!a == b)"),
        ("!(a == b)", "!(a == b)"),
        ("!!a", "!!a"),
        ("a == b != c", "((a == b) != c)"),
        ("a || b || c", "((a || b) || c)"),
        ("success() && steps.x.status == 'failed'", "(success() && (steps.x.status == 'failed'))"),
        ("true != null", "(true != null)"),
        ("  ((a))  ", "a"),
    ])
    func precedence(text: String, expected: String) throws {
        #expect(Self.shape(try Self.parse(text)) == expected)
    }

    @Test func spansOfNodes() throws {
        let e = try Self.parse("steps.build.outputs.v == 'x'")
        guard case .binary(.equal, let left, let right, let span) = e else { Issue.record("not ==: \(e)"); return }
        #expect(span.start.column == 11)
        #expect(span.end.column == 11 + 28)
        guard case .reference(let path, let refSpan) = left else { Issue.record("not a reference"); return }
        #expect(path.map(\.value) == ["steps", "build", "outputs", "v"])
        #expect(path.map(\.span.start.column) == [11, 17, 23, 31])
        #expect(path.map(\.span.end.column) == [16, 22, 30, 32])
        #expect(refSpan.end.column == 32)
        #expect(right.span.start.column == 11 + 25)
        let not = try Self.parse("  !x")
        #expect(not.span.start.column == 13)
        let call = try Self.parse("failure()")
        guard case .call(let name, let callSpan) = call else { Issue.record("not a call"); return }
        #expect(name.value == "failure")
        #expect(callSpan.end.column == 20)
    }

    @Test func referencesAndCallsAreCollected() throws {
        let e = try Self.parse("vars.a == env.B && (failure() || !steps.x.status)")
        #expect(e.references.map { $0.map(\.value).joined(separator: ".") } == ["vars.a", "env.B", "steps.x.status"])
        #expect(e.calls.map(\.value) == ["failure"])
    }

    @Test(arguments: [
        ("", 0),
        ("   ", 0),
        ("a b", 2),
        ("a and b", 2),
        ("(a", 2),
        ("a)", 1),
        ("a.", 2),
        ("a.1", 2),
        ("foo()", 0),
        ("success(x)", 7),
        ("== a", 0),
        ("a ==", 4),
        ("!", 1),
    ])
    func parserErrors(text: String, offset: Int) throws {
        let f = try #require(Self.failure(text), "`\(text)` should not parse")
        #expect(f.span.start.column == 11 + offset, "\(f.message)")
        #expect(f.span.end.column > f.span.start.column, "a failure covers at least one column")
    }

    @Test func unknownFunctionSuggestsTheClosest() throws {
        #expect(Self.failure("sucess()")?.help == "did you mean `success()`?")
        #expect(Self.failure("a b")?.help == nil)
        #expect(Self.failure("a and b")?.help == "use `&&` or `||`")
    }

    /// GitHub Actions' functions, with their arguments: "unknown function", as without
    /// them (not "takes no arguments", which implied it exists, nor an error at a comma or
    /// at a character of an argument), underlining the call to its `)` where it has one.
    @Test(arguments: [
        ("hashFiles('go.sum') != ''", "hashFiles", 0, 19),
        ("contains(env.LABELS, 'deploy')", "contains", 0, 30),
        ("x && startsWith(env.A, 'd')", "startsWith", 5, 27),
        ("format('{0}', env.A) == 'x'", "format", 0, 20),
        ("fromJSON(toJSON(a))", "fromJSON", 0, 19),
        ("format(\"{0}\", x)", "format", 0, 7),
        ("join(a.*, ',')", "join", 0, 5),
        ("contains(a, 'b'", "contains", 0, 9),
        ("foo(a) == \"x\"", "foo", 0, 6),
    ] as [(String, String, Int, Int)])
    func unknownFunctionsWithArguments(text: String, name: String, start: Int, end: Int) throws {
        let f = try #require(Self.failure(text))
        #expect(f.message == "unknown function `\(name)()`")
        #expect(f.help == "the functions are success(), failure(), always() and cancelled()")
        #expect(f.span.start.column == 11 + start && f.span.end.column == 11 + end, "\(f.span)")
        // A known function still takes no arguments; a comma elsewhere is unexpected.
        #expect(Self.failure("success(1)")?.message == "`success()` takes no arguments")
        #expect(Self.failure("a, b")?.message == "unexpected `,` after the expression")
    }

    @Test(arguments: ["a == b", "!(a || b)", "(a || b) && c", "a && b || c", "!a", "'it''s' == x", "null", "1.5 != 2"])
    func textRoundTrips(text: String) throws {
        let e = try Self.parse(text)
        #expect(e.text == text)
        #expect(Self.shape(try Self.parse(e.text)) == Self.shape(e))
    }

    @Test(arguments: ["a == (b == c)", "a != (b == c)"])
    func textKeepsParenthesesOnTheRightOfAnOperatorOfEqualPrecedence(text: String) throws {
        let e = try Self.parse(text)
        let reparsed = try Self.parse(e.text)
        #expect(Self.shape(reparsed) == Self.shape(e))
    }

    // MARK: Templates

    // MARK: Depth limit

    /// `n` operands joined by `op`: a flat chain.
    static func chain(_ operand: String, _ op: String, _ n: Int) -> String {
        Array(repeating: operand, count: n).joined(separator: " \(op) ")
    }

    /// `leaf` inside `n` copies of `open` (and as many `close`).
    static func nested(_ open: String, _ n: Int, _ leaf: String, _ close: String = "") -> String {
        String(repeating: open, count: n) + leaf + String(repeating: close, count: n)
    }

    /// (text, offset of the token where the limit is passed); a chain operand with its
    /// operator is 5 characters, so the 256th operator is at 256 × 5 − 3.
    static let tooDeep: [(String, Int)] = [
        (nested("(", 10_000, "a", ")"), 256),
        (nested("!", 200_000, "a"), 256),
        (chain("a", "&&", 100_000), 256 * 5 - 3),
        (chain("a", "||", 50_000), 256 * 5 - 3),
        (chain("a", "==", 257), 256 * 5 - 3),
        ("(" + chain("a", "&&", 256) + ")", 0),
    ]

    /// Deep nesting used to overflow the stack (parser, evaluator, printer). Now the parser
    /// stops at `maximumDepth` levels: each `(`, `!` and operator above an operand is one.
    @Test(arguments: tooDeep)
    func nestingBeyondTheLimitIsASyntaxError(text: String, offset: Int) throws {
        let failure = try #require(Self.failure(text))
        #expect(failure.message.contains("\(ExpressionParser.maximumDepth)"))
        #expect(failure.span.start == Self.locate(offset))
    }

    static let deepestAccepted: [String] = [
        nested("(", 255, "true", ")"),
        nested("!", 255, "true"),
        chain("true", "&&", 256),
        chain("false", "||", 256),
        "!(" + chain("true", "&&", 254) + ")",
    ]

    /// Exactly at the limit everything still works, down to evaluation and printing.
    @Test(arguments: deepestAccepted)
    func nestingUpToTheLimitParsesEvaluatesAndPrints(text: String) throws {
        let expression = try Self.parse(text)
        #expect(!expression.text.isEmpty)
        #expect(expression.references.isEmpty)
        _ = try Self.evaluate(text)
    }

    @Test func templateParts() throws {
        let (t, failures) = Template.parse("a ${{ x }} b ${{y}}${{ '}}' }}", span: SourceSpan(line: 1, column: 1, length: 1),
                                           locate: { FlowKit.SourceLocation(line: 1, column: 1 + $0) })
        #expect(failures.isEmpty)
        #expect(!t.isLiteral)
        #expect(t.expressions.count == 3)
        var sources: [String] = []
        var spans: [String] = []
        var texts: [String] = []
        for part in t.parts {
            switch part {
            case .text(let s): texts.append(s)
            case .expression(_, let source, let span):
                sources.append(source)
                spans.append("\(span.start.column)-\(span.end.column)")
            }
        }
        #expect(texts == ["a ", " b "])
        #expect(sources == ["x", "y", "'}}'"])
        #expect(spans == ["3-11", "14-20", "20-31"])
    }

    /// The text parts and expression sources keep every kind of character (1 to 4 UTF-8
    /// bytes), around good, bad and unterminated expressions.
    @Test func templatePartsKeepTheirText() {
        let (t, failures) = Template.parse("é€ ${{ 'naïve' }}𝄞 ${{ = }}ü ${{ x", span: SourceSpan(line: 1, column: 1, length: 1),
                                           locate: { FlowKit.SourceLocation(line: 1, column: 1 + $0) })
        #expect(failures.count == 2)
        let parts = t.parts.map { part -> String in
            switch part {
            case .text(let s): return "text:" + s
            case .expression(_, let source, _): return "expr:" + source
            }
        }
        #expect(parts == ["text:é€ ", "expr:'naïve'", "text:𝄞 ", "text:${{ = }}", "text:ü ${{ x"])
        #expect(String(scalars: Array("aé€𝄞\u{0}".unicodeScalars)[...]) == "aé€𝄞\u{0}")
        #expect(String(scalars: [][...]) == "")
    }

    @Test func literalTemplate() {
        let (t, failures) = Template.parse("no expressions $ { {", span: SourceSpan(line: 1, column: 1, length: 1),
                                           locate: { FlowKit.SourceLocation(line: 1, column: 1 + $0) })
        #expect(failures.isEmpty)
        #expect(t.isLiteral)
        #expect(t.raw == "no expressions $ { {")
    }

    @Test func templateCollectsEveryFailure() {
        let (t, failures) = Template.parse("${{ = }} ok ${{ x }} ${{ ( }} ${{ y", span: SourceSpan(line: 1, column: 1, length: 1),
                                           locate: { FlowKit.SourceLocation(line: 1, column: 1 + $0) })
        #expect(failures.map(\.span.start.column) == [5, 28, 31])
        #expect(t.expressions.count == 1, "the good expression survives")
    }

    // MARK: Evaluator

    /// A context that knows a few values and records which references were looked at.
    final class Recording: ExpressionEvaluator.Context, @unchecked Sendable {
        var values: [String: ExpressionValue]
        var looked: [String] = []
        var statuses: [String: Bool] = [:]
        init(_ values: [String: ExpressionValue]) { self.values = values }
        func value(of path: [String]) -> ExpressionValue? {
            let key = path.joined(separator: ".")
            looked.append(key)
            return values[key]
        }
        func status(_ function: String) -> Bool? { statuses[function] }
    }

    static func evaluate(_ text: String, _ context: Recording = Recording([:])) throws -> ExpressionValue? {
        ExpressionEvaluator.evaluate(try parse(text), in: context)
    }

    @Test func truthiness() {
        #expect(!ExpressionValue.bool(false).isTruthy)
        #expect(!ExpressionValue.null.isTruthy)
        #expect(!ExpressionValue.number(0).isTruthy)
        #expect(!ExpressionValue.number(.nan).isTruthy)
        #expect(!ExpressionValue.string("").isTruthy)
        #expect(ExpressionValue.string("false").isTruthy, "a non-empty string is truthy, even 'false'")
        #expect(ExpressionValue.string("0").isTruthy)
        #expect(ExpressionValue.number(-1).isTruthy)
        #expect(ExpressionValue.bool(true).isTruthy)
    }

    @Test(arguments: [
        ("'a' == 'a'", true), ("'a' == 'A'", false), ("1 == '1'", true), ("'1.0' == 1", true), ("' 2 ' == 2", true),
        ("'x' == 0", false), ("null == ''", true), ("'' == null", true), ("null == 0", false), ("null == false", false),
        ("true == 'true'", true), ("false == 'False'", false), ("true == 1", false), ("1 != 2", true), ("null != null", false),
        ("1.5 == 1.50", true), ("'.5' == 0.5", true), ("'+3' == 3", true), ("'1e3' == 1000", true), ("'-0' == 0", true),
        // Only decimal numbers: `Double(_:)` alone took hexadecimal and words (`'0x1p3' == 8`).
        ("'0x1p3' == 8", false), ("'0x10' == 16", false), ("'nan' != 0", true),
        ("'1e' == 1", false), ("'.' == 0", false), ("'1 2' == 1", false),
        // Identical means the same scalars: precomposed `é` is not `e` + a combining accent,
        // though Swift's `==` calls them equal (canonical equivalence).
        ("'\u{E9}' == 'e\u{301}'", false), ("'\u{E9}' != 'e\u{301}'", true), ("'\u{E9}' == '\u{E9}'", true),
    ])
    func looseEquality(text: String, expected: Bool) throws {
        #expect(try Self.evaluate(text) == .bool(expected))
    }

    @Test func andOrReturnOperandsAndShortCircuit() throws {
        let context = Recording(["vars.a": .string(""), "vars.b": .string("b")])
        #expect(try Self.evaluate("vars.a && vars.b", context) == .string(""))
        #expect(context.looked == ["vars.a"], "&& stops at a falsy left side")
        context.looked = []
        #expect(try Self.evaluate("vars.b || vars.a", context) == .string("b"))
        #expect(context.looked == ["vars.b"], "|| stops at a truthy left side")
        context.looked = []
        #expect(try Self.evaluate("vars.a || vars.b", context) == .string("b"))
        #expect(context.looked == ["vars.a", "vars.b"])
        #expect(try Self.evaluate("vars.b && 'x'", context) == .string("x"))
        #expect(try Self.evaluate("!vars.a", context) == .bool(true))
        #expect(try Self.evaluate("!!vars.b", context) == .bool(true))
    }

    @Test func unknownValuesStayUnknownUnlessShortCircuited() throws {
        let context = Recording(["vars.t": .bool(true)])
        #expect(try Self.evaluate("vars.unknown", context) == nil)
        #expect(try Self.evaluate("vars.unknown == 'x'", context) == nil)
        #expect(try Self.evaluate("!vars.unknown", context) == nil)
        #expect(try Self.evaluate("vars.unknown && false", context) == nil)
        #expect(try Self.evaluate("false && vars.unknown", context) == .bool(false))
        #expect(try Self.evaluate("vars.t || vars.unknown", context) == .bool(true))
        #expect(try Self.evaluate("vars.t && vars.unknown", context) == nil)
    }

    @Test func statusFunctionsComeFromTheContext() throws {
        let context = Recording([:])
        context.statuses = ["success": false, "failure": true, "always": true]
        #expect(try Self.evaluate("failure() && always()", context) == .bool(true))
        #expect(try Self.evaluate("success()", context) == .bool(false))
        #expect(try Self.evaluate("cancelled()", context) == nil)
    }

    /// A number literal's whole part is at most 2^53, where doubles stop holding every
    /// whole number: past it a literal would be read as another number (or `inf`).
    @Test(arguments: [
        ("9007199254740992", true), ("-9007199254740992", true), ("0009007199254740992.75", true), ("1.5", true),
        ("9007199254740993", false), ("-9007199254740993", false), ("10000000000000000", false),
        ("123456789012345678", false), ("100000000000000000000.0", false), (String(repeating: "9", count: 400), false),
    ])
    func numberLiteralsUpTo2To53(text: String, accepted: Bool) throws {
        if accepted {
            _ = try Self.parse(text)
        } else {
            let f = try #require(Self.failure(text))
            #expect(f.message.hasSuffix(" is too large") && f.message.count < 60, "\(f.message)")
            #expect(f.span.start.column == 11 && f.span.end.column == 11 + text.count)
        }
    }

    @Test func valuesAsText() {
        #expect(ExpressionValue.number(3).description == "3")
        #expect(ExpressionValue.number(-2).description == "-2")
        #expect(ExpressionValue.number(9_007_199_254_740_992).description == "9007199254740992")
        #expect(ExpressionValue.number(1e15).description == "1000000000000000")
        #expect(ExpressionValue.number(-0.0).description == "0")
        #expect(ExpressionValue.number(1.5).description == "1.5")
        // As JavaScript writes numbers: plain decimals down to 0.000001, then an exponent.
        #expect(ExpressionValue.number(0.00001).description == "0.00001")
        #expect(ExpressionValue.number(-0.000012345).description == "-0.000012345")
        #expect(ExpressionValue.number(0.000001).description == "0.000001")
        #expect(ExpressionValue.number(0.0000001).description == "1e-7")
        #expect(ExpressionValue.number(1.25e-8).description == "1.25e-8")
        #expect(ExpressionValue.number(0.1).description == "0.1")
        #expect(ExpressionValue.number(1.5e300).description == "1.5e+300")
        #expect(ExpressionValue.null.description == "")
        #expect(ExpressionValue.bool(true).description == "true")
        #expect(ExpressionValue.string("s").description == "s")
    }

    @Test func renderKeepsUnresolvedExpressions() {
        let (t, _) = Template.parse("v=${{ vars.a }} w=${{  vars.b  }}", span: SourceSpan(line: 1, column: 1, length: 1),
                                    locate: { FlowKit.SourceLocation(line: 1, column: 1 + $0) })
        let context = Recording(["vars.a": .number(2)])
        #expect(ExpressionEvaluator.render(t, in: context) == "v=2 w=${{ vars.b }}")
        #expect(!ExpressionEvaluator.isResolvable(t, in: context))
    }
}
