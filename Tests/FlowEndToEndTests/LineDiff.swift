/// A small line diff for golden mismatches: `-` expected, `+` actual, two lines of context.
enum LineDiff {
    static func render(expected: String, actual: String, context: Int = 2) -> String {
        let a = expected.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let b = actual.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Very long outputs: show the first differing line only, rather than an O(n·m) table.
        guard a.count * b.count <= 4_000_000 else {
            let index = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
            return "first difference at line \(index + 1):\n-\(index < a.count ? a[index] : "<end>")\n+\(index < b.count ? b[index] : "<end>")\n"
        }
        // Longest common subsequence, then walk it.
        var lcs = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
            }
        }
        var lines: [(Character, String)] = []
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i] == b[j] {
                lines.append((" ", a[i])); i += 1; j += 1
            } else if j < b.count, i == a.count || lcs[i][j + 1] >= lcs[i + 1][j] {
                lines.append(("+", b[j])); j += 1
            } else {
                lines.append(("-", a[i])); i += 1
            }
        }
        // Keep changed lines and their context.
        var keep = [Bool](repeating: false, count: lines.count)
        for (index, line) in lines.enumerated() where line.0 != " " {
            for k in max(0, index - context)...min(lines.count - 1, index + context) { keep[k] = true }
        }
        var out = ""
        var skipped = false
        for (index, line) in lines.enumerated() {
            if keep[index] {
                out += "\(line.0)\(visible(line.1))\n"
                skipped = false
            } else if !skipped {
                out += "  …\n"
                skipped = true
            }
        }
        return out
    }

    /// Trailing spaces are easy to miss in a diff: show them.
    static func visible(_ line: String) -> String {
        guard line.hasSuffix(" ") || line.hasSuffix("\t") else { return line }
        return line + "⏎"
    }
}
