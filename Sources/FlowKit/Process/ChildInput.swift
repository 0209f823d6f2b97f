/// Where a child's standard input comes from.
public enum ChildInput: Sendable, Hashable {
    /// `/dev/null`: the default, so a step can never hang waiting for a keyboard.
    case null
    /// These bytes, written through a pipe that is then closed. A child that does not
    /// read them is not a problem: writing never blocks flow and EPIPE is ignored.
    case bytes([UInt8])
    /// Flow's own standard streams (all three), with the child made the terminal's
    /// foreground process group for as long as it runs (interactive steps).
    case terminal

    /// The UTF-8 bytes of `text`.
    public static func string(_ text: String) -> ChildInput { .bytes(Array(text.utf8)) }
}
