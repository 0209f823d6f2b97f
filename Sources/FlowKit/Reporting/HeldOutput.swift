/// One step's output that `--output grouped` holds until the step's block is written: up
/// to `memoryLimit` bytes in memory, the rest spilled to the run's `OutputSpill` file.
///
/// Kept as records, a stream tag and a length before the bytes written to that stream in a
/// row, so that a block replays stdout and stderr in the order and with the bytes the step
/// wrote them, whether from memory or from the file. The in-memory part and the spilled
/// extents use the same records: spilling is a copy, not a conversion.
struct HeldOutput {
    /// A step's output is spilled once this much is held in memory: 1 MiB, GNU make's
    /// `-O` spills at once, but most steps print far less and need no file at all.
    static let memoryLimit = 1 << 20

    /// The stream tag and an 8-byte little-endian length.
    private static let headerSize = 9

    /// The step's label: a warning about its output names it.
    let label: String
    /// What was spilled, in order.
    private(set) var extents: [OutputSpill.Extent] = []
    /// For each extent, how many of its bytes are output (not record headers): what is
    /// missing if it cannot be read back.
    private var spilledOutput: [Int] = []
    /// Records not spilled yet.
    private var tail: [UInt8] = []
    /// How many records `tail` holds.
    private var tailRecords = 0
    /// Where the last record in `tail` starts: more bytes on its stream extend it.
    private var lastRecord: Int?

    init(label: String = "") {
        self.label = label
    }

    var isEmpty: Bool { extents.isEmpty && tail.isEmpty }
    /// Bytes held in memory (records included).
    var heldInMemory: Int { tail.count }

    /// Adds `bytes` written to `stream` (and a `\n` after them if `endingLine`), spilling
    /// what is held once it passes `memoryLimit` (if `spill` can take it; else it stays).
    mutating func append(_ bytes: UnsafeRawBufferPointer, _ stream: OutputChannel, endingLine: Bool,
                         spill: OutputSpill, memoryLimit: Int = HeldOutput.memoryLimit) {
        let tag = Self.tag(stream)
        if let start = lastRecord, tail[start] == tag {} else {
            lastRecord = tail.count
            tailRecords += 1
            tail.append(tag)
            tail.append(contentsOf: repeatElement(0, count: Self.headerSize - 1))
        }
        tail.append(contentsOf: bytes)
        if endingLine { tail.append(0x0A) }
        let start = lastRecord!
        var length = UInt64(tail.count - start - Self.headerSize).littleEndian
        withUnsafeBytes(of: &length) { raw in
            for i in 0..<8 { tail[start + 1 + i] = raw[i] }
        }
        if tail.count >= memoryLimit { spillTail(to: spill) }
    }

    /// Moves what is held in memory to `spill`, if it can take it. `keepingCapacity`: the
    /// step still runs and will fill its buffer again; a block kept until the run ends
    /// (`--quiet`) passes false, or its memory would stay allocated all the same.
    mutating func spillTail(to spill: OutputSpill, keepingCapacity: Bool = true) {
        guard !tail.isEmpty, let extent = tail.withUnsafeBytes({ spill.store($0) }) else { return }
        extents.append(extent)
        spilledOutput.append(tail.count - tailRecords * Self.headerSize)
        tail.removeAll(keepingCapacity: keepingCapacity)
        tailRecords = 0
        lastRecord = nil
    }

    /// Calls `body` with each run of bytes on one stream, in order (a run may come in more
    /// than one piece), reading the spilled part back a stretch at a time. Returns how many
    /// bytes of output could not be read back, with why (errno), if any could not.
    func replay(from spill: OutputSpill, _ body: (OutputChannel, UnsafeRawBufferPointer) -> Void) -> (lost: Int, errno: Int32)? {
        var lost: (lost: Int, errno: Int32)?
        for (extent, output) in zip(extents, spilledOutput) {
            if let code = spill.load(extent, { Self.forEachRecord(in: $0, body) }) {
                lost = ((lost?.lost ?? 0) + output, lost?.errno ?? code)
            }
        }
        tail.withUnsafeBytes { Self.forEachRecord(in: $0, body) }
        return lost
    }

    private static func forEachRecord(in records: UnsafeRawBufferPointer, _ body: (OutputChannel, UnsafeRawBufferPointer) -> Void) {
        var at = 0
        while at + headerSize <= records.count {
            var length: UInt64 = 0
            withUnsafeMutableBytes(of: &length) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: records[(at + 1)..<(at + headerSize)])) }
            let count = Int(UInt64(littleEndian: length))
            let start = at + headerSize
            body(records[at] == 1 ? .stdout : .stderr, UnsafeRawBufferPointer(rebasing: records[start..<(start + count)]))
            at = start + count
        }
    }

    private static func tag(_ stream: OutputChannel) -> UInt8 { stream == .stdout ? 1 : 2 }
}
