import Foundation
import Testing

/// flow where CI and containers run it: no `/proc`, no `PATH` or `HOME`, a `C` locale.
@Suite struct MinimalEnvironmentTests {
    /// Whether this machine lets the tests hide `/proc` (a user namespace with a mount
    /// namespace of its own, where a tmpfs is mounted over it); CI machines may forbid it.
    static let procCanBeHidden: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["--user", "--map-root-user", "--mount", "sh", "-c",
                           "mount -t tmpfs tmpfs /proc && test ! -e /proc/self"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// Without `/proc` (a chroot, a bubblewrap sandbox without `--proc`) Swift's runtime
    /// reads no arguments (it takes them from `/proc/self/cmdline`): every command of flow
    /// died of a failed range check (SIGILL, exit 132) before it said a word. It reads the
    /// C runtime's `argv` now, and a run works, journal included.
    @Test(.enabled(if: procCanBeHidden, "this machine does not let an unprivileged test hide /proc (user namespaces)"))
    func runsWithoutProc() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: echo building
              - name: check
                shell: exit 3
            """)
        let flow = try LiveFlow(executable: "/usr/bin/unshare",
                                arguments: ["--user", "--map-root-user", "--mount", "sh", "-c",
                                            "mount -t tmpfs tmpfs /proc && exec \"$0\" \"$@\"",
                                            RunSandbox.flowPath, "run", "wf.yaml"],
                                environment: box.environment, directory: box.root.path, ownGroup: false)
        let run = try flow.finish()
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("build | building"), "\(run)")
        #expect(run.stderr.contains("✗ check exit 3"), "\(run)")
        let runs = try box.run(["runs"])
        #expect(runs.status == 0 && runs.stdout.contains("1 succeeded, 1 failed"), "\(runs)")
    }

    /// `env -i flow run` (no `PATH`, `HOME`, `LANG`, `TERM`), as some CI agents and
    /// container entry points start it: a bare command name is found in the usual places,
    /// `${{ env.HOME }}` is empty, and the run is recorded in `.flow/` of the directory.
    @Test func runsWithAnEmptyEnvironment() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: hello
                shell: echo "hi [${{ env.HOME }}]"
            """)
        let run = try box.run(["run", "wf.yaml"], env: ["PATH": "", "HOME": "", "LANG": "", "FLOW_STATE_DIR": ""])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "hello | hi []\n", "\(run)")
        #expect(box.exists(".flow/journal.sqlite"), "\(run)")
    }

    /// Decision (docs/cli.md, Locale): no ASCII fallback. Under `LC_ALL=C`, `POSIX` or no
    /// locale at all, `plan` prints the same bytes as under `C.UTF-8`, and a run keeps its
    /// marks: the locale of a container says nothing about what shows its output.
    @Test(arguments: [["LC_ALL": "C"], ["LC_ALL": "POSIX"], ["LANG": ""]])
    func theLocaleChangesNoOutput(_ locale: [String: String]) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: echo "größe ☃"
              - concurrent:
                  - echo one
                  - echo two
            """)
        let utf8 = try box.run(["plan", "wf.yaml"])
        let other = try box.run(["plan", "wf.yaml"], env: locale)
        #expect(utf8.status == 0 && utf8.stdout.contains("└─ concurrent"), "\(utf8)")
        #expect(other.stdout == utf8.stdout, "\(other)")
        let run = try box.run(["run", "wf.yaml", "--no-journal"], env: locale)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("build     | größe ☃"), "\(run)")
        #expect(run.stderr.contains("✓ build"), "\(run)")
    }
}
