/// A terminal as far as `--output tty` drives it, to check what the live tree leaves on
/// screen: text with autowrap at the right margin, `\r`, `\n` (scrolling the top row into
/// the history), `ESC[nF` (up n rows, to column 0), `ESC[J` (erase below), `ESC[K` (erase
/// to the end of the row: `--output raw` starting a line of its own) and colours
/// (ignored). Anything else flow writes (another escape sequence, a control character) is
/// kept in `foreign`: a step's output or a label acting on the terminal.
///
/// Its own idea of a character's width (wide CJK and emoji, zero-width combining marks),
/// not flow's, so that a wrong count in flow shows as a wrap here.
struct TerminalScreen {
    let rows: Int
    let columns: Int
    /// Rows scrolled off the top, oldest first.
    private(set) var history: [String] = []
    /// Each row's cells: a character, or "" for the second column of a wide one.
    private var cells: [[String]]
    private var row = 0
    private var column = 0
    /// Set when the last column was written: the next character goes to the next row
    /// (the deferred wrap of xterm and its kin).
    private var wrapPending = false
    /// How many times a row was wider than the terminal (a wrap), with the row it left.
    private(set) var wraps: [String] = []
    /// Escape sequences and control characters that are not flow's own.
    private(set) var foreign: [String] = []

    init(rows: Int, columns: Int) {
        self.rows = rows
        self.columns = columns
        cells = Array(repeating: [], count: rows)
    }

    /// The screen's rows (trailing blanks trimmed).
    var screen: [String] { cells.map(Self.text) }

    /// History and screen, without the blank rows at the bottom.
    var all: [String] {
        var lines = history + screen
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    private static func text(_ cells: [String]) -> String {
        var text = cells.joined()
        while text.last == " " { text.removeLast() }
        return text
    }

    static func width(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.value {
        case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F: return 0
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7A3,
             0xF900...0xFAFF, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default: return 1
        }
    }

    mutating func feed(_ text: String) {
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let scalar = scalars[i]
            i += 1
            switch scalar.value {
            case 0x1B:
                var j = i
                guard j < scalars.count, scalars[j] == "[" else {
                    foreign.append("ESC" + (j < scalars.count ? String(scalars[j]) : ""))
                    continue
                }
                j += 1
                var parameters = ""
                while j < scalars.count, (0x20...0x3F).contains(scalars[j].value) {
                    parameters.unicodeScalars.append(scalars[j])
                    j += 1
                }
                guard j < scalars.count else { foreign.append("ESC[" + parameters); i = j; continue }
                let final = scalars[j]
                i = j + 1
                let n = Int(parameters) ?? 1
                switch final {
                case "m": break
                case "F" where Int(parameters) != nil || parameters.isEmpty:
                    row = max(row - n, 0)
                    column = 0
                    wrapPending = false
                case "J" where parameters.isEmpty || parameters == "0":
                    cells[row] = Array(cells[row].prefix(column))
                    for below in (row + 1)..<rows { cells[below] = [] }
                case "K" where parameters.isEmpty || parameters == "0":
                    cells[row] = Array(cells[row].prefix(column))
                default:
                    foreign.append("ESC[" + parameters + String(final))
                }
            case 0x0D:
                column = 0
                wrapPending = false
            case 0x0A:
                lineFeed()
                wrapPending = false
            case 0..<0x20, 0x7F...0x9F:
                foreign.append("\\u{\(String(scalar.value, radix: 16, uppercase: true))}")
            default:
                put(scalar)
            }
        }
    }

    private mutating func put(_ scalar: Unicode.Scalar) {
        let width = Self.width(scalar)
        if width == 0 {
            if column > 0, let last = cells[row].indices.last { cells[row][last].unicodeScalars.append(scalar) }
            return
        }
        if wrapPending || column + width > columns {
            wraps.append(Self.text(cells[row]))
            column = 0
            lineFeed()
            wrapPending = false
        }
        while cells[row].count < column + width { cells[row].append(" ") }
        cells[row][column] = String(scalar)
        if width == 2 { cells[row][column + 1] = "" }
        column += width
        if column >= columns {
            column = columns - 1
            wrapPending = true
        }
    }

    private mutating func lineFeed() {
        if row == rows - 1 {
            history.append(Self.text(cells[0]))
            cells.removeFirst()
            cells.append([])
        } else {
            row += 1
        }
    }
}
