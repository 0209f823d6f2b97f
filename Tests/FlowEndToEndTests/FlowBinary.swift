import Foundation

/// Runs the built `flow` executable the way a user would, in a clean environment.
///
/// The binary is found from `FLOW_BIN`, else beside the test bundle (SwiftPM puts the test
/// runner and the executables in the same `.build/<config>` directory), else in
/// `<package root>/.build/debug`.
enum FlowBinary {
    /// The result of one run.
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let url: URL = {
        let fileManager = FileManager.default
        if let path = ProcessInfo.processInfo.environment["FLOW_BIN"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var candidates: [URL] = []
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        candidates.append(Bundle.main.bundleURL)
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        for directory in candidates {
            let binary = directory.appendingPathComponent("flow")
            var isDirectory: ObjCBool = false
            if fileManager.fileExists(atPath: binary.path, isDirectory: &isDirectory), !isDirectory.boolValue,
               fileManager.isExecutableFile(atPath: binary.path) {
                return binary
            }
        }
        return packageRoot.appendingPathComponent(".build/debug/flow")
    }()

    /// Runs `flow arguments…` in `directory` with NO_COLOR, a fresh state dir and nothing
    /// else from the caller's environment. Output goes to files, so a large output cannot
    /// fill a pipe and block the child.
    ///
    /// With `memoryLimitKB`, flow runs under `ulimit -v`, so a runaway allocation fails fast
    /// instead of exhausting the machine.
    ///
    /// With `shellScript`, `/bin/sh -c SCRIPT` runs instead, with the binary's path as `$0`
    /// and `arguments` after it: for what a `String` argument cannot carry (bytes that are
    /// not UTF-8, made there with `printf`).
    static func run(_ arguments: [String], in directory: URL, timeout: TimeInterval = 60,
                    memoryLimitKB: Int? = nil, shellScript: String? = nil) throws -> Result {
        let fileManager = FileManager.default
        let scratch = fileManager.temporaryDirectory.appendingPathComponent("flow-e2e-\(UUID().uuidString)")
        let state = scratch.appendingPathComponent("state")
        try fileManager.createDirectory(at: state, withIntermediateDirectories: true)
        defer { try? fileManager.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = fileManager.createFile(atPath: outURL.path, contents: nil)
        _ = fileManager.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)

        let process = Process()
        if let shellScript {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellScript, url.path] + arguments
        } else if let memoryLimitKB {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -v \(memoryLimitKB) && exec \"$0\" \"$@\"", url.path] + arguments
        } else {
            process.executableURL = url
            process.arguments = arguments
        }
        process.currentDirectoryURL = directory
        process.environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": scratch.path,
            "NO_COLOR": "1",
            "FLOW_STATE_DIR": state.path,
            "LANG": "C.UTF-8",
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            finished.wait()
            try? out.close()
            try? err.close()
            throw TimedOut(arguments: arguments, seconds: timeout)
        }
        try out.close()
        try err.close()
        let normalise = { (text: String) -> String in
            text.replacingOccurrences(of: state.path, with: "<state>")
                .replacingOccurrences(of: scratch.path, with: "<scratch>")
                .replacingOccurrences(of: directory.path, with: "<dir>")
        }
        return Result(
            status: process.terminationStatus,
            stdout: normalise(String(decoding: try Data(contentsOf: outURL), as: UTF8.self)),
            stderr: normalise(String(decoding: try Data(contentsOf: errURL), as: UTF8.self)))
    }

    /// A run that did not finish in time (it was killed).
    struct TimedOut: Error, CustomStringConvertible {
        var arguments: [String]
        var seconds: TimeInterval
        var description: String { "flow \(arguments.joined(separator: " ")) did not finish in \(Int(seconds))s" }
    }
}
