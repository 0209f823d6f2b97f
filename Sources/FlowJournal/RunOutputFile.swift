#if canImport(Glibc)
import Glibc
#endif

/// Reads a run's output file (see `JournalSchema.outputLines`), opened on the first read and
/// closed with the value.
final class RunOutputFile {
    let path: String
    private var fd: Int32 = -1

    init(path: String) {
        self.path = path
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// The file's size when last asked (see `read`).
    private var size: Int64 = 0

    /// `length` bytes at `offset`; the rows point only at bytes written before they were
    /// committed, so a short file means it was damaged or removed by hand.
    ///
    /// The row's numbers are checked against the file before anything is allocated or
    /// read: a damaged row (a length of 2^63, a negative offset) trapped or aborted `flow
    /// logs` with a backtrace. The file is opened without blocking and must be a regular
    /// file: a FIFO put in its place hung `flow logs` for good, a device (`/dev/zero`) gave
    /// its bytes as the run's output.
    func read(offset: Int64, length: Int) throws(JournalError) -> [UInt8] {
        if fd < 0 {
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else {
                throw JournalError("cannot read the run's output \(path): \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw JournalError("cannot read the run's output \(path): it is not a file (damaged, or changed by hand)")
            }
        }
        guard offset >= 0, length >= 0, offset <= Int64.max - Int64(length) else {
            throw JournalError("the journal's record of the run's output \(path) is damaged (\(length) bytes at \(offset))")
        }
        if offset + Int64(length) > size {
            // Asked again only past the last size seen: `logs --follow` reads a file that grows.
            var info = stat()
            if fstat(fd, &info) == 0 { size = Int64(info.st_size) }
            guard offset + Int64(length) <= size else {
                throw JournalError("the run's output \(path) is shorter than the journal says (damaged, or changed by hand)")
            }
        }
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, length - done, off_t(offset) + off_t(done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                throw JournalError("the run's output \(path) is shorter than the journal says (damaged, or changed by hand)")
            }
            done += n
        }
        return bytes
    }
}
