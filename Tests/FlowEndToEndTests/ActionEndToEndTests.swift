import Foundation
import Testing

/// Reusable actions (`actions:`, `use:`, `with:`, `flow run FILE ACTION --with`) seen
/// through the built binary, as a user of GitHub Actions' composite actions or go-task
/// meets them: what validation says at the `use` site, and what plan and run do.
@Suite struct ActionEndToEndTests {
    /// `--with` naming no parameter of ACTION, with nothing close to suggest, had no help;
    /// `with:` in the file lists the parameters, so the command line does too.
    @Test func anUnknownWithOnTheCommandLineListsTheParameters() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true }
                  region: { default: eu }
                steps:
                  - print: "${{ params.env }} ${{ params.region }}"
              bare:
                steps:
                  - print: bare
            steps:
              - print: main
            """)
        let run = try box.run(["run", "wf.yaml", "deploy", "--with", "zzz=1", "--with", "env=prod"])
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr == "error: action `deploy` has no parameter `zzz`\nhelp: its parameters are `env`, `region`\n", "\(run)")
        let bare = try box.run(["plan", "wf.yaml", "bare", "--with", "x=1"])
        #expect(bare.status == 2, "\(bare)")
        #expect(bare.stderr.hasSuffix("help: it takes no parameters\n"), "\(bare)")
    }
}
