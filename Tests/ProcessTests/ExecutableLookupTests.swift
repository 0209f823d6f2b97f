import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import FlowKit
import Testing

/// Finding a command through the child's PATH, with the lookup cache.
struct ExecutableLookupTests {
    /// A fresh directory with two PATH entries in it; the test removes `root` when done.
    private func sandbox() -> (root: String, first: String, second: String) {
        var template = Array("/tmp/flow-lookup-XXXXXX".utf8CString)
        let root = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        mkdir(root + "/a", 0o755)
        mkdir(root + "/b", 0o755)
        return (root, root + "/a", root + "/b")
    }

    private func install(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o755)
        close(fd)
    }

    @Test func aProgramInstalledAfterAMissIsFound() {
        let (root, first, second) = sandbox()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let env = ["PATH": "\(first):\(second)"]
        #expect(ExecutableLookup.resolve("tool", environment: env) == nil)
        install(second + "/tool")
        #expect(ExecutableLookup.resolve("tool", environment: env) == second + "/tool", "misses are not cached")
    }

    @Test func aRemovedProgramIsLookedUpAgain() {
        let (root, first, second) = sandbox()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let env = ["PATH": "\(first):\(second)"]
        install(first + "/tool")
        install(second + "/tool")
        #expect(ExecutableLookup.resolve("tool", environment: env) == first + "/tool")
        unlink(first + "/tool")
        #expect(ExecutableLookup.resolve("tool", environment: env) == second + "/tool", "a cached hit is checked")
        unlink(second + "/tool")
        #expect(ExecutableLookup.resolve("tool", environment: env) == nil)
    }

    @Test func theChildsPathDecides() {
        let (root, first, second) = sandbox()
        defer { try? FileManager.default.removeItem(atPath: root) }
        install(first + "/tool")
        install(second + "/tool")
        #expect(ExecutableLookup.resolve("tool", environment: ["PATH": first]) == first + "/tool")
        #expect(ExecutableLookup.resolve("tool", environment: ["PATH": second]) == second + "/tool")
    }
}
