/// A string that may interpolate `${{ … }}` expressions, split into its parts.
public struct Template: Sendable {
    /// Literal text or an expression.
    public enum Part: Sendable {
        case text(String)
        /// An expression, with the text written between `${{` and `}}` and the span of the whole `${{ … }}`.
        case expression(Expression, source: String, span: SourceSpan)
    }

    public var parts: [Part]
    /// The span of the whole scalar.
    public var span: SourceSpan
    /// The text as written (after YAML unquoting).
    public var raw: String
    /// Some `${{ … }}` in it did not parse (reported as it was parsed): its text stands in
    /// its place, so checks of the template's value (`allowed`) must not judge that text.
    public var hasSyntaxErrors = false
    /// Other tools' placeholders in its text (`{{.VERSION}}`), which flow leaves as text;
    /// the validator warns about those naming a var or param (see `ForeignPlaceholder`).
    public var placeholders: [ForeignPlaceholder] = []

    public init(parts: [Part], span: SourceSpan, raw: String) {
        self.parts = parts
        self.span = span
        self.raw = raw
    }

    /// A template of plain text.
    public init(literal text: String, span: SourceSpan) {
        self.init(parts: text.isEmpty ? [] : [.text(text)], span: span, raw: text)
    }

    /// Whether the template has no expressions at all.
    public var isLiteral: Bool {
        !parts.contains { if case .expression = $0 { return true } else { return false } }
    }

    /// The expressions in the template, in order.
    public var expressions: [Expression] {
        parts.compactMap { if case .expression(let e, _, _) = $0 { return e } else { return nil } }
    }

    /// Parses `text`; syntax errors are returned beside the best-effort template.
    public static func parse(_ text: String, span: SourceSpan, locate: @escaping ExpressionParser.Locator)
        -> (Template, [ExpressionParser.Failure])
    {
        guard text.hasExpressionMarker else { return (Template(literal: text, span: span), []) }
        let scalars = Array(text.unicodeScalars)
        var parts: [Part] = []
        var failures: [ExpressionParser.Failure] = []
        // The text since the last expression starts here (taken whole: one scalar at a time
        // was slow for long strings).
        var literalStart = 0
        var i = 0
        let n = scalars.count
        while i < n {
            if scalars[i] == "$", i + 2 < n, scalars[i + 1] == "{", scalars[i + 2] == "{" {
                let open = i
                guard let close = closingBraces(in: scalars, from: i + 3) else {
                    failures.append(.init(message: "unterminated `${{`",
                                          span: SourceSpan(start: locate(open), end: locate(open + 3)),
                                          help: "close the expression with `}}`"))
                    break
                }
                if open > literalStart { parts.append(.text(String(scalars: scalars[literalStart..<open]))) }
                let source = String(scalars: scalars[(open + 3)..<close])
                let offset = open + 3
                let whole = SourceSpan(start: locate(open), end: locate(close + 2))
                switch ExpressionParser.parse(source, locate: { locate(offset + $0) }) {
                case .success(let expression):
                    parts.append(.expression(expression, source: source.trimmingSpaces.description, span: whole))
                case .failure(let failure):
                    failures.append(failure)
                    parts.append(.text(String(scalars: scalars[open..<(close + 2)])))
                }
                i = close + 2
                literalStart = i
                continue
            }
            i += 1
        }
        if n > literalStart { parts.append(.text(String(scalars: scalars[literalStart...]))) }
        var template = Template(parts: parts, span: span, raw: text)
        template.hasSyntaxErrors = !failures.isEmpty
        return (template, failures)
    }

    /// The offset of the `}}` that closes an expression whose text starts at `start` (just
    /// after its `${{`): the first one outside a string literal, so `${{ '}}' }}` is one
    /// expression. Nil when there is none.
    static func closingBraces(in scalars: [Unicode.Scalar], from start: Int) -> Int? {
        var j = start
        var inString = false
        let n = scalars.count
        while j < n {
            if scalars[j] == "'" { inString.toggle() } else if !inString, scalars[j] == "}", j + 1 < n, scalars[j + 1] == "}" {
                return j
            }
            j += 1
        }
        return nil
    }
}
