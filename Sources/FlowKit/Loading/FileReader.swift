#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads whole files with plain POSIX calls (no Foundation on the start-up path).
public enum FileReader {
    /// Why a file could not be read.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        /// The file is not there (as opposed to there but unreadable, or a directory).
        public var isMissing = false
        /// The name is a directory's.
        public var isDirectory = false
        public var description: String { "cannot read \(path): \(reason)" }
    }

    /// Files larger than this are refused rather than read into memory.
    public static let maxSize = 64 << 20

    public static func read(_ path: String) throws(Failure) -> [UInt8] {
        try read(pathBytes: Array(path.utf8), name: path)
    }

    /// Reads the file whose name is `pathBytes` (any bytes but NUL: a file name need not be
    /// UTF-8); `name` is how failures show it.
    public static func read(pathBytes: [UInt8], name path: String) throws(Failure) -> [UInt8] {
        guard !pathBytes.contains(0) else { throw Failure(path: path, reason: "the name contains a NUL byte") }
        let fd = PathBytes.withCString(pathBytes) { name in name.map { open($0, O_RDONLY | O_CLOEXEC) } ?? -1 }
        guard fd >= 0 else {
            let code = errno
            throw Failure(path: path, reason: String(cString: strerror(code)), isMissing: code == ENOENT)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw Failure(path: path, reason: "it is a directory", isDirectory: true) }
        if Int(info.st_size) > maxSize { throw Failure(path: path, reason: "larger than \(maxSize >> 20) MiB") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size) + 1)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(path: path, reason: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > maxSize { throw Failure(path: path, reason: "larger than \(maxSize >> 20) MiB") }
        }
        return bytes
    }
}
