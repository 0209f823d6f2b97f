#if canImport(Glibc)
import Glibc
#endif

/// The `posix_spawnattr_t` every child is started with, built once.
///
/// - `POSIX_SPAWN_SETPGROUP` with group 0: each child leads its own process group, so a
///   terminal's Ctrl-C reaches flow alone and flow forwards it exactly once.
/// - `POSIX_SPAWN_SETSIGDEF` with a full set: default dispositions for every signal, since
///   ignored signals survive exec (a flow started under `nohup` must not pass SIGHUP/INT
///   ignored to its steps).
/// - `POSIX_SPAWN_SETSIGMASK` with an empty set: nothing blocked, whatever flow's thread had.
///
/// `@unchecked Sendable`: never modified after `init`, and `posix_spawn` only reads it.
final class SpawnAttributes: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<posix_spawnattr_t>

    init() {
        pointer = .allocate(capacity: 1)
        posix_spawnattr_init(pointer)
        let flags = Int32(POSIX_SPAWN_SETPGROUP) | Int32(POSIX_SPAWN_SETSIGDEF) | Int32(POSIX_SPAWN_SETSIGMASK)
        posix_spawnattr_setflags(pointer, Int16(flags))
        posix_spawnattr_setpgroup(pointer, 0)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(pointer, &all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(pointer, &none)
    }

    deinit {
        posix_spawnattr_destroy(pointer)
        pointer.deallocate()
    }
}
