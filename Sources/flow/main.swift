import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

// Usage errors exit with 2 (the contract), not ArgumentParser's 64; help and --version exit 0.
do {
    var command = try FlowCommand.parseAsRoot()
    if let asyncCommand = command as? AsyncExecutable {
        try await asyncCommand.execute()
    } else {
        try command.run()
    }
} catch let exit as ExitCode {
    Glibc.exit(exit.rawValue)
} catch {
    let code = FlowCommand.exitCode(for: error)
    if code == .success {
        FlowCommand.exit(withError: error)
    }
    Console.stderr(FlowCommand.fullMessage(for: error) + "\n")
    if code == .validationFailure { Glibc.exit(2) }
    Glibc.exit(code.rawValue == 0 ? 1 : code.rawValue)
}
