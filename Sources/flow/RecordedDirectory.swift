#if canImport(Glibc)
import Glibc
#endif
import FlowJournal
import FlowKit

/// `resume` and `undo` run a recorded run's steps in the directory the run was started in
/// (its `cwd` in the journal), wherever they are invoked from: the steps' relative paths
/// (`dir:`, files they read and write) mean what they meant when the run ran.
enum RecordedDirectory {
    /// Refuses (exit 2) a run whose directory is gone, before anything else is said of it.
    static func check(_ run: RunRecord) throws {
        guard !run.cwd.isEmpty else { return }
        var info = stat()
        errno = 0
        guard PathBytes.withCString(run.cwdName, { $0.map { stat($0, &info) } ?? -1 }) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            let reason = errno == 0 || errno == ENOTDIR ? "not a directory" : String(cString: strerror(errno))
            Console.stderr("error: run \(run.id) ran in \(ControlEscaping.escaped(run.cwd)), which is gone (\(reason)); its steps would run there\n")
            throw ExitCode(2)
        }
    }

    /// Makes the paths the user gave relative to the invoking directory (state dir, JUnit
    /// file) absolute, then moves flow, and so every step it starts, into `run.cwd`.
    /// A directory that is gone (or cannot be entered) is an error: exit 2, nothing runs.
    static func enter(_ run: RunRecord, options: inout ExecutionOptions) throws {
        guard !run.cwd.isEmpty else { return }
        let stateDir = Journal.stateDir(option: options.journal.stateDir)
        // Relative to a directory that was removed, they would be taken from the run's
        // (a JUnit report written into the project instead of where it was asked for).
        if PathBytes.currentDirectory() == nil, !stateDir.hasPrefix("/") || options.junit.map({ !$0.hasPrefix("/") }) == true {
            try RunSession.requireCurrentDirectory(because: "relative --state-dir and --junit paths are taken from it")
        }
        let here = RunSession.currentDirectory()
        options.journal.stateDir = absolute(stateDir, from: here)
        options.junit = options.junit.map { absolute($0, from: here) }
        // The resume hint names flow as the shell here finds it, not as it would in the run's directory.
        _ = ProgramName.current
        guard PathBytes.withCString(run.cwdName, { $0.map { chdir($0) } ?? -1 }) == 0 else {
            let reason = String(cString: strerror(errno))
            Console.stderr("error: run \(run.id) ran in \(ControlEscaping.escaped(run.cwd)), which cannot be entered (\(reason)); its steps would run there\n")
            throw ExitCode(2)
        }
        // Programs exec'd directly take the directory from PWD; shells check it.
        PathBytes.withCString(run.cwdName) { name in _ = name.map { setenv("PWD", $0, 1) } }
    }

    static func absolute(_ path: String, from directory: String) -> String {
        path.hasPrefix("/") ? path : directory + "/" + path
    }
}
