/// How many terminal columns a character takes: what the caret under a source line must
/// count, since a CJK character or an emoji before the span is two columns wide and a
/// combining accent none.
///
/// Why not `wcwidth`: it depends on the C locale flow runs under (`C` knows no wide
/// characters); the caret must line up whatever the locale. The ranges are Unicode's East
/// Asian Wide and Fullwidth blocks (the common ones), as terminals draw them.
public enum DisplayWidth {
    /// `previous`: the scalar before it on the line. An emoji joined to the one before by
    /// a zero-width joiner is drawn as part of it; a skin-tone modifier too; a flag is two
    /// regional indicators, two columns in all.
    static func columns(of scalar: Unicode.Scalar, after previous: Unicode.Scalar?) -> Int {
        let value = scalar.value
        if previous == "\u{200D}" || (0x1F3FB...0x1F3FF).contains(value) { return 0 }
        if (0x1F1E6...0x1F1FF).contains(value) { return 1 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0  // accents, ZWJ, variation selectors
        default: break
        }
        if value < 0x1100 { return 1 }
        if scalar.properties.isEmojiPresentation { return 2 }
        switch value {
        case 0x1100...0x115F,  // Hangul Jamo initials
             0x2E80...0x303E, 0x3041...0x33FF,  // CJK radicals, punctuation, kana, compatibility
             0x3400...0x4DBF, 0x4E00...0x9FFF,  // CJK ideographs
             0xA000...0xA4CF,  // Yi
             0xAC00...0xD7A3,  // Hangul syllables
             0xF900...0xFAFF,  // CJK compatibility ideographs
             0xFE30...0xFE4F,  // CJK compatibility forms
             0xFF00...0xFF60, 0xFFE0...0xFFE6,  // fullwidth forms
             0x20000...0x3FFFD:  // CJK extensions
            return 2
        default:
            return 1
        }
    }
}

extension DisplayWidth {
    /// Columns from one tab stop to the next, as terminals set them.
    static let tabStop = 8

    /// The columns `text` takes on a terminal (no control characters but tabs; a tab goes
    /// to the next stop, counted from the text's start).
    public static func columns(of text: String) -> Int {
        columns(of: text, joined: true)
    }

    /// The most columns `text` takes on a common terminal: an emoji joined to the one
    /// before (by a zero-width joiner, or a skin tone) counted as drawn on its own, as
    /// xterm, VTE (GNOME Terminal) and glibc's `wcwidth` draw it (terminals that draw the
    /// sequence as one character take less), and a text emoji made an emoji by VS16 as two
    /// columns (see `columns(of:after:joined:)`). What a row that must not wrap counts (see
    /// `fit`).
    static func rowColumns(of text: String) -> Int {
        columns(of: text, joined: false)
    }

    private static func columns(of text: String, joined: Bool) -> Int {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x80 }) { return text.utf8.count }
        var width = 0
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            width += scalar == "\t" ? tabStop - width % tabStop : columns(of: scalar, after: previous, joined: joined)
            previous = scalar
        }
        return width
    }

    /// `columns(of:after:)`, or with `joined` false the widest a common terminal draws it:
    /// each scalar on its own (a skin tone is an emoji two columns wide then), and a text
    /// emoji followed by VS16 (`❤️`) two columns, as kitty, WezTerm and iTerm2 draw it
    /// (xterm and VTE, one).
    @inline(__always)
    private static func columns(of scalar: Unicode.Scalar, after previous: Unicode.Scalar?, joined: Bool) -> Int {
        if joined { return columns(of: scalar, after: previous) }
        if scalar == "\u{FE0F}", let previous, previous.properties.isEmoji, columns(of: previous, after: nil) == 1 { return 1 }
        return (0x1F3FB...0x1F3FF).contains(scalar.value) ? 2 : columns(of: scalar, after: nil)
    }

    /// `text` as it fits in `limit` terminal columns, with the columns it takes: whole
    /// when it fits, else its longest start that fits followed by `…`. Tabs become spaces
    /// up to the next stop (counted from the text's start), so the text is as wide as
    /// counted wherever it is written.
    ///
    /// What the live tree's rows go through: a row wider than the terminal wraps, and the
    /// redraw, which erases the tree by moving up as many rows as it wrote, leaves the
    /// extra rows on screen. Counting characters is not enough: a CJK character or an
    /// emoji is two columns. Joined emoji count as `rowColumns` counts them, the widest
    /// way: counted as one character, a row of them wrapped on xterm and VTE.
    static func fit(_ text: String, in limit: Int) -> (text: String, width: Int) {
        guard limit > 0 else { return ("", 0) }
        let utf8 = text.utf8
        // Fast path: printable ASCII, one column a byte (most output, most names).
        if utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x80 }) {
            if utf8.count <= limit { return (text, utf8.count) }
            return (String(decoding: utf8.prefix(limit - 1), as: UTF8.self) + "…", limit)
        }
        // Whether it fits: measured up to the first column past the limit.
        var width = 0
        var hasTab = false
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            if scalar == "\t" {
                hasTab = true
                width += tabStop - width % tabStop
            } else {
                width += columns(of: scalar, after: previous, joined: false)
            }
            previous = scalar
            if width > limit { break }
        }
        if width <= limit, !hasTab { return (text, width) }
        // Built again: with tabs expanded, and cut to leave a column for `…` when it does not fit.
        let cut = width > limit
        let room = cut ? limit - 1 : limit
        var out = String.UnicodeScalarView()
        width = 0
        previous = nil
        for scalar in text.unicodeScalars {
            let columns = scalar == "\t" ? tabStop - width % tabStop : columns(of: scalar, after: previous, joined: false)
            if width + columns > room { break }
            if scalar == "\t" {
                out.append(contentsOf: repeatElement(" ", count: columns))
            } else {
                out.append(scalar)
            }
            width += columns
            previous = scalar
        }
        if cut {
            out.append("…")
            width += 1
        }
        return (String(out), width)
    }
}
