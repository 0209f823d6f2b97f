#if canImport(Glibc)
import Glibc
#endif
import CFlowSys

/// A table of text whose columns are as wide as their widest cell, laid out once the last
/// row is in: the rows are kept as they come, in a temporary file past the first
/// `chunk` bytes, so that a table of any length takes the memory of one chunk.
///
/// For `flow runs`, which read the journal twice (measuring the columns, then writing the
/// rows) to hold no row: runs that started, ended or were pruned between the two reads
/// changed the rows, so that the second listed runs the first had not measured. Rows
/// written as they were measured are the same rows.
///
/// The file is made in `$TMPDIR` (else `/tmp`), as `OutputSpill`'s, and unlinked as soon
/// as it is made: nothing is left behind however flow ends. Where it cannot be made or
/// written (a read-only or full `/tmp`), the rest of the rows stay in memory: the table
/// is still written, as it was before it spilled.
public final class SpooledTable {
    /// The columns' widths in terminal columns (`DisplayWidth`), the header's included.
    public private(set) var widths: [Int]
    /// How many rows were appended.
    public private(set) var count = 0
    private let header: [String]
    /// Rows not in the file: each cell its UTF-8 length (4 bytes, little-endian), then its bytes.
    private var pending: [UInt8] = []
    private let directory: String
    private var fd: Int32 = -1
    /// Bytes of rows in the file, all of them before `pending`'s.
    private var spilled: Int64 = 0
    /// Set once the file could not be made or written: `pending` then keeps the rest.
    private var cannotSpill = false

    /// Bytes of rows held in memory before they go to the file.
    static let chunk = 32_768

    /// A table under `header`; its rows spill to a file made in `directory` (by default
    /// `$TMPDIR`, else `/tmp`).
    public init(header: [String], directory: String? = nil) {
        self.header = header
        widths = header.map { DisplayWidth.columns(of: $0) }
        self.directory = directory
            ?? getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
            ?? "/tmp"
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Adds a row of as many cells as the header has.
    public func append(_ cells: [String]) {
        precondition(cells.count == header.count, "a row of \(cells.count) cells in a table of \(header.count) columns")
        for (column, var cell) in cells.enumerated() {
            // Padded by terminal columns, not characters: a workflow named after its file may
            // be `构建.yaml`'s `构建`, two columns a character, which pushed STEPS out of line.
            widths[column] = max(widths[column], DisplayWidth.columns(of: cell))
            cell.withUTF8 { utf8 in
                var length = UInt32(utf8.count).littleEndian
                withUnsafeBytes(of: &length) { pending.append(contentsOf: $0) }
                pending.append(contentsOf: utf8)
            }
        }
        count += 1
        if pending.count >= Self.chunk { spill() }
    }

    /// Writes the header and every row, in the order they came, each padded to `widths`,
    /// to `write` a line at a time. Returns why the rows could not be read back from the
    /// file, if they could not (then only the header and the rows before are written).
    public func write(_ write: (String) -> Void) -> String? {
        write(Self.line(header, widths: widths))
        var buffer: [UInt8] = []
        var start = 0
        var offset: Int64 = 0
        var chunk = [UInt8](repeating: 0, count: Self.chunk * 2)
        while offset < spilled {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, min($0.count, Int(spilled - offset)), off_t(offset)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                return "cannot read back the rows from a temporary file in \(directory) (\(SpawnError.message(n == 0 ? EIO : errno)))"
            }
            offset += Int64(n)
            // What the last chunk left of a row it holds part of, then this chunk.
            buffer.removeSubrange(0..<start)
            buffer.append(contentsOf: chunk[0..<n])
            start = writeRows(buffer, write)
        }
        buffer.removeSubrange(0..<start)
        buffer.append(contentsOf: pending)
        _ = writeRows(buffer, write)
        return nil
    }

    /// Writes the whole rows at the start of `bytes`; returns where the first one not
    /// whole starts.
    private func writeRows(_ bytes: [UInt8], _ write: (String) -> Void) -> Int {
        var position = 0
        var cells: [String] = []
        cells.reserveCapacity(header.count)
        rows: while true {
            var at = position
            cells.removeAll(keepingCapacity: true)
            for _ in 0..<header.count {
                guard bytes.count - at >= 4 else { break rows }
                let length = Int(UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24)
                guard bytes.count - at - 4 >= length else { break rows }
                cells.append(String(decoding: bytes[(at + 4)..<(at + 4 + length)], as: UTF8.self))
                at += 4 + length
            }
            write(Self.line(cells, widths: widths))
            position = at
        }
        return position
    }

    /// Appends `pending` to the file (made now if need be); keeps it in memory if it cannot.
    private func spill() {
        guard !cannotSpill else { return }
        if fd < 0 {
            var template = Array("\(directory)/flow-table-\(getpid())-XXXXXX".utf8CString)
            fd = template.withUnsafeMutableBufferPointer { cflow_anonymous_temp_file($0.baseAddress!) }
            guard fd >= 0 else {
                cannotSpill = true
                return
            }
        }
        var done = 0
        while done < pending.count {
            let n = pending.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, $0.count - done, off_t(spilled) + off_t(done)) }
            if n < 0, errno == EINTR { continue }
            // Bytes past `spilled` are never read: the rows stay in `pending`.
            guard n > 0 else {
                cannotSpill = true
                return
            }
            done += n
        }
        spilled += Int64(pending.count)
        pending.removeAll(keepingCapacity: true)
    }

    /// `cells` padded to `widths`, two spaces between columns, the last one unpadded.
    public static func line(_ cells: [String], widths: [Int]) -> String {
        var line = ""
        for (i, cell) in cells.enumerated() {
            line += i == cells.count - 1 ? cell : cell + String(repeating: " ", count: max(widths[i] - DisplayWidth.columns(of: cell), 0) + 2)
        }
        return line + "\n"
    }
}
