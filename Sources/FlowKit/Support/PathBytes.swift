#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File and directory names as the system has them: bytes (any but NUL), which need not be
/// UTF-8. A `String` of such a name is only how it is shown (see
/// `ControlEscaping.displayName(ofPathBytes:)`); these are what open and enter it.
public enum PathBytes {
    /// The current directory, or nil (errno says why) when it cannot be had: removed
    /// (ENOENT), or a directory above it unreadable (EACCES).
    ///
    /// Why glibc's own buffer: a fixed one of PATH_MAX failed (ERANGE) for a directory
    /// deeper than that, which the system allows, and the run was recorded as run in `.`.
    public static func currentDirectory() -> [UInt8]? {
        guard let name = getcwd(nil, 0) else { return nil }
        defer { free(name) }
        return Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
    }

    /// `bytes` if they are not UTF-8, else nil: what a record keeps beside the shown name
    /// (nil: the name is its own bytes).
    public static func unlessUTF8(_ bytes: [UInt8]) -> [UInt8]? {
        String(validating: bytes, as: UTF8.self) == nil ? bytes : nil
    }

    /// `name`, or `directory/name` when it is relative.
    public static func resolve(_ name: [UInt8], from directory: [UInt8]) -> [UInt8] {
        name.first == UInt8(ascii: "/") ? name : directory + [UInt8(ascii: "/")] + name
    }

    /// Calls `body` with `bytes` as a C string (nil if they contain a NUL: no file has such a name).
    public static func withCString<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>?) -> T) -> T {
        guard !bytes.contains(0) else { return body(nil) }
        return (bytes + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress) }
        }
    }
}
