import Foundation
@testable import FlowKit
import Testing

/// How the resume hint names flow: `flow` only when the shell would run this very file by
/// that name, else the path it was started by.
struct ProgramNameTests {
    /// A sandbox with `real/flow-1.2` (the executable), `bin/flow` (a symlink to it) and
    /// `other/flow` (a different flow).
    private struct Layout {
        let root: String
        let executable: String

        init() throws {
            root = NSTemporaryDirectory() + "program-name-" + UUID().uuidString
            let manager = FileManager.default
            for dir in ["real", "bin", "other"] {
                try manager.createDirectory(atPath: root + "/" + dir, withIntermediateDirectories: true)
            }
            for file in ["real/flow-1.2", "other/flow"] {
                #expect(manager.createFile(atPath: root + "/" + file, contents: Data("#!/bin/sh\n".utf8),
                                           attributes: [.posixPermissions: 0o755]))
            }
            try manager.createSymbolicLink(atPath: root + "/bin/flow", withDestinationPath: root + "/real/flow-1.2")
            executable = try #require(ProgramName.resolvedPath(root + "/real/flow-1.2"))
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    @Test func flowWhenThePathFindsThisFile() throws {
        let layout = try Layout()
        defer { layout.remove() }
        #expect(ProgramName.name(argv0: "flow", searchPath: "/nonexistent:\(layout.root)/bin",
                                 executable: layout.executable) == "flow")
        #expect(ProgramName.name(argv0: layout.root + "/real/flow-1.2", searchPath: "\(layout.root)/bin",
                                 executable: layout.executable) == "flow")
    }

    @Test func thePathItWasStartedByWhenThePathFindsAnotherOrNone() throws {
        let layout = try Layout()
        defer { layout.remove() }
        let started = layout.root + "/real/flow-1.2"
        #expect(ProgramName.name(argv0: started, searchPath: "\(layout.root)/other:\(layout.root)/bin",
                                 executable: layout.executable) == started)
        #expect(ProgramName.name(argv0: started, searchPath: "/nonexistent", executable: layout.executable) == started)
        #expect(ProgramName.name(argv0: started, searchPath: nil, executable: layout.executable) == started)
    }

    /// `argv[0]` without a slash the PATH does not resolve to this file, or one naming
    /// another file (a launcher may set it to anything): the executable's own path.
    @Test func theExecutableWhenArgv0CannotBeTrusted() throws {
        let layout = try Layout()
        defer { layout.remove() }
        #expect(ProgramName.name(argv0: "flow", searchPath: "\(layout.root)/other",
                                 executable: layout.executable) == layout.executable)
        #expect(ProgramName.name(argv0: layout.root + "/other/flow", searchPath: "/nonexistent",
                                 executable: layout.executable) == layout.executable)
        #expect(ProgramName.name(argv0: "", searchPath: "/nonexistent", executable: nil) == "flow")
    }
}
