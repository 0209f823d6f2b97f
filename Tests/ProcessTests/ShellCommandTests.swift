@testable import FlowKit
import Testing

/// Which command lines are run without a shell.
struct ShellCommandTests {
    @Test(arguments: [
        ("true", ["true"]),
        ("sleep 1", ["sleep", "1"]),
        ("  make  -j4\tall ", ["make", "-j4", "all"]),
        ("./build.sh --out=dist/x,y:z +a @b 50%", ["./build.sh", "--out=dist/x,y:z", "+a", "@b", "50%"]),
        ("/usr/bin/env A=1", ["/usr/bin/env", "A=1"]),
        ("git commit -m fix", ["git", "commit", "-m", "fix"]),
    ])
    func plainWordsRunDirectly(command: String, argv: [String]) {
        #expect(ShellCommand.directArgv(command) == argv)
    }

    @Test(arguments: [
        "", "   ", "echo $HOME", "a 'b'", "a \"b\"", "a\\ b", "ls *.txt", "ls ?", "ls [ab]",
        "a > f", "a < f", "a | b", "a; b", "a & b", "a && b", "(a)", "a\nb", "~/bin/x", "a #c",
        "FOO=1 cmd", "cd /tmp", "export A=1", "exit 1", "set -e", "if", "for", ". ./env",
        "source x", "eval x", "exec x", "alias a=b", "unset A", "echo hi", "wait", "kill 1",
        "a `b`", "a {b,c}", "a !b", "héllo",
    ])
    func shellSyntaxNeedsAShell(command: String) {
        #expect(ShellCommand.directArgv(command) == nil)
    }

    @Test func argvResolvesOrFallsBackToTheShell() {
        let env = ["PATH": "/usr/bin:/bin"]
        #expect(ShellCommand.argv(for: "sleep 1", environment: env).first?.hasSuffix("/sleep") == true)
        #expect(ShellCommand.argv(for: "flow-missing-tool x", environment: env) == ["/bin/sh", "-c", "flow-missing-tool x"])
        #expect(ShellCommand.argv(for: "echo $X", shell: ["bash", "-c"], environment: env) == ["bash", "-c", "echo $X"])
    }
}
