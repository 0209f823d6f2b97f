/// Text for stdout, written in chunks of about 64 KiB as it is appended.
///
/// `flow runs` writes a line a run: a `write` each was 50,000 system calls for a long
/// history, and holding every line until the end was memory for all of them.
struct ChunkedOutput {
    private var pending = ""
    private static let chunk = 65_536

    mutating func append(_ text: String) {
        pending += text
        if pending.utf8.count >= Self.chunk { flush() }
    }

    /// Writes what is pending.
    mutating func flush() {
        guard !pending.isEmpty else { return }
        Console.stdout(pending)
        pending = ""
    }
}
