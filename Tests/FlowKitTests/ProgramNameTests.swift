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

    /// A bare `argv[0]` other than `flow` that `PATH` finds as this file (a `flow-dev`
    /// symlink on `PATH`) is how it was started: said as such, not as the executable's path.
    @Test func aBareNameThePathFindsAsThisFile() throws {
        let layout = try Layout()
        defer { layout.remove() }
        try FileManager.default.createSymbolicLink(atPath: layout.root + "/bin/flow-dev",
                                                   withDestinationPath: layout.root + "/real/flow-1.2")
        #expect(ProgramName.name(argv0: "flow-dev", searchPath: "\(layout.root)/other:\(layout.root)/bin",
                                 executable: layout.executable) == "flow-dev")
        #expect(ProgramName.name(argv0: "flow-1.2", searchPath: "\(layout.root)/other",
                                 executable: layout.executable) == layout.executable)
    }

    /// A binary replaced while it ran: `/proc/self/exe` reads `PATH (deleted)`, and the
    /// file now at PATH stands for it; a link to nothing else is unknown.
    @Test func aReplacedExecutableIsTheFileNowAtItsPath() throws {
        let layout = try Layout()
        defer { layout.remove() }
        let link = layout.root + "/exe"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: layout.root + "/real/flow-1.2 (deleted)")
        #expect(ProgramName.executable(link: link) == layout.executable)
        #expect(ProgramName.executable(link: layout.root + "/bin/flow") == layout.executable)
        try FileManager.default.removeItem(atPath: layout.root + "/real/flow-1.2")
        #expect(ProgramName.executable(link: link) == nil)
        #expect(ProgramName.executable(link: layout.root + "/nonexistent") == nil)
    }
}
