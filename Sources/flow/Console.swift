#if canImport(Glibc)
import Glibc
#endif
import FlowKit

/// Ends the process at once with `status`, skipping deallocation of large trees.
func exitNow(_ status: Int32) -> Never {
    exit(status)
}

/// Writing to the terminal, and whether to use color there.
enum Console {
    static func stdout(_ text: String) {
        write(text, to: 1)
    }

    static func stderr(_ text: String) {
        write(text, to: 2)
    }

    /// Bytes as they are (output recorded in the journal need not be UTF-8).
    static func stdout(bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { writeAll(1, $0) }
    }

    /// Writes all of `text` to `fd`, retrying short writes; a closed pipe ends quietly.
    private static func write(_ text: String, to fd: Int32) {
        var text = text
        _ = text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    /// Color only on a terminal, and never with `NO_COLOR` set or `--no-color`.
    static func useColor(fd: Int32, disabled: Bool) -> Bool {
        if disabled { return false }
        if let value = getenv("NO_COLOR"), value.pointee != 0 { return false }
        if let term = getenv("TERM"), String(cString: term) == "dumb" { return false }
        return isatty(fd) == 1
    }
}
