/// Splits the text between `${{` and `}}` into tokens.
struct ExpressionLexer {
    let scalars: [Unicode.Scalar]

    /// A lexical error: message and the offsets it covers.
    struct Failure: Error {
        var message: String
        var start: Int
        var end: Int
        var help: String?
        /// The tokens before the error, so the parser can tell that it is inside the
        /// arguments of a function flow does not have (`format("{0}", x)`), and say that.
        var before: [ExpressionToken] = []
    }

    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "_"
    }

    static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        isIdentifierStart(c) || (c >= "0" && c <= "9") || c == "-"
    }

    /// The largest whole part a number literal may have: 2^53. Numbers are doubles, which
    /// hold every whole number up to it; past it `9007199254740993` would be read as
    /// ...992, `123456789012345678` printed as `1.2345678901234568e+17`, and two
    /// 400-digit literals would both be `inf`, and equal.
    static let largestExact = "9007199254740992"

    /// Whether the whole part of a number literal (`-12.5`: `12`) is at most `largestExact`.
    static func isExact(_ literal: ArraySlice<Unicode.Scalar>) -> Bool {
        let whole = literal.drop { $0 == "-" }.prefix { $0 != "." }.drop { $0 == "0" }
        let limit = largestExact.unicodeScalars
        if whole.count != limit.count { return whole.count < limit.count }
        // Same length: digits compare as the numbers do.
        for (digit, bound) in zip(whole, limit) where digit != bound { return digit < bound }
        return true
    }

    /// Another tool's placeholder (`{{.NAME}}`, `{{ name }}`, `$(NAME)`) starting at `i`:
    /// its end, name and form.
    static func foreignPlaceholder(in scalars: [Unicode.Scalar], at i: Int) -> (Int, String, ForeignPlaceholder.Syntax)? {
        let n = scalars.count
        if scalars[i] == "{", i + 1 < n, scalars[i + 1] == "{", i + 2 >= n || scalars[i + 2] != "{",
           let (end, name, dotted) = ForeignPlaceholder.placeholder(in: scalars, from: i + 2) {
            return (end, name, dotted ? .goTemplate : .braces)
        }
        if scalars[i] == "$", i + 1 < n, scalars[i + 1] == "(", let (end, name) = ForeignPlaceholder.makeReference(in: scalars, from: i + 2) {
            return (end, name, .make)
        }
        return nil
    }

    /// The characters between tokens: spaces, tabs and line breaks.
    static func isSpace(_ c: Unicode.Scalar) -> Bool {
        c == " " || c == "\t" || c == "\n" || c == "\r"
    }

    /// Whether `${{` occurs in `scalars` outside the string literals of an expression (in
    /// `vars.x == '${{'` it is the string's text).
    static func containsMarkerOutsideStrings(_ scalars: [Unicode.Scalar]) -> Bool {
        var inString = false
        var i = 0
        while i < scalars.count {
            if scalars[i] == "'" {
                inString.toggle()
            } else if !inString, scalars[i] == "$", i + 2 < scalars.count, scalars[i + 1] == "{", scalars[i + 2] == "{" {
                return true
            }
            i += 1
        }
        return false
    }

    func tokens() throws(Failure) -> [ExpressionToken] {
        var out: [ExpressionToken] = []
        do {
            try lex(into: &out)
        } catch {
            var failure = error
            failure.before = out
            throw failure
        }
        return out
    }

    private func lex(into out: inout [ExpressionToken]) throws(Failure) {
        var i = 0
        let n = scalars.count
        while i < n {
            let c = scalars[i]
            if Self.isSpace(c) { i += 1; continue }
            let start = i
            func two(_ next: Unicode.Scalar) -> Bool { i + 1 < n && scalars[i + 1] == next }
            switch c {
            case ".": out.append(.init(kind: .dot, start: i, end: i + 1)); i += 1
            case "(": out.append(.init(kind: .leftParen, start: i, end: i + 1)); i += 1
            case ")": out.append(.init(kind: .rightParen, start: i, end: i + 1)); i += 1
            case ",": out.append(.init(kind: .comma, start: i, end: i + 1)); i += 1
            case "=":
                guard two("=") else {
                    throw Failure(message: "unexpected `=`", start: i, end: i + 1, help: "use `==` to compare")
                }
                out.append(.init(kind: .equal, start: i, end: i + 2)); i += 2
            case "<", ">":
                // Not in the grammar (as in GitHub Actions, values are mostly strings, and
                // flow keeps to `==`/`!=`). Say so, and where ordering can be done.
                let op = two("=") ? "\(c)=" : "\(c)"
                let flag = ["<": "-lt", "<=": "-le", ">": "-gt", ">=": "-ge"][op] ?? "-lt"
                throw Failure(message: "unexpected `\(op)`", start: i, end: i + op.unicodeScalars.count,
                              help: "flow compares only with `==` and `!=`; compare numbers in a shell step: `[ \"$N\" \(flag) 10 ]`")
            case "!":
                if two("=") { out.append(.init(kind: .notEqual, start: i, end: i + 2)); i += 2 } else {
                    out.append(.init(kind: .not, start: i, end: i + 1)); i += 1
                }
            case "&":
                guard two("&") else { throw Failure(message: "unexpected `&`", start: i, end: i + 1, help: "use `&&`") }
                out.append(.init(kind: .and, start: i, end: i + 2)); i += 2
            case "|":
                guard two("|") else { throw Failure(message: "unexpected `|`", start: i, end: i + 1, help: "use `||`") }
                out.append(.init(kind: .or, start: i, end: i + 2)); i += 2
            case "'":
                var text = String.UnicodeScalarView()
                i += 1
                var closed = false
                while i < n {
                    if scalars[i] == "'" {
                        if i + 1 < n, scalars[i + 1] == "'" { text.append("'"); i += 2; continue }
                        closed = true
                        i += 1
                        break
                    }
                    text.append(scalars[i])
                    i += 1
                }
                guard closed else {
                    throw Failure(message: "unterminated string literal", start: start, end: n, help: "close it with `'`")
                }
                out.append(.init(kind: .string(String(text)), start: start, end: i))
            case "\"":
                throw Failure(message: "strings in expressions use single quotes", start: i, end: i + 1,
                              help: "write 'text' instead of \"text\"")
            default:
                if (c >= "0" && c <= "9") || (c == "-" && i + 1 < n && scalars[i + 1] >= "0" && scalars[i + 1] <= "9") {
                    i += 1
                    while i < n, (scalars[i] >= "0" && scalars[i] <= "9") || scalars[i] == "." { i += 1 }
                    let text = String(scalars: scalars[start..<i])
                    guard let value = Double(text) else {
                        throw Failure(message: "invalid number `\(text)`", start: start, end: i)
                    }
                    guard Self.isExact(scalars[start..<i]) else {
                        // The carets show it all; a message of 400 digits would not help.
                        let shown = i - start <= 24 ? text : String(scalars: scalars[start..<(start + 20)]) + "…"
                        throw Failure(message: "number `\(shown)` is too large", start: start, end: i,
                                      help: "numbers are exact up to \(Self.largestExact) (2^53)")
                    }
                    out.append(.init(kind: .number(value), start: start, end: i))
                } else if Self.isIdentifierStart(c) {
                    i += 1
                    while i < n, Self.isIdentifierPart(scalars[i]) { i += 1 }
                    out.append(.init(kind: .identifier(String(scalars: scalars[start..<i])), start: start, end: i))
                } else if let (end, name, syntax) = Self.foreignPlaceholder(in: scalars, at: i) {
                    // `if: "{{.DEPLOY}} == 'true'"`: another tool's placeholder where flow
                    // reads a reference; "unexpected character `{`" would not say so.
                    throw Failure(message: "`\(String(scalars: scalars[i..<end]))` is \(syntax.owner), not a flow expression",
                                  start: i, end: end,
                                  help: "write the reference itself: `vars.\(name)` (a parameter of the action: `params.\(name)`)")
                } else {
                    throw Failure(message: "unexpected character `\(c)`", start: i, end: i + 1)
                }
            }
        }
        out.append(.init(kind: .end, start: n, end: n))
    }
}
