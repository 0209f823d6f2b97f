import Foundation
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// What a CI system reads from flow, through the built binary: GitHub Actions workflow
/// commands (`validate --format github`, grouped output under `GITHUB_ACTIONS=true`) and
/// the JUnit report.
@Suite struct CIReportTests {
    /// A CR LF in a message (here a step name written with `\r\n`) went out raw: Swift's
    /// `Character` for CR LF is one grapheme, equal to neither `"\r"` nor `"\n"`, so the
    /// escaping skipped it, and the runner read the rest as a line (a command) of its own.
    @Test func githubCommandsEscapeCRLF() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            steps:
              - name: "a\r\n::error::forged"
                shell: echo
            """#)
        let r = try box.run(["validate", "--format", "github", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        // Counted in bytes: `split` on a `String` keeps CR LF whole, as the escaping did.
        #expect(r.stdout.utf8.split(separator: 0x0A).count == 1, "one command per problem, on one line: \(r)")
        #expect(r.stdoutLines.first?.hasPrefix("::error file=wf.yaml,line=2,col=11,") == true, "\(r)")
        #expect(r.stdout.contains("invalid step name `a%0D%0A::error::forged`"), "\(r)")
        #expect(!r.stdout.contains("\r"), "\(r)")
    }
}
