import Foundation
import Testing

/// `FORCE_COLOR`: colour without a terminal (a CI log that shows colours), unless
/// `NO_COLOR` or `--no-color` says otherwise. Before, nothing could make flow colour a pipe.
@Suite struct ForcedColorTests {
    static let escape = "\u{1B}["

    /// A run into pipes, as under CI: its own lines and the labels of step output coloured.
    @Test func forceColorColoursARunIntoPipes() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: echo building
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"], env: ["NO_COLOR": "", "FORCE_COLOR": "1"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("\u{1B}[36mbuild\u{1B}[0m | building"), "\(run)")
        #expect(run.stderr.contains("\u{1B}[32m✓\u{1B}[0m build"), "\(run)")
    }

    /// Diagnostics too; `FORCE_COLOR` wins over `TERM=dumb`.
    @Test func forceColorColoursDiagnostics() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - shell: echo hi\n    retyr: 2\n")
        let run = try box.run(["validate", "wf.yaml"], env: ["NO_COLOR": "", "FORCE_COLOR": "true", "TERM": "dumb"])
        #expect(run.status == 1)
        #expect(run.stderr.contains(Self.escape), "\(run)")
    }

    /// `NO_COLOR`, `--no-color`, and `FORCE_COLOR` empty or `0` leave a pipe plain.
    @Test(arguments: [
        (["FORCE_COLOR": "1"], [String]()),              // NO_COLOR=1 of the sandbox wins
        (["NO_COLOR": "", "FORCE_COLOR": "1"], ["--no-color"]),
        (["NO_COLOR": "", "FORCE_COLOR": "0"], []),
        (["NO_COLOR": ""], []),
    ])
    func noColorWinsAndZeroIsNotForcing(_ env: [String: String], _ flags: [String]) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - name: build\n    shell: echo building\n  - shell: exit 3\n")
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"] + flags, env: env)
        #expect(run.status == 1)
        #expect(!run.all.contains(Self.escape), "\(run)")
        try box.write("bad.yaml", "steps:\n  - shell: echo hi\n    retyr: 2\n")
        let check = try box.run(["validate", "bad.yaml"] + flags, env: env)
        #expect(check.status == 1 && check.stderr.contains("retyr"), "\(check)")
        #expect(!check.all.contains(Self.escape), "\(check)")
    }
}
