/// Reads a scalar's source text again the way libyaml does (line folding, escapes, block
/// indentation and chomping) to tell where each scalar of its value came from.
///
/// libyaml gives a scalar's value and the span of its text, not where each character of
/// the value was written; `ScalarLocator` needs that for diagnostics inside multi-line
/// values. What this produces is checked against libyaml's value by the caller, so a rule
/// followed wrongly here costs precision (the scalar's start is used), never a wrong place.
struct ScalarScanner {
    /// One scalar of the source: a character, or a line break (`scalar` is then what the
    /// break reads as in a value: LF, U+2028 or U+2029).
    struct Element {
        var scalar: Unicode.Scalar
        var location: SourceLocation
        var isBreak: Bool
    }

    /// The value so far: each scalar with where it came from.
    typealias Output = [(scalar: Unicode.Scalar, location: SourceLocation)]

    private let elements: [Element]
    /// The element at the scalar's start (its quote, indicator or first character).
    private let start: Int
    private let end: SourceLocation

    /// The source of `span`'s lines, or nil when the span is not inside the file.
    init?(file: SourceFile, span: SourceSpan) {
        guard span.start.line >= 1, span.end.line <= file.lineCount + 1 else { return nil }
        var elements: [Element] = []
        var start: Int?
        for line in span.start.line...max(span.start.line, min(span.end.line, file.lineCount)) {
            for (index, scalar) in file.lineText(line).unicodeScalars.enumerated() {
                if line == span.start.line, index == span.start.column - 1 { start = elements.count }
                elements.append(Element(scalar: scalar, location: SourceLocation(line: line, column: index + 1), isBreak: false))
            }
            if let lineBreak = file.lineBreak(after: line) {
                let column = (elements.last.map { $0.location.line == line ? $0.location.column + 1 : 1 }) ?? 1
                elements.append(Element(scalar: lineBreak, location: SourceLocation(line: line, column: column), isBreak: true))
            }
        }
        guard var start else { return nil }
        // An anchor or tag before the scalar (`&a "x"`, `!!str x`) is where the event starts.
        while start < elements.count, elements[start].scalar == "&" || elements[start].scalar == "!" {
            while start < elements.count, !Self.isBlank(elements[start]), !elements[start].isBreak { start += 1 }
            while start < elements.count, Self.isBlank(elements[start]) || elements[start].isBreak { start += 1 }
        }
        self.elements = elements
        self.start = start
        self.end = span.end
    }

    static func isBlank(_ e: Element) -> Bool {
        !e.isBreak && (e.scalar == " " || e.scalar == "\t")
    }

    // MARK: Flow scalars

    /// Blanks and breaks between two runs of text, joined as YAML folds them.
    private struct Gap {
        var whitespace: [Element] = []
        /// The first line break of the gap (nil after an escaped line break).
        var leadingBreak: Element?
        var trailingBreaks: [Element] = []
        /// A line break was met (or escaped), so blanks no longer count.
        var leadingBlanks = false

        mutating func add(_ e: Element) {
            if e.isBreak {
                if leadingBlanks {
                    trailingBreaks.append(e)
                } else {
                    whitespace = []
                    leadingBreak = e
                    leadingBlanks = true
                }
            } else if !leadingBlanks {
                whitespace.append(e)
            }
        }

        /// Appends the gap to `out` and empties it: blanks as they are; one line break as
        /// a space; more as the line breaks after the first.
        mutating func flush(into out: inout Output) {
            if leadingBlanks {
                if let first = leadingBreak, first.scalar == "\n" {
                    if trailingBreaks.isEmpty { out.append((" ", first.location)) }
                } else if let first = leadingBreak {
                    out.append((first.scalar, first.location))
                }
                for e in trailingBreaks { out.append((e.scalar, e.location)) }
            } else {
                for e in whitespace { out.append((e.scalar, e.location)) }
            }
            self = Gap()
        }
    }

    /// A plain scalar: its text up to the span's end, folded.
    func plain() -> Output {
        var out: Output = []
        var gap = Gap()
        var i = start
        while i < elements.count, elements[i].location < end {
            let e = elements[i]
            if e.isBreak || Self.isBlank(e) {
                gap.add(e)
            } else {
                gap.flush(into: &out)
                out.append((e.scalar, e.location))
            }
            i += 1
        }
        return out
    }

    /// A single- or double-quoted scalar: `''` and backslash escapes, folded lines, an
    /// escaped line break joining two lines without a space.
    func quoted(double: Bool) -> Output? {
        let quote: Unicode.Scalar = double ? "\"" : "'"
        guard start < elements.count, elements[start].scalar == quote else { return nil }
        var out: Output = []
        var gap = Gap()
        var i = start + 1
        while i < elements.count {
            let e = elements[i]
            if e.isBreak || Self.isBlank(e) {
                gap.add(e)
                i += 1
                continue
            }
            gap.flush(into: &out)
            let next = i + 1 < elements.count ? elements[i + 1] : nil
            if e.scalar == quote {
                if !double, let next, next.scalar == "'", !next.isBreak {
                    out.append(("'", e.location))
                    i += 2
                    continue
                }
                return out
            }
            guard double, e.scalar == "\\", let next else {
                out.append((e.scalar, e.location))
                i += 1
                continue
            }
            if next.isBreak {
                // An escaped line break: no space, and the next line's blanks are skipped.
                gap.leadingBlanks = true
                i += 2
                continue
            }
            guard let (scalar, length) = escape(at: i) else { return nil }
            out.append((scalar, e.location))
            i += length
        }
        return nil
    }

