#if canImport(Glibc)
import Glibc
#endif

/// Descriptors 0, 1 and 2 as flow was started with them.
public enum StandardDescriptors {
    /// Holds each of descriptors 0–2 that flow was started without (`flow runs >&-`) open
    /// on `/dev/null`, read-only. Called first thing in `main`, before anything opens a file.
    ///
    /// Otherwise the next file flow opens takes the free number: an epoll descriptor, a
    /// workflow file, a capture pipe, or the journal's database, and flow's output to
    /// "stdout" went into it (`cannot write to stdout (invalid argument)` was an epoll
    /// descriptor refusing it, by luck not the journal). Read-only, a write to the held
    /// descriptor still fails with `EBADF`, as on the closed one: flow says it cannot write
    /// to stdout (`bad file descriptor`), as coreutils do, and a step given flow's stdout
    /// gets what it would have got. A pipe that landed on 0–2 also lost its stream in a
    /// child: `dup2(fd, fd)` keeps close-on-exec.
    public static func reserve() {
        for fd in Int32(0)...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            _ = open("/dev/null", O_RDONLY)  // takes the lowest free number: `fd`
            if fd == 0 { stdinWasClosed = true }
        }
    }

    /// Whether flow was started with descriptor 0 closed (`flow run - <&-`), so that a
    /// workflow read from stdin is said to be missing rather than read as the empty
    /// `/dev/null` that `reserve` put there ("the workflow is empty" misled). Set only by
    /// `reserve`, which `main` calls before any other thread exists.
    public nonisolated(unsafe) private(set) static var stdinWasClosed = false
}
