import Foundation
import Testing

/// flow where CI and containers run it: no `/proc`, no `PATH` or `HOME`, a `C` locale.
@Suite struct MinimalEnvironmentTests {
    /// Whether this machine lets the tests hide `/proc` (a user namespace with a mount
    /// namespace of its own, where a tmpfs is mounted over it); CI machines may forbid it.
    static let procCanBeHidden = canHide("/proc", probing: "/proc/self")

    /// Whether this machine lets the tests hide `/dev` so (see `procCanBeHidden`).
    static let devCanBeHidden = canHide("/dev", probing: "/dev/null")

    private static func canHide(_ directory: String, probing file: String) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["--user", "--map-root-user", "--mount", "sh", "-c",
                           "mount -t tmpfs tmpfs \(directory) && test ! -e \(file)"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    /// `flow arguments…` in the sandbox, with an empty tmpfs mounted over `directory`.
    private static func runHiding(_ directory: String, _ box: RunSandbox, _ arguments: [String]) throws -> FlowOutcome {
        let flow = try LiveFlow(executable: "/usr/bin/unshare",
                                arguments: ["--user", "--map-root-user", "--mount", "sh", "-c",
                                            "mount -t tmpfs tmpfs \(directory) && exec \"$0\" \"$@\"",
                                            RunSandbox.flowPath] + arguments,
                                environment: box.environment, directory: box.root.path, ownGroup: false)
        return try flow.finish()
    }

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
        let run = try Self.runHiding("/proc", box, ["run", "wf.yaml"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("build | building"), "\(run)")
        #expect(run.stderr.contains("✗ check exit 3"), "\(run)")
        let runs = try box.run(["runs"])
        #expect(runs.status == 0 && runs.stdout.contains("1 succeeded, 1 failed"), "\(runs)")
    }

    /// Without `/proc`, libdispatch cannot watch its worker pool (it reads
    /// `/proc/TID/stat` of each worker every second while work waits) and kills flow with
    /// SIGILL when it finds work waiting: one run in five of `runsWithoutProc` died so.
    /// Flow keeps its jobs and sleeps off the watched pool there (`DispatchPool`). Without
    /// that, this run of 480 short delays died in 9 of 12 tries of a release build and in 2
    /// of 10 of the debug build the suite runs (the odds depend on the load): a test that
    /// fails only now and then without the fix, the best one found; with it, 0 in 60.
    @Test(.enabled(if: procCanBeHidden, "this machine does not let an unprivileged test hide /proc (user namespaces)"))
    func manyShortSleepsWithoutProcEndNormally() throws {
        let box = try RunSandbox()
        let stage = "  - concurrent:\n" + (0..<40).map { "      - { delay: \(20 + $0)ms }\n" }.joined()
        try box.write("wf.yaml", "steps:\n" + String(repeating: stage, count: 12))
        for _ in 0..<3 {
            let run = try Self.runHiding("/proc", box, ["run", "wf.yaml", "--output", "prefixed"])
            #expect(run.status == 0 && run.stderr.contains("✓ succeeded: 480 succeeded in"), "\(run)")
        }
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

    /// Without `/dev` (a chroot or sandbox that mounts none) a step's stdin is an empty
    /// pipe in place of `/dev/null`: it reads end-of-file just the same. flow died on a
    /// failed precondition (`cannot open /dev/null`) at its first shell step.
    @Test(.enabled(if: devCanBeHidden, "this machine does not let an unprivileged test hide /dev (user namespaces)"))
    func runsWithoutDev() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: read
                shell: if read line; then echo "read $line"; else echo "end of input"; fi
              - name: fed
                stdin: hello
                shell: cat
            """)
        let run = try Self.runHiding("/dev", box, ["run", "wf.yaml"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "read | end of input\nfed  | hello\n", "\(run)")
    }
}
