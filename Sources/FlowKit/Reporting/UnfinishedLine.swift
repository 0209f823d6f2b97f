/// The line a step is writing on one stream and has not ended yet (`Downloading… `, a `\r`
/// progress bar), kept from the chunks as read so that the live tree (`--output tty`) can
/// show it before its `\n` comes, as a terminal would: whole lines reach the reporters only
/// when they end, and a progress bar ends its line only when it is done.
///
/// Bounded: of a long line only what `TerminalText.plain` would show is kept (the text
/// after its last `\r`, its first `TerminalText.maxBytes` bytes), so a progress bar that
/// runs for an hour costs no more than one screenful.
struct UnfinishedLine {
    private(set) var bytes: [UInt8] = []

    /// Takes a chunk of the stream as read: what follows its last `\n`, or all of it added
    /// to the line so far.
    mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        if let newline = chunk.lastIndex(of: 0x0A) {
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: chunk[(newline + 1)...])
        } else {
            bytes.append(contentsOf: chunk)
        }
        // Compacted only now and then: a copy of at most `maxBytes` per `maxBytes` read.
        if bytes.count > 2 * TerminalText.maxBytes { compact() }
    }

    /// Keeps what shows: the text after the last `\r` (cut to `maxBytes`), and one `\r`
    /// after it if the line ended in `\r`s (the next text overwrites it then).
    private mutating func compact() {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0D { end -= 1 }
        var start = end
        while start > 0, bytes[start - 1] != 0x0D { start -= 1 }
        var kept = Array(bytes[start..<min(end, start + TerminalText.maxBytes)])
        if end < bytes.count { kept.append(0x0D) }
        bytes = kept
    }
}
