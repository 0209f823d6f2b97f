/// How many terminal columns a character takes: what the caret under a source line must
/// count, since a CJK character or an emoji before the span is two columns wide and a
/// combining accent none.
///
/// Why not `wcwidth`: it depends on the C locale flow runs under (`C` knows no wide
/// characters); the caret must line up whatever the locale. The ranges are Unicode's East
/// Asian Wide and Fullwidth blocks (the common ones), as terminals draw them.
enum DisplayWidth {
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
