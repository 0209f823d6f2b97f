#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import FlowKit

/// Listing a directory reads each entry's name where `readdir` left it.
@Suite struct DirectoryEntryTests {
    /// A directory of thousands of entries fills `readdir`'s buffer many times over, so many
    /// entries end within 256 bytes of the buffer's end. Copying `d_name` whole read past it:
    /// that read shows only under AddressSanitizer (`Tests/sanitize.sh address
    /// FlowKitTests`), which stops the test process here without the fix; in any build the
    /// sweep must keep every other entry and remove the stale scratch directory.
    @Test func theScratchSweepListsADirectoryOfThousandsOfEntries() throws {
        let base = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let names = (0..<3000).map { "entry-\($0)" }
        for name in names { close(open("\(base)/\(name)", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)) }
        // Named for a pid no process can have (above Linux's pid_max ceiling of 2^22).
        let stale = "\(base)/flow-99999999-x"
        #expect(mkdir(stale, 0o700) == 0)
        close(open("\(stale)/1.out", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600))

        ScratchDirectory.removeStale(in: base)

        #expect(access(stale, F_OK) != 0, "the stale scratch directory is removed")
        #expect(try Self.list(base) == Set(names))
    }

    /// Names of every length, up to the longest a file system allows, come back whole.
    @Test func namesOfEveryLengthComeBackWhole() throws {
        let base = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let names = (1...255).map { String(repeating: "n", count: $0) } + ["é", "tab\there"]
        for name in names { close(open("\(base)/\(name)", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)) }
        #expect(try Self.list(base) == Set(names))
    }

    static func list(_ dir: String) throws -> Set<String> {
        let handle = try #require(opendir(dir))
        defer { closedir(handle) }
        var found: Set<String> = []
        while let entry = readdir(handle) {
            let name = String(decoding: DirectoryEntry.name(entry), as: UTF8.self)
            #expect(name == DirectoryEntry.string(entry))
            if name != ".", name != ".." { found.insert(name) }
        }
        return found
    }

    static func temporaryDirectory() throws -> String {
        var template = Array("/tmp/flow-dirent-test-XXXXXX".utf8CString)
        return try #require(template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap(mkdtemp).map { String(cString: $0) } })
    }
}
