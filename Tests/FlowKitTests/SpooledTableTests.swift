import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import FlowKit
import Testing

/// `SpooledTable`: rows written as they came, laid out to the widest cell of each column,
/// kept in a temporary file past the first chunk, or in memory where no file can be made.
/// Serialized: the tests count this process's table files.
@Suite(.serialized) struct SpooledTableTests {
    /// Rows of every length (a few longer than a chunk), so that rows straddle the chunks
    /// the file is read back in.
    static func rows(_ count: Int) -> [[String]] {
        (0..<count).map { i in
            // In the last column, which is not padded: 2,000 rows padded to it were 60 MB.
            let long = i % 500 == 7 ? String(repeating: "界", count: SpooledTable.chunk / 2 + i) : "l\(i)"
            return ["r\(i)", i % 3 == 0 ? "" : String(repeating: "x", count: i % 50), long]
        }
    }

    static func expected(_ rows: [[String]], header: [String]) -> [String] {
        var widths = header.map { DisplayWidth.columns(of: $0) }
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], DisplayWidth.columns(of: cell)) } }
        return ([header] + rows).map { SpooledTable.line($0, widths: widths) }
    }

    /// Open descriptors of this process to a deleted `flow-table-` file.
    static func tableFiles() -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) ?? ""
            return target.contains("/flow-table-") && target.hasSuffix("(deleted)")
        }.count
    }

    @Test func rowsComeBackAsTheyWentInPaddedToTheWidestCell() throws {
        let header = ["ID", "WORKFLOW", "LAST"]
        let rows = Self.rows(2_000)
        let before = Self.tableFiles()
        do {
            let table = SpooledTable(header: header)
            for row in rows { table.append(row) }
            // Past the first chunk the rows are in a file, unlinked: only its descriptor names it.
            #expect(Self.tableFiles() == before + 1)
            var lines: [String] = []
            #expect(table.write { lines.append($0) } == nil)
            #expect(table.count == rows.count)
            #expect(lines == Self.expected(rows, header: header))
        }
        #expect(Self.tableFiles() == before, "the file is closed with the table")
    }

    /// Where no file can be made (`$TMPDIR` a directory that is not there), the rows stay
    /// in memory and the table is the same.
    @Test func withoutAFileTheRowsStayInMemory() throws {
        let header = ["ID", "WORKFLOW", "LAST"]
        let rows = Self.rows(2_000)
        let table = SpooledTable(header: header, directory: "/nonexistent-\(getpid())")
        for row in rows { table.append(row) }
        var lines: [String] = []
        #expect(table.write { lines.append($0) } == nil)
        #expect(lines == Self.expected(rows, header: header))
    }

    @Test func aTableOfFewRowsMakesNoFile() throws {
        let before = Self.tableFiles()
        let table = SpooledTable(header: ["A", "B"])
        table.append(["1", "2"])
        table.append(["333", "4"])
        #expect(Self.tableFiles() == before)
        var lines: [String] = []
        #expect(table.write { lines.append($0) } == nil)
        #expect(lines == ["A    B\n", "1    2\n", "333  4\n"])
    }
}
