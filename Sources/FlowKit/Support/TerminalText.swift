/// A line a step printed, as plain text for one row of a live display (`--output tty`):
/// what a terminal leaves of a `\r` progress line (the text after its last `\r`), without
/// escape sequences (colours, cursor moves, screen clears, titles) or other control
/// characters. Written raw into the live tree, those act on the terminal at every redraw,
/// and a cursor move breaks the redraw, which erases the tree by counting rows up from the
/// cursor.
///
/// Removed rather than escaped (as `ControlEscaping` does for workflow text): output is
/// full of colour codes, and `\u{1B}[32m` in every row would hide the text it colours.
/// Tabs stay; `DisplayWidth.fit` expands them.
enum TerminalText {
    /// Bytes of a line that are read at most: a row shows only the start of the text.
    static let maxBytes = 16 * 1024

    /// `line` (one line, without its line break) as plain text.
    static func plain(_ line: UnsafeRawBufferPointer) -> String {
        // A `\r` at the end overwrites nothing: the text before it is what shows.
        var end = line.count
        while end > 0, line[end - 1] == 0x0D { end -= 1 }
        var start = end
        while start > 0, line[start - 1] != 0x0D { start -= 1 }
        let segment = UnsafeRawBufferPointer(rebasing: line[start..<min(end, start + maxBytes)])
        // Fast path: most lines hold no control character (C1 characters start with 0xC2).
        let hasControl = segment.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F || $0 == 0xC2 }
        let text = String(decoding: segment, as: UTF8.self)
        return hasControl ? removingControls(text) : text
    }

    /// `text` without escape sequences and control characters (tabs kept).
    static func removingControls(_ text: String) -> String {
        let scalars = text.unicodeScalars
        var out = String.UnicodeScalarView()
        var i = scalars.startIndex
        while i < scalars.endIndex {
            let scalar = scalars[i]
            scalars.formIndex(after: &i)
            switch scalar.value {
            case 0x1B:
                guard i < scalars.endIndex else { break }
                switch scalars[i].value {
                case 0x5B:  // `[`: CSI (colours, cursor moves, erasing)
                    i = skipControlSequence(scalars, from: scalars.index(after: i))
                case 0x5D, 0x50, 0x58, 0x5E, 0x5F:  // `]` OSC (titles, links), `P` DCS, `X` SOS, `^` PM, `_` APC
                    i = skipControlString(scalars, from: scalars.index(after: i))
                case 0x20...0x2F:  // intermediates, then a final character (`ESC ( B`: a character set)
                    while i < scalars.endIndex, (0x20...0x2F).contains(scalars[i].value) { scalars.formIndex(after: &i) }
                    if i < scalars.endIndex, (0x30...0x7E).contains(scalars[i].value) { scalars.formIndex(after: &i) }
                case 0x30...0x7E:  // a two-character sequence (`ESC 7`, `ESC M`, `ESC c`: a full reset)
                    scalars.formIndex(after: &i)
                default:
                    break  // a lone ESC
                }
            case 0x9B:  // the one-character CSI
                i = skipControlSequence(scalars, from: i)
            case 0x9D, 0x90, 0x98, 0x9E, 0x9F:  // the one-character OSC, DCS, SOS, PM, APC
                i = skipControlString(scalars, from: i)
            case 0x09:
                out.append(scalar)
            case 0..<0x20, 0x7F...0x9F:
                break  // BEL, backspace, NUL…: nothing a row can show
            default:
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Past a control sequence's parameters and intermediates and its final character. A
    /// malformed one ends where a character that cannot be part of it starts.
    private static func skipControlSequence(_ scalars: String.UnicodeScalarView, from start: String.Index) -> String.Index {
        var i = start
        while i < scalars.endIndex, (0x20...0x3F).contains(scalars[i].value) { scalars.formIndex(after: &i) }
        if i < scalars.endIndex, (0x40...0x7E).contains(scalars[i].value) { scalars.formIndex(after: &i) }
        return i
    }

    /// Past a control string (a title, a hyperlink's target) and its terminator: BEL, `ESC \`
    /// or ST. Another ESC ends it too (terminals start the next sequence there); so does the
    /// end of the line.
    private static func skipControlString(_ scalars: String.UnicodeScalarView, from start: String.Index) -> String.Index {
        var i = start
        while i < scalars.endIndex {
            let value = scalars[i].value
            if value == 0x07 || value == 0x9C { return scalars.index(after: i) }
            if value == 0x1B {
                let next = scalars.index(after: i)
                return next < scalars.endIndex && scalars[next] == "\\" ? scalars.index(after: next) : i
            }
            scalars.formIndex(after: &i)
        }
        return i
    }
}
