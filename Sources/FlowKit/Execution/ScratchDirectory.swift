#if canImport(Glibc)
import Glibc
#endif

/// A private temporary directory for one run (the `FLOW_OUTPUT` files), removed at the end.
final class ScratchDirectory: Sendable {
    let path: String

    /// Why the directory could not be made.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(prefix: String) throws {
        // $TMPDIR when set; else /dev/shm (memory: one file per shell step must not cost a
        // disk write), else /tmp.
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
            ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp")
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw Failure(description: "cannot create a temporary directory in \(base): \(String(cString: strerror(errno)))")
        }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates an empty file `name` in the directory and returns its path.
    func emptyFile(_ name: String) -> String {
        let file = "\(path)/\(name)"
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
        return file
    }

    func remove() {
        guard let dir = opendir(path) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != ".", name != ".." { unlink("\(path)/\(name)") }
        }
        closedir(dir)
        rmdir(path)
    }
}
