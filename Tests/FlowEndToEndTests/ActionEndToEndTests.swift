import Foundation
import Testing

/// Reusable actions (`actions:`, `use:`, `with:`, `flow run FILE ACTION --with`) seen
/// through the built binary, as a user of GitHub Actions' composite actions or go-task
/// meets them: what validation says at the `use` site, and what plan and run do.
@Suite struct ActionEndToEndTests {
    /// Only a shell step writes outputs: `steps.X.outputs.K` of a `use` step (GitHub
    /// Actions' composite actions have outputs, flow's actions do not), a group, a `print`
    /// or a `delay` was always empty at run time, without a word. Now an error that says
    /// what to do instead.
    @Test func outputsOfAStepThatIsNoShellStepAreAnError() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              build:
                steps:
                  - name: compile
                    shell: echo "art=bin" >> "$FLOW_OUTPUT"
                    outputs: [art]
            steps:
              - use: build
                name: b
              - name: g
                sequential:
                  - shell: "true"
              - name: p
                print: hi
              - print: "${{ steps.b.outputs.art }} ${{ steps.g.outputs.x }} ${{ steps.p.outputs.y }} ${{ steps.b.status }}"
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        for line in [
            "wf.yaml:15:33: error: step `b` is a `use` step, which has no outputs [undeclared-output]",
            "actions pass no outputs back: compute the value in a shell step before the `use` and pass it in with `with:`",
            "wf.yaml:15:60: error: step `g` is a `sequential` step, which has no outputs [undeclared-output]",
            "only shell steps write outputs: refer to the shell step inside the group that writes it",
            "wf.yaml:15:85: error: step `p` is a `print` step, which has no outputs [undeclared-output]",
            "wf.yaml:9:11: note: `b` is here",
        ] {
            #expect(validate.stderr.contains(line), "\(line)\n\(validate)")
        }
        #expect(validate.stderr.hasSuffix("3 errors in 1 file\n"), "\(validate)")
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 2 && run.stdout.isEmpty, "\(run)")
    }

    /// An action's steps and the workflow's are separate scopes; a reference across them
    /// said only "no step named `x`", as if the name were a typo. The help now says where
    /// the step is.
    @Test func aStepOfAnotherScopeIsNamedInTheHelp() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              a:
                steps:
                  - name: inner
                    shell: echo "v=1" >> "$FLOW_OUTPUT"
                  - print: "${{ steps.top.status }}"
            steps:
              - name: top
                print: top
              - use: a
              - print: "${{ steps.inner.outputs.v }}"
            """)
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        for line in [
            "wf.yaml:6:27: error: no step named `top` in action `a` [unknown-reference]",
            "^^^ `top` is a step of the workflow, which an action's steps cannot see: pass what they need in with `with:` on the `use` step",
            "wf.yaml:11:23: error: no step named `inner` in this workflow [unknown-reference]",
            "^^^^^ `inner` is a step of action `a`, seen only inside that action",
        ] {
            #expect(validate.stderr.contains(line), "\(line)\n\(validate)")
        }
    }

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
