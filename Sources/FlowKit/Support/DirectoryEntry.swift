#if canImport(Glibc)
import Glibc
#endif

/// The name of an entry `readdir` returned, read where it lies.
///
/// Why not `withUnsafeBytes(of: entry.pointee.d_name)`: that copies `d_name` whole, 256
/// bytes however short the name, and glibc lays its entries out at their own length
/// (`d_reclen`), so for an entry near the end of the buffer `opendir` allocated the copy
/// read past that buffer (a heap-buffer-overflow AddressSanitizer reported in the scratch
/// directory's sweep; the same copy was made wherever flow lists a directory).
public enum DirectoryEntry {
    /// The entry's name: its bytes up to the terminating NUL.
    public static func name(_ entry: UnsafePointer<dirent>) -> [UInt8] {
        let start = nameStart(entry)
        return Array(UnsafeRawBufferPointer(start: start, count: strlen(start.assumingMemoryBound(to: CChar.self))))
    }

    /// The entry's name as a `String` (bytes that are not UTF-8 repaired, as `String(cString:)` does).
    public static func string(_ entry: UnsafePointer<dirent>) -> String {
        String(cString: nameStart(entry).assumingMemoryBound(to: CChar.self))
    }

    private static func nameStart(_ entry: UnsafePointer<dirent>) -> UnsafeRawPointer {
        UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    }
}
