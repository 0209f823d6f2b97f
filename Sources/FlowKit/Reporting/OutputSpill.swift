#if canImport(Glibc)
import Glibc
#endif
import CFlowSys

/// Where `--output grouped` keeps the part of a step's output that does not fit in memory
/// until the step's block is written, and `tty` the output of running steps past what it
/// keeps in memory for the replay of failed steps (`FailureLog`): one temporary file for
/// the whole run, shared by every step, in `$TMPDIR` (else `/tmp`).
///
/// Not in the run's scratch directory: that is in `/dev/shm` when `$TMPDIR` is unset, and
/// a file there is memory too, which is what spilling is meant to spare. One file, not one
/// per step, so that thousands of concurrent steps cost one descriptor, not thousands (see
/// `OpenFileLimit`). It is unlinked as soon as it is made: nothing is left behind when flow
/// ends, however it ends (SIGKILL included), and no sweep has to find it.
///
/// Used under the event bus lock (by one reporter), so it needs no lock of its own.
final class OutputSpill {
    /// A stretch of the file: what one step spilled at once.
    struct Extent {
        var offset: Int64
        var count: Int
    }

    private let directory: String
    private var fd: Int32
    /// Where the next extent goes.
    private var end: Int64 = 0
    /// Bytes of extents not yet released: when none are left the file is emptied.
    private var live: Int64 = 0
    /// Why spilling stopped (the file could not be made or written), once it has: the rest
    /// of the run keeps its output in memory, as flow did before it spilled.
    private(set) var failure: String?
    /// Where `load` reads an extent to: one allocation, reused (an extent is ~1 MiB).
    private var readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 16)

    /// Spills to a file made in `directory` when first needed; by default `$TMPDIR`, else
    /// `/tmp` (as GNU make's `--output-sync` does).
    init(directory: String? = nil) {
        self.directory = directory
            ?? getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
            ?? "/tmp"
        fd = -1
    }

    /// Spills to `fd`, already open (a test's `/dev/full`).
    init(fd: Int32) {
        directory = "descriptor \(fd)"
        self.fd = fd
    }

    deinit {
        if fd >= 0 { close(fd) }
        readBuffer.deallocate()
    }

    /// Writes `bytes` at the end of the file and says where, or nil when it cannot (and
    /// then `failure` says why; no later call tries again).
    func store(_ bytes: UnsafeRawBufferPointer) -> Extent? {
        guard failure == nil, openFile() else { return nil }
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(end) + off_t(done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                // A partial extent is never referred to: the bytes stay in memory.
                fail(n == 0 ? ENOSPC : errno)
                return nil
            }
            done += n
        }
        let extent = Extent(offset: end, count: bytes.count)
        end += Int64(bytes.count)
        live += Int64(bytes.count)
        return extent
    }

    /// Reads `extent` back and calls `body` with its bytes (valid only during the call).
    /// Returns errno when it cannot be read.
    func load(_ extent: Extent, _ body: (UnsafeRawBufferPointer) -> Void) -> Int32? {
        if readBuffer.count < extent.count {
            readBuffer.deallocate()
            readBuffer = .allocate(byteCount: extent.count, alignment: 16)
        }
        var done = 0
        while done < extent.count {
            let n = pread(fd, readBuffer.baseAddress! + done, extent.count - done, off_t(extent.offset) + off_t(done))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return n == 0 ? EIO : errno }
            done += n
        }
        body(UnsafeRawBufferPointer(rebasing: readBuffer[0..<extent.count]))
        return nil
    }

    /// The extents' bytes are no longer needed: their disk space is given back. When no
    /// extent is left the file is emptied (the usual case: steps end one after another);
    /// else each is punched out, where the file system can (`FALLOC_FL_PUNCH_HOLE`).
    func release(_ extents: [Extent]) {
        guard !extents.isEmpty, fd >= 0 else { return }
        for extent in extents { live -= Int64(extent.count) }
        if live <= 0 {
            live = 0
            end = 0
            _ = ftruncate(fd, 0)
            return
        }
        // Where it cannot (EOPNOTSUPP), the space comes back when the file is emptied.
        for extent in extents { _ = cflow_punch_hole(fd, extent.offset, Int64(extent.count)) }
    }

    private func openFile() -> Bool {
        if fd >= 0 { return true }
        var template = Array("\(directory)/flow-output-\(getpid())-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { cflow_anonymous_temp_file($0.baseAddress!) }
        guard made >= 0 else {
            fail(errno)
            return false
        }
        fd = made
        return true
    }

    private func fail(_ code: Int32) {
        failure = "cannot write to a temporary file in \(directory) (\(SpawnError.message(code)))"
    }
}