    /// Escapes of one character after the backslash.
    private static let simpleEscapes: [Unicode.Scalar: Unicode.Scalar] = [
        "0": "\u{0}", "a": "\u{7}", "b": "\u{8}", "t": "\t", "\t": "\t", "n": "\n", "v": "\u{B}", "f": "\u{C}",
        "r": "\r", "e": "\u{1B}", " ": " ", "\"": "\"", "/": "/", "\\": "\\", "N": "\u{85}", "_": "\u{A0}",
        "L": "\u{2028}", "P": "\u{2029}",
    ]

    /// The scalar a backslash escape at `i` stands for, and its length in the source.
    private func escape(at i: Int) -> (Unicode.Scalar, Int)? {
        let code = elements[i + 1].scalar
        if let scalar = Self.simpleEscapes[code] { return (scalar, 2) }
        let digits: Int
        switch code {
        case "x": digits = 2
        case "u": digits = 4
        case "U": digits = 8
        default: return nil
        }
        guard i + 2 + digits <= elements.count else { return nil }
        var text = ""
        for e in elements[(i + 2)..<(i + 2 + digits)] { text.unicodeScalars.append(e.scalar) }
        guard let value = UInt32(text, radix: 16), let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, 2 + digits)
    }

    // MARK: Block scalars

    /// The header of a block scalar: literal or folded, and the chomping indicator
    /// (`-` strip, `+` keep, none clip).
    private struct Header {
        var folded: Bool
        var chomping: Character?
        /// The first element of the first content line.
        var bodyStart: Int
    }

    private func header() -> Header? {
        guard start < elements.count, elements[start].scalar == "|" || elements[start].scalar == ">" else { return nil }
        var header = Header(folded: elements[start].scalar == ">", chomping: nil, bodyStart: start + 1)
        var i = start + 1
        while i < elements.count, !elements[i].isBreak {
            if elements[i].scalar == "-" || elements[i].scalar == "+" { header.chomping = Character(elements[i].scalar) }
            i += 1  // an indentation digit, blanks, a comment
        }
        header.bodyStart = i + 1
        return header
    }

    /// Indentations worth trying for a block scalar: with an indentation indicator the
    /// indentation is relative to the parent's, which the node does not tell, so every
    /// one up to the first content line's is a candidate (the value decides).
    func blockIndentCandidates() -> [Int] {
        guard let header = header() else { return [] }
        var widest = 0
        var i = header.bodyStart
        var column = 0
        while i < elements.count {
            let e = elements[i]
            if e.isBreak {
                widest = max(widest, column)
                column = 0
            } else if e.scalar == " " {
                column += 1
            } else {
                widest = max(widest, column)
                break
            }
            i += 1
        }
        return widest >= 1 ? Array((1...widest).reversed()) : []
    }

    /// A literal or folded block scalar read with content indentation `indent`.
    func block(indent: Int) -> Output? {
        guard let header = header() else { return nil }
        var out: Output = []
        var i = header.bodyStart
        var leadingBreak: Element?
        var trailingBreaks: [Element] = []
        var leadingBlank = false
        func column(_ i: Int) -> Int { elements[i].location.column - 1 }
        /// Empty lines, and the indentation of the next one.
        func breaks() {
            while i < elements.count {
                while i < elements.count, !elements[i].isBreak, elements[i].scalar == " ", column(i) < indent { i += 1 }
                guard i < elements.count, elements[i].isBreak else { return }
                trailingBreaks.append(elements[i])
                i += 1
            }
        }
        breaks()
        while i < elements.count, !elements[i].isBreak, column(i) == indent {
            let trailingBlank = Self.isBlank(elements[i])
            if header.folded, let first = leadingBreak, first.scalar == "\n", !leadingBlank, !trailingBlank {
                if trailingBreaks.isEmpty { out.append((" ", first.location)) }
            } else if let first = leadingBreak {
                out.append((first.scalar, first.location))
            }
            leadingBreak = nil
            for e in trailingBreaks { out.append((e.scalar, e.location)) }
            trailingBreaks = []
            leadingBlank = Self.isBlank(elements[i])
            while i < elements.count, !elements[i].isBreak {
                out.append((elements[i].scalar, elements[i].location))
                i += 1
            }
            guard i < elements.count else { break }
            leadingBreak = elements[i]
            i += 1
            breaks()
        }
        if header.chomping != "-", let first = leadingBreak { out.append((first.scalar, first.location)) }
        if header.chomping == "+" { for e in trailingBreaks { out.append((e.scalar, e.location)) } }
        return out
    }
}
