import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `flow run` through the built binary: step kinds, groups, options, expressions, rollback
/// and output modes. Each test writes its workflow into a fresh sandbox; the steps leave
/// evidence in files there (`log`, `count`), since file order is what proves run order.
@Suite struct RunTests {
    /// Whether `text` has the line `label | message` (label padding ignored).
    static func hasLine(_ text: String, _ line: String) -> Bool {
        text.split(separator: "\n").contains { LiveFlow.squeeze(String($0)) == line }
    }

    // MARK: step kinds

    /// A multi-line message (a YAML block) is printed line by line: each with the step's
    /// prefix, each its own JSON event; the block's last line break ends its last line.
    @Test func aMultiLinePrintIsPrintedLineByLine() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: msg
                print: |
                  first

                  third
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.stdout == "msg | first\nmsg | \nmsg | third\n", "\(r)")
        let json = try box.run(["run", "wf.yaml", "--output", "json"])
        let lines = json.jsonEvents.filter { $0["event"] as? String == "output" }.compactMap { $0["line"] as? String }
        #expect(lines == ["first", "", "third"], "\(json)")
    }

    /// Step names repeat only across actions' scopes (an action used twice): such steps
    /// are labelled `name@path` in the output, `flow logs` and `flow show`, so a line or a
    /// failure says which one. Before, both were `push`: `✗ push exit 1` named neither.
    @Test func stepsThatShareANameAreLabelledByPath() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params: { env: { required: true } }
                steps:
                  - name: push
                    shell: echo "pushing ${{ params.env }}"; test "${{ params.env }}" = staging
            steps:
              - concurrent:
                  - { use: deploy, with: { env: staging } }
                  - { use: deploy, with: { env: prod } }
                fail_fast: false
              - { name: push, shell: echo top }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(Set(r.stdoutLines) == ["push@1.1.1 | pushing staging", "push@1.2.1 | pushing prod"], "\(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("✗ push@1.2.1 exit 1 ") }, "\(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("✓ push@1.1.1 ") }, "\(r)")
        let logs = try box.run(["logs", "last"])
        #expect(Set(logs.stdoutLines) == ["push@1.1.1 | pushing staging", "push@1.2.1 | pushing prod"], "\(logs)")
        let one = try box.run(["logs", "last", "push@1.2.1"])
        #expect(one.stdout == "pushing prod\n", "\(one)")
    }

    /// Prefixed lines start in one column whatever labels the steps carry: an unnamed
    /// step's `shell@2` and a shared name's `push@3.1.1` count, as names do. Before, only
    /// names counted, so `build      | …` and `shell@2 | …` did not line up.
    @Test func prefixedLabelsArePaddedToTheWidestLabel() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                steps:
                  - { name: push, shell: echo pushed }
            steps:
              - { name: build, shell: echo built }
              - shell: echo unnamed
              - sequential:
                  - use: deploy
                  - use: deploy
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines == ["build      | built", "shell@2    | unnamed", "push@3.1.1 | pushed", "push@3.2.1 | pushed"],
                "\(r)")
        // Undo steps' labels count too: a rollback's lines line up with the run's.
        try box.write("undo.yaml", """
            rollback: true
            steps:
              - name: create
                shell: echo created
                undo:
                  - shell: echo removed
              - { name: boom, shell: exit 1 }
            """)
        let undo = try box.run(["run", "undo.yaml", "--output", "prefixed"])
        #expect(undo.status == 1, "\(undo)")
        #expect(undo.stdoutLines == ["create     | created", "shell@1.u1 | removed"], "\(undo)")
    }

    @Test func printGoesToItsStream() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: p
            steps:
              - name: out
                print: to stdout
              - name: err
                print: to stderr
                stream: stderr
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(Self.hasLine(r.stdout, "out | to stdout"), "\(r)")
        #expect(!r.stdout.contains("to stderr"), "\(r)")
        #expect(Self.hasLine(r.stderr, "err | to stderr"), "\(r)")
    }

    @Test func delayWaits() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - delay: 400ms
              - name: after
                print: after the delay
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(r.elapsed >= 0.4)
        #expect(Self.hasLine(r.stdout, "after | after the delay"), "\(r)")
    }

    @Test func shellDirEnvAndStdin() throws {
        let box = try RunSandbox()
        try FileManager.default.createDirectory(atPath: box.path("sub"), withIntermediateDirectories: true)
        try box.write("wf.yaml", """
            env: { A: wf, B: wf, C: wf }
            steps:
              - name: grp
                env: { B: group, C: group }
                sequential:
                  - name: show
                    env: { C: step }
                    dir: sub
                    stdin: "line one\\nline two\\n"
                    shell: |
                      echo "A=$A B=$B C=$C"
                      pwd
                      cat
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(Self.hasLine(r.stdout, "show | A=wf B=group C=step"), "\(r)")
        #expect(Self.hasLine(r.stdout, "show | \(box.path("sub"))"), "\(r)")
        #expect(Self.hasLine(r.stdout, "show | line one"), "\(r)")
        #expect(Self.hasLine(r.stdout, "show | line two"), "\(r)")
    }

    @Test func stdinIsDevNullByDefaultAndEnvIsInherited() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: s
                shell: $CHILD --echo-stdin --print-env FLOW_TEST_MARKER --print end
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines.map(LiveFlow.squeeze) == ["s | FLOW_TEST_MARKER=\(box.marker)", "s | end"], "\(r)")
    }

    @Test func quickStepsEndAsSoonAsTheyExit() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n" + (1...10).map { "  - name: t\($0)\n    shell: \"true\"\n" }.joined())
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        let elapsed = r.jsonEvents.filter { $0["event"] as? String == "step_state" && $0["to"] as? String == "succeeded" }
            .compactMap { $0["elapsed_seconds"] as? Double }
        #expect(elapsed.count == 10)
        // A bound, as the property is one: below the 200 ms the hub waits for a step's pipes
        // after its exit. `true` takes a few milliseconds; 0.15 s is over ten times that.
        #expect(elapsed.allSatisfy { $0 < 0.15 }, "`true` takes milliseconds, not the drain deadline: \(elapsed)")
    }

    /// Too few open files for even one step (flow's own loop, signal pipe and journal, the
    /// step's pipes): a clear error and exit 2 before anything runs, not a crash (16–20) or
    /// a spawn retried forever (24). `validate` needs none of that and still works.
    @Test func tooFewOpenFilesIsAnErrorBeforeAnythingRuns() throws {
        let box = try RunSandbox()
        try box.write("w.yaml", "steps:\n  - shell: touch ran\n")
        let result = try Self.runWithoutInheritedDescriptors(in: box, script: #"""
            ulimit -n 24
            "$0" run w.yaml --no-journal; echo "run $?"
            "$0" validate w.yaml; echo "validate $?"
            [ -e ran ] && echo "a step ran" || echo "nothing ran"
            """#)
        #expect(result.stdout == "run 2\nw.yaml: valid\nvalidate 0\nnothing ran\n", "\(result)")
        #expect(result.stderr == "error: flow may open only 24 files at once (ulimit -n); running steps needs at least 64: "
                + "raise the limit (e.g. `ulimit -n 1024`)\n", "\(result)")
    }

    /// A per-user process limit (`ulimit -u`) the user's processes already fill: exit 2 with
    /// the limit named, for every command, before flow needs a thread. Found by the
    /// hostile-environment audit: Swift's runtime gets its threads from libdispatch, which,
    /// refused one, sleeps and asks again for ever: `flow validate` and `flow run` hung
    /// without a word (`prlimit --nproc=1`), or died on a failed precondition with a
    /// backtrace (`--nproc=4`). Root is not held to the limit: as root the test drops to
    /// `nobody` with setpriv, and is skipped where it cannot.
    @Test(.enabled(if: access("/usr/bin/prlimit", X_OK) == 0 && (getuid() != 0 || access("/usr/bin/setpriv", X_OK) == 0),
                   "needs prlimit (and setpriv as root)"))
    func aProcessLimitTheUserFillsIsAnErrorBeforeAnythingRuns() throws {
        let box = try RunSandbox()
        try box.write("w.yaml", "steps:\n  - shell: echo hi\n")
        let drop = getuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : ""
        // The limit first, then the drop: setpriv execs flow itself, with root's leave to
        // enter the build's directory, which may be one only its owner may enter (a clone
        // under `mktemp -d`, as CI's); prlimit dropped to `nobody` could not ("Permission
        // denied", exit 126). Root's own processes are not held to the limit it sets.
        chmod(box.root.path, 0o755)
        for (limit, command) in [(1, ["validate", "w.yaml"]), (1, ["run", "w.yaml"]), (4, ["run", "w.yaml", "--no-journal"])] {
            let flow = try LiveFlow(executable: "/bin/sh",
                                    arguments: ["-c", "exec prlimit --nproc=\(limit) \(drop)\"$0\" \"$@\"", RunSandbox.flowPath] + command,
                                    environment: box.environment, directory: box.root.path, ownGroup: false)
            let r = try flow.finish(timeout: 30)
            #expect(r.status == 2, "\(command): \(r)")
            #expect(r.stderr.hasPrefix("error: this user may have only \(limit) processes and threads at once (ulimit -u) and has "),
                    "\(command): \(r)")
            #expect(r.stderr.hasSuffix("flow needs at least 16 more (its own threads and the steps): raise the limit "
                    + "(e.g. `ulimit -u 4096`) or end some of them\n"), "\(command): \(r)")
            #expect(r.stdout.isEmpty, "\(command): \(r)")
        }
    }

    /// flow raises its own open-files limit to the hard limit (to run many steps at once), but
    /// a step starts with the limit flow was given, as under Go's os/exec: it inherited the
    /// raise (found by the hostile-environment audit), and a program that closes every
    /// descriptor up to the limit, or uses select(), slows down or breaks under a large one.
    @Test func aStepGetsTheOpenFileLimitFlowWasStartedWith() throws {
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        guard limit.rlim_max > 512 else { return }  // nothing flow could raise
        let box = try RunSandbox()
        try box.write("w.yaml", "steps:\n  - shell: ulimit -Sn > soft\n")
        let flow = try LiveFlow(executable: "/bin/sh",
                                arguments: ["-c", "ulimit -Sn 512 && exec \"$0\" \"$@\"", RunSandbox.flowPath, "run", "w.yaml"],
                                environment: box.environment, directory: box.root.path, ownGroup: false)
        let r = try flow.finish(timeout: 30)
        #expect(r.status == 0, "\(r)")
        #expect(box.read("soft") == "512\n", "the step's soft limit: \(box.read("soft") ?? "none")")
    }

    /// Descriptors the parent left open count against the limit: with 7 of them, 70 files
    /// leave 63 free (an error before anything runs; it used to crash or wait forever), 71
    /// leave 64 (the run goes on). One numbered above the limit (200) takes no slot.
    @Test func descriptorsLeftOpenByTheParentCountAgainstTheLimit() throws {
        let box = try RunSandbox()
        try box.write("w.yaml", "steps:\n  - shell: touch ran\n")
        let result = try Self.runWithoutInheritedDescriptors(in: box, script: #"""
            exec 3</dev/null 4</dev/null 5</dev/null 6</dev/null 7</dev/null 8</dev/null 9</dev/null 200</dev/null
            (ulimit -n 70; "$0" run w.yaml --no-journal; echo "run $?")
            [ -e ran ] && echo "a step ran" || echo "nothing ran"
            (ulimit -n 71; "$0" run w.yaml --no-journal --output raw; echo "run $?")
            [ -e ran ] && echo "a step ran" || echo "nothing ran"
            """#)
        #expect(result.stdout == "run 2\nnothing ran\nrun 0\na step ran\n", "\(result)")
        #expect(result.stderr.hasPrefix("error: flow may open only 70 files at once (ulimit -n) and the process that "
                + "started it left 7 more than stdin, stdout and stderr open; running steps needs at least 64 free: "
                + "raise the limit (e.g. `ulimit -n 1024`) or close those files before starting flow\n"), "\(result)")
    }

    /// Runs `script` with bash (the flow binary as `$0`), after closing every descriptor
    /// but stdin, stdout and stderr: the test runner leaves some open (a socket), which
    /// flow rightly counts as taken.
    static func runWithoutInheritedDescriptors(in box: RunSandbox, script: String) throws -> FlowBinary.Result {
        try box.write("script.sh", #"""
            for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
            """# + "\n" + script + "\n")
        return try FlowBinary.run([], in: box.root, shellScript: #"exec bash -c "$(cat script.sh)" "$0""#)
    }

    @Test func nonZeroExitFailsTheRun() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: bad
                shell: exit 7
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("✗ bad exit 7") }, "\(r)")
    }

    /// A command without shell syntax is exec'd directly, with the result the shell would
    /// give: a script without a `#!` line runs (the shell runs it itself; the exec failed
    /// with "exec format error"), and a file that cannot be executed exits 126, as in a
    /// shell (it was 127, "not found"'s status).
    @Test func aDirectCommandTheKernelRefusesRunsAsTheShellWouldRunIt() throws {
        let box = try RunSandbox()
        try box.write("plain.sh", "echo plain ran >> log\n")
        try box.write("noexec.sh", "#!/bin/sh\necho noexec ran >> log\n")
        chmod(box.path("plain.sh"), 0o755)
        chmod(box.path("noexec.sh"), 0o644)
        try box.write("wf.yaml", """
            steps:
              - { name: plain, shell: ./plain.sh }
              - { name: noexec, shell: ./noexec.sh, continue_on_error: true }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["plain ran"], "\(r)")
        #expect(r.finalState(of: "plain") == "succeeded", "\(r)")
        let failed = r.jsonEvents.last { $0["name"] as? String == "noexec" && $0["to"] as? String == "failed" }
        #expect(failed?["exit_code"] as? Int == 126, "\(r)")
    }

    /// A shell the step cannot find is named as the workflow names it (`shell: ksh`), not
    /// by the `/bin/ksh` flow tried last.
    @Test(.enabled(if: access("/bin/ksh", F_OK) != 0, "needs a machine without /bin/ksh"))
    func aMissingShellIsNamedAsWritten() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            shell: ksh
            steps:
              - { name: k, shell: echo "$0" | cat, env: { PATH: /nonexistent }, retry: { limit: 3, delay: 10s } }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("k | flow: shell `ksh` not found (not in the step's PATH, nor /bin/ksh)"), "\(r)")
        // Every attempt would look in the same PATH: not retried (it waited 30 s to fail).
        #expect(!r.all.contains("retry"), "\(r)")
        #expect(!r.all.contains("attempt 2"), "\(r)")
    }

    /// A step's shell that is there but cannot be executed (no execute permission, a
    /// directory) fails the step with 126, as bash and dash report a command found but not
    /// executable, and 127 only for one not found; the message names it. Wherever the shell
    /// is chosen: the workflow's `shell`, a group's, or a `use` step's (for its action's
    /// steps), by path or found in the step's PATH. Not retried: it would be refused again.
    @Test func aShellThatCannotBeExecutedFailsWith126() throws {
        let box = try RunSandbox()
        try FileManager.default.createDirectory(atPath: box.path("ne"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: box.path("bin"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: box.path("dir/bash"), withIntermediateDirectories: true)
        try box.write("ne/bash", "#!/bin/sh\necho ran >> log\n")
        try box.write("bin/zsh", "#!/bin/sh\necho ran >> log\n")
        chmod(box.path("ne/bash"), 0o644)
        chmod(box.path("bin/zsh"), 0o644)
        try box.write("wf.yaml", """
            shell: \(box.path("ne/bash"))
            env: { PATH: \(box.path("bin")) }
            actions:
              act:
                steps:
                  - { name: in-action, shell: "echo a; echo b", continue_on_error: true }
            steps:
              - { name: top, shell: "echo a; echo b", continue_on_error: true, retry: { limit: 2, delay: 10s } }
              - name: grp
                shell: \(box.path("dir/bash"))
                sequential:
                  - { name: in-dir, shell: "echo a; echo b", continue_on_error: true }
              - { use: act, shell: zsh }
              - name: gone-group
                shell: \(box.path("none/bash"))
                sequential:
                  - { name: gone, shell: "echo a; echo b", continue_on_error: true }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        #expect(box.read("log") == nil, "nothing ran: \(r)")
        let ends = Dictionary(r.jsonEvents.filter { $0["to"] as? String == "failed" && $0["kind"] as? String == "shell" }
            .map { ($0["name"] as? String ?? "", $0["exit_code"] as? Int ?? -1) }, uniquingKeysWith: { $1 })
        #expect(ends == ["top": 126, "in-dir": 126, "in-action": 126, "gone": 127], "\(r)")
        let messages = r.jsonEvents.compactMap { $0["event"] as? String == "output" ? $0["line"] as? String : nil }
        #expect(messages.contains("flow: shell `\(box.path("ne/bash"))` is not executable: permission denied"), "\(r)")
        #expect(messages.contains("flow: shell `\(box.path("dir/bash"))` is a directory"), "\(r)")
        #expect(messages.contains("flow: shell `zsh` is not executable: \(box.path("bin"))/zsh has no execute permission for this user"),
                "\(r)")
        #expect(messages.contains("flow: shell `\(box.path("none/bash"))` not found"), "\(r)")
        #expect(!r.all.contains("retrying"), "refused again on every attempt: \(r)")
    }

    // MARK: groups

    static let sequentialWorkflow = """
        steps:
          - name: first
            shell: echo first >> log
          - name: boom
            shell: exit 1
            CONTINUE
          - name: later
            shell: echo later >> log
        """

    @Test func sequentialStopsAfterAFailure() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.sequentialWorkflow.replacingOccurrences(of: "CONTINUE", with: ""))
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["first"])
        #expect(r.finalState(of: "boom") == "failed", "\(r)")
        #expect(r.finalState(of: "later") == "skipped", "\(r)")
    }

    @Test func continueOnErrorGoesOn() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.sequentialWorkflow.replacingOccurrences(of: "CONTINUE", with: "continue_on_error: true"))
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["first", "later"])
        #expect(r.finalState(of: "boom") == "failed", "\(r)")
    }

    static func pool(_ count: Int, maxParallel: Int?, sleep: String = "0.4") -> String {
        var text = "steps:\n  - name: pool\n"
        if let maxParallel { text += "    max_parallel: \(maxParallel)\n" }
        text += "    concurrent:\n"
        for i in 1...count {
            text += "      - name: w\(i)\n        shell: echo start w\(i) >> log; sleep \(sleep); echo end w\(i) >> log\n"
        }
        return text
    }

    @Test func concurrentRespectsMaxParallel() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.pool(6, maxParallel: 2))
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        let log = box.lines("log")
        #expect(log.count == 12, "\(log)")
        #expect(maxConcurrency(log) == 2, "at most 2 at once, and 2 did run together: \(log)")
    }

    @Test func concurrentWithoutLimitRunsTogether() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.pool(3, maxParallel: nil, sleep: "1"))
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(maxConcurrency(box.lines("log")) == 3, "\(box.lines("log"))")
    }

    @Test func maxParallelOptionCapsTheWholeRun() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: outer
                concurrent:
                  - name: left
                    concurrent:
                      - { name: l1, shell: "echo start >> log; sleep 0.3; echo end >> log" }
                      - { name: l2, shell: "echo start >> log; sleep 0.3; echo end >> log" }
                  - name: right
                    concurrent:
                      - { name: r1, shell: "echo start >> log; sleep 0.3; echo end >> log" }
                      - { name: r2, shell: "echo start >> log; sleep 0.3; echo end >> log" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--max-parallel", "2"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log").count == 8)
        #expect(maxConcurrency(box.lines("log")) <= 2, "\(box.lines("log"))")
        let one = try box.run(["run", "wf.yaml", "--output", "prefixed", "--max-parallel", "1"])
        #expect(one.status == 0, "\(one)")
        #expect(box.lines("log").count == 16)
        #expect(maxConcurrency(Array(box.lines("log").suffix(8))) == 1, "\(box.lines("log"))")
    }

    /// A step queued behind `--max-parallel` has not started: its time-out does not run
    /// while it waits (it timed out without having run), and a fail-fast sibling's failure
    /// skips it rather than starting and cancelling it.
    @Test func aStepQueuedByMaxParallelHasNotStarted() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - { name: slow, shell: sleep 1.5 }
                  - { name: quick, shell: echo quick >> log, timeout: 1s }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--max-parallel", "1"])
        #expect(r.status == 0, "\(r)")
        #expect(r.finalState(of: "quick") == "succeeded", "\(r)")
        #expect(box.lines("log") == ["quick"])

        try box.write("ff.yaml", """
            steps:
              - concurrent:
                  - { name: boom, shell: sleep 0.2; exit 1 }
                  - { name: b, shell: echo b >> ff-log }
                  - { name: c, shell: echo c >> ff-log }
            """)
        let ff = try box.run(["run", "ff.yaml", "--output", "json", "--max-parallel", "1"])
        #expect(ff.status == 1, "\(ff)")
        #expect(ff.finalState(of: "b") == "skipped", "\(ff)")
        #expect(ff.finalState(of: "c") == "skipped", "\(ff)")
        #expect(!FileManager.default.fileExists(atPath: box.root.appendingPathComponent("ff-log").path))
    }

    static func failFast(_ failFast: Bool) -> String {
        """
        steps:
          - name: pair
            fail_fast: \(failFast)
            concurrent:
              - name: sleeper
                shell: touch started; $CHILD --sleep \(failFast ? "30" : "1"); echo finished >> log
              - name: breaker
                shell: while [ ! -f started ]; do sleep 0.02; done; exit 1
        """
    }

    @Test func failFastCancelsRunningSiblings() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.failFast(true))
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--grace", "2s"])
        #expect(r.status == 1, "\(r)")
        // The 30 s sleeper was cancelled, not waited for: its `finished` is not in `log`.
        #expect(r.finalState(of: "sleeper") == "cancelled", "\(r)")
        #expect(r.finalState(of: "breaker") == "failed", "\(r)")
        // Its event says why, as a sibling skipped for it does (docs/events.md).
        let cancelled = r.jsonEvents.first { $0["name"] as? String == "sleeper" && $0["to"] as? String == "cancelled" }
        #expect(cancelled?["reason"] as? String == "its group was stopped (a timeout or fail_fast)", "\(r)")
        #expect(box.lines("log").isEmpty)
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func failFastFalseLetsSiblingsFinish() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.failFast(false))
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(r.finalState(of: "sleeper") == "succeeded", "\(r)")
        #expect(r.finalState(of: "breaker") == "failed", "\(r)")
        #expect(box.lines("log") == ["finished"])
    }

    @Test func failFastSkipsSiblingsNotStarted() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: pair
                max_parallel: 1
                concurrent:
                  - { name: breaker, shell: exit 1 }
                  - { name: waiting, shell: echo ran >> log }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(r.finalState(of: "waiting") == "skipped", "\(r)")
        #expect(box.lines("log").isEmpty)
    }

    /// Without fail-fast, the siblings `max_parallel` holds back still start after one
    /// failed (they were skipped, "an earlier step failed", as in a sequential group), and
    /// the group fails once they are done.
    @Test func failFastFalseStartsSiblingsHeldBackByMaxParallel() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: pair
                max_parallel: 1
                fail_fast: false
                concurrent:
                  - { name: breaker, shell: exit 1 }
                  - { name: w1, shell: echo w1 >> log }
                  - { name: w2, shell: echo w2 >> log }
                  - { name: w3, shell: echo w3 >> log }
              - { name: after, shell: echo after >> log }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["w1", "w2", "w3"], "\(r)")
        #expect(r.finalState(of: "pair") == "failed", "\(r)")
        #expect(r.finalState(of: "after") == "skipped", "\(r)")
    }

    /// A nested group is one child of its `concurrent` parent's `max_parallel`: it holds its
    /// slot from its first step's start to its last one's end, so with `max_parallel: 1` the
    /// sibling after it never starts between the group's steps (had each step taken a slot,
    /// the sibling could have had the one `n1` gave back), and a sibling before it keeps the
    /// group's first step waiting. Shown by the order of the events, not by timing.
    @Test(arguments: [true, false])
    func aNestedGroupIsOneChildOfItsParentsMaxParallel(_ groupFirst: Bool) throws {
        let box = try RunSandbox()
        let group = """
                  - name: nested
                    sequential:
                      - { name: n1, shell: echo n1 >> log }
                      - { name: n2, shell: echo n2 >> log }

            """
        let sibling = "      - { name: sibling, shell: echo sibling >> log }\n"
        try box.write("wf.yaml", """
            steps:
              - name: pair
                max_parallel: 1
                concurrent:

            """ + (groupFirst ? group + sibling : sibling + group))
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        let order = r.jsonEvents.filter { $0["event"] as? String == "step_state" }
            .compactMap { event -> String? in
                guard let name = event["name"] as? String, let to = event["to"] as? String,
                      name != "pair", to == "running" || to == "succeeded" else { return nil }
                return "\(name) \(to)"
            }
        let nested = ["nested running", "n1 running", "n1 succeeded", "n2 running", "n2 succeeded", "nested succeeded"]
        let alone = ["sibling running", "sibling succeeded"]
        #expect(order == (groupFirst ? nested + alone : alone + nested), "\(r)")
        #expect(box.lines("log") == (groupFirst ? ["n1", "n2", "sibling"] : ["sibling", "n1", "n2"]), "\(r)")
    }

    @Test func finallyRunsAfterAFailure() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                sequential:
                  - { name: boom, shell: exit 1 }
                finally:
                  - { name: inner_fin, shell: "echo inner ${{ run.status }} >> log" }
            finally:
              - name: fin
                shell: echo "outer ${{ run.status }}" >> log
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["inner failed", "outer failed"], "\(r)")
    }

    @Test func failingFinallyFailsTheRun() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: ok, shell: echo ok >> log }
            finally:
              - name: fin
                shell: echo "fin ${{ run.status }}" >> log; exit 3
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["ok", "fin succeeded"])
        #expect(r.stderrLines.contains { $0.hasPrefix("✗ fin exit 3") }, "\(r)")
    }

    // MARK: options

    @Test func timeoutEndsAsTimedOut() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: slow
                timeout: 300ms
                shell: $CHILD ready --sleep 3600
            """)
        // The child sleeps an hour: the run ending within the test's 60 s, with no process
        // left, shows the time-out stopped it.
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--grace", "1s"])
        #expect(r.status == 1, "\(r)")
        #expect(r.finalState(of: "slow") == "timed_out", "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func retryShortForm() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: flaky
                retry: 2
                shell: echo attempt >> count; exit 1
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("count").count == 3)
        #expect(r.states(of: "flaky").filter { $0 == "retrying" }.count == 2, "\(r.states(of: "flaky"))")
        #expect(r.finalState(of: "flaky") == "failed")
    }

    @Test func retryLongFormSucceedsOnALaterAttempt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: flaky
                retry: { limit: 4, delay: 50ms, backoff: 2, max_delay: 1s, exit_codes: [75] }
                shell: |
                  echo attempt >> count
                  if [ "$(wc -l < count)" -lt 3 ]; then exit 75; fi
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("count").count == 3)
        #expect(r.elapsed >= 0.3, "delays 100ms then 200ms (50ms × 2, × 2²)")
        #expect(r.finalState(of: "flaky") == "succeeded")
    }

    /// "Only failures whose exit code is in `exit_codes` (default: every non-zero)": a step
    /// that exits 0 without writing a declared output fails once, not once per attempt.
    @Test func aFailureThatExitedZeroIsNotRetried() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: echo attempt >> log; echo "version=1" >> "$FLOW_OUTPUT"
                outputs: [version, digest]
                retry: 2
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["attempt"], "\(r)")
        #expect(r.stderr.contains("did not write the declared output `digest`"), "\(r)")
    }

    @Test func retryOtherExitCodesAreFinal() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: flaky
                retry: { limit: 3, exit_codes: [75] }
                shell: echo attempt >> count; exit 3
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("count").count == 1)
        #expect(!r.states(of: "flaky").contains("retrying"))
    }

    @Test func retryAlsoRetriesTimeouts() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: slow
                timeout: 200ms
                retry: { limit: 1, exit_codes: [75] }
                shell: echo attempt >> count; exec $CHILD --sleep 30
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--grace", "1s"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("count").count == 2)
        #expect(r.finalState(of: "slow") == "timed_out")
    }

    @Test func ifWithStatusFunctions() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: boom
                shell: exit 3
              - name: on_failure
                if: failure()
                shell: echo on_failure >> log
              - name: on_always
                if: ${{ always() }}
                shell: echo on_always >> log
              - name: on_success
                if: success()
                shell: echo on_success >> log
              - name: reacts
                if: failure() && steps.boom.exit_code == 3
                shell: echo reacts >> log
              - name: plain
                if: true
                shell: echo plain >> log
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["on_failure", "on_always", "reacts"])
        #expect(r.finalState(of: "on_success") == "skipped")
        #expect(r.finalState(of: "plain") == "skipped", "an `if` without a status function implies success()")
    }

    @Test func ifWithExpressions() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars: { target: dev }
            steps:
              - name: prod_only
                if: vars.target == 'prod'
                shell: echo prod_only >> log
              - name: dev_only
                if: ${{ vars.target != 'prod' }}
                shell: echo dev_only >> log
              - name: never
                if: false
                shell: echo never >> log
            """)
        let dev = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(dev.status == 0, "\(dev)")
        #expect(box.lines("log") == ["dev_only"])
        #expect(dev.finalState(of: "never") == "skipped")
        let prod = try box.run(["run", "wf.yaml", "--output", "json", "--var", "target=prod"])
        #expect(prod.status == 0, "\(prod)")
        #expect(box.lines("log") == ["dev_only", "prod_only"])
    }

    static let tagged = """
        steps:
          - name: setup
            tags: [always]
            shell: echo setup >> log
          - name: unit
            tags: [test]
            shell: echo unit >> log
          - name: e2e
            tags: [test, slow]
            shell: echo e2e >> log
          - name: lint
            shell: echo lint >> log
        """

    @Test(arguments: [
        (["--tags", "test"], ["setup", "unit", "e2e"]),
        (["--skip-tags", "slow"], ["setup", "unit", "lint"]),
        (["--tags", "test", "--skip-tags", "slow,always"], ["unit"]),
        (["--only", "lint"], ["lint"]),
        ([], ["setup", "unit", "e2e", "lint"]),
        // Repeated, the lists add up (as in Ansible); the last one did not replace the rest.
        (["--tags", "slow", "--tags", "always"], ["setup", "e2e"]),
        (["--skip-tags", "slow", "--skip-tags", "always"], ["unit", "lint"]),
        // An empty value (`--tags "$TAGS"`, TAGS unset) is as if the option were not given.
        (["--tags", "", "--skip-tags", " "], ["setup", "unit", "e2e", "lint"]),
    ])
    func selectionAtRunTime(_ options: [String], _ expected: [String]) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.tagged)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"] + options)
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == expected)
        #expect(!r.stderr.contains("warning:"), "\(r)")
    }

    /// `--only a --only b` ran only `b` (the last value of a single-value option wins),
    /// silently dropping a step the user named. Two different names are now a usage error
    /// before anything runs, in `run`, `plan` and `graph`; the same name twice is one step.
    @Test(arguments: [["run", "wf.yaml"], ["plan", "wf.yaml"], ["graph", "wf.yaml"]])
    func onlyGivenTwoNamesIsRefused(_ command: [String]) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.tagged)
        let r = try box.run(command + ["--only", "lint", "--only", "unit"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.hasPrefix(
            "Error: --only runs one step and was given two (`lint` and `unit`); to run several, tag them and use --tags\n"), "\(r)")
        #expect(box.lines("log").isEmpty)
        let same = try box.run(command + ["--only", "lint", "--only", "lint"])
        #expect(same.status == 0, "\(same)")
    }

    /// Selection options that each name something there but together leave no step: a
    /// warning says so before the run, which succeeds having run nothing (exit 0, as `go
    /// test -run` with no match; the options are right, only their meeting is empty).
    @Test(arguments: [
        (["--only", "lint", "--tags", "test"], "--only lint --tags test"),
        (["--tags", "slow", "--skip-tags", "slow,always"], "--tags slow --skip-tags slow,always"),
    ])
    func aSelectionOfNoStepIsSaid(_ options: [String], _ described: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.tagged)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"] + options)
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log").isEmpty)
        #expect(r.stderr.hasPrefix("warning: \(described) select no step: nothing will run\n"), "\(r)")
    }

    /// The same warning from `flow plan` (text and JSON) and `flow run --dry-run`: only the
    /// run said it, so the place a user checks a selection before running it showed an
    /// all-`○` tree without a word (found by the selection audit's differential checker).
    @Test(arguments: [
        ["plan", "wf.yaml"], ["plan", "wf.yaml", "--format", "json"], ["run", "wf.yaml", "--dry-run"],
    ])
    func aSelectionOfNoStepIsSaidBeforeARunToo(_ command: [String]) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.tagged)
        let r = try box.run(command + ["--tags", "slow", "--skip-tags", "slow,always"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log").isEmpty)
        #expect(r.stderr.hasPrefix("warning: --tags slow --skip-tags slow,always select no step: nothing will run\n"), "\(r)")
        // A selection that leaves steps is not warned about.
        let some = try box.run(command + ["--tags", "slow"])
        #expect(some.status == 0, "\(some)")
        #expect(!some.stderr.contains("select no step"), "\(some)")
    }

    /// `--only c` where `c` reads a step the selection leaves out: the values were
    /// silently empty. `run` and `plan` now warn at each such reference (a group's `env`
    /// entry once, though every step under it evaluates it), naming the step, with a note
    /// at its `name:` (not at its `shell:` key, as before, under "`build` is here"); with that
    /// step selected too (`--tags`) or with no selection, there is no warning.
    @Test func aSelectedStepReadingAnUnselectedOneIsWarned() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                tags: [ship]
                shell: echo "version=1.2" >> "$FLOW_OUTPUT"
              - name: grp
                env: { V: "${{ steps.build.outputs.version }}" }
                sequential:
                  - name: c
                    tags: [ship]
                    if: steps.build.exit_code == null
                    shell: echo "[${{ steps.build.outputs.version }}] [$V]" > log
                  - { name: d, shell: "true" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--only", "c"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["[] []"])
        #expect(r.stderr.hasPrefix("""
            wf.yaml:6:20: warning: `steps.build.outputs.version` will be empty: step `build` is not selected, so it does not run [unselected-reference]
              |
            6 |     env: { V: "${{ steps.build.outputs.version }}" }
              |                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^ to have it, select `build` as well (`--only` takes one step: tag both and use `--tags`)
            wf.yaml:2:11: note: `build` is here
              |
            2 |   - name: build
              |           ^^^^^
            wf.yaml:10:13: warning: `steps.build.exit_code` will be `null`: step `build` is not selected, so it does not run [unselected-reference]
            """), "\(r)")
        #expect(r.stderr.components(separatedBy: "[unselected-reference]").count == 4, "three warnings: \(r)")
        let plan = try box.run(["plan", "wf.yaml", "--only", "d"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stderr.components(separatedBy: "[unselected-reference]").count == 2, "the group's env: \(plan)")
        for options in [["--tags", "ship"], []] {
            let all = try box.run(["run", "wf.yaml", "--output", "prefixed"] + options)
            #expect(all.status == 0 && !all.stderr.contains("warning"), "\(all)")
        }
    }

    /// The note of an `unselected-reference` warning points at the named step's `name:`
    /// for a `use` step too (its node is built apart from other steps').
    @Test func anUnselectedUseStepsNoteIsAtItsName() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              make:
                steps:
                  - { shell: echo "v=1" >> "$FLOW_OUTPUT", outputs: [v] }
            steps:
              - name: build
                use: make
              - name: show
                print: "${{ steps.build.status }}"
            """)
        let plan = try box.run(["plan", "wf.yaml", "--only", "show"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stderr.contains("""
            wf.yaml:6:11: note: `build` is here
              |
            6 |   - name: build
              |           ^^^^^
            """), "\(plan)")
    }

    // MARK: outputs and expressions

    @Test func outputsFlowToLaterSteps() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: produce
                shell: |
                  echo "version=1.2.3" >> "$FLOW_OUTPUT"
                  printf 'notes<<EOF\\nline one\\nline two\\nEOF\\n' >> "$FLOW_OUTPUT"
              - name: consume
                shell: |
                  echo "version=${{ steps.produce.outputs.version }}"
                  echo "${{ steps.produce.outputs.notes }}"
                  echo "missing=[${{ steps.produce.outputs.nothing }}]"
              - name: show
                print: "print sees ${{ steps.produce.outputs.version }}"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdoutLines.map(LiveFlow.squeeze)
        #expect(lines == ["consume | version=1.2.3", "consume | line one", "consume | line two", "consume | missing=[]",
                          "show | print sees 1.2.3"], "\(r)")
    }

    /// FLOW_RUN_ID comes from the run's base environment, FLOW_STEP and FLOW_OUTPUT from
    /// the step; a step's `env:` cannot change the run's id.
    @Test func stepsGetTheRunIDTheirLabelAndAnOutputFile() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: plain
                shell: echo "$FLOW_RUN_ID $FLOW_STEP $(test -f "$FLOW_OUTPUT" && echo file)" >> log
              - shell: echo "$FLOW_RUN_ID $FLOW_STEP" >> log
                env:
                  FLOW_RUN_ID: mine
                  FLOW_STEP: mine
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--no-journal"])
        #expect(r.status == 0, "\(r)")
        let lines = box.lines("log")
        #expect(lines.count == 2, "\(lines)")
        let id = lines.first?.split(separator: " ").first.map(String.init) ?? ""
        #expect(!id.isEmpty && id != "mine", "\(lines)")
        #expect(lines == ["\(id) plain file", "\(id) shell@2"], "\(lines)")
    }

    @Test func missingDeclaredOutputFailsTheStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: promise
                outputs: [version, digest]
                shell: echo "version=1" >> "$FLOW_OUTPUT"
              - name: after
                shell: echo after >> log
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(r.finalState(of: "promise") == "failed", "\(r)")
        #expect(box.lines("log").isEmpty)
    }

    /// A multi-line value left open is reported at its `key<<DELIM` line: it was at the
    /// file's last line ("line 5: the value of `notes` is not closed by `EOF`"), which in a
    /// long file named none of the values.
    @Test func anUnclosedMultiLineOutputNamesTheLineItStarts() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: gen
                shell: printf 'a=1\\nnotes<<EOF\\none\\ntwo\\nEOF \\n' >> "$FLOW_OUTPUT"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-color"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("✗ gen FLOW_OUTPUT line 2: the value of `notes` is not closed: no line `EOF` follows"), "\(r)")
    }

    /// A `$FLOW_OUTPUT` that cannot be read fails a step that exited 0, and is not retried
    /// (the same command writes the same file); a step that exited non-zero is retried by
    /// its exit code, whatever its file holds (docs/workflow-format.md#outputs).
    @Test func aMalformedOutputFileFailsTheStepAndIsNotRetried() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: bad
                shell: echo run >> log; echo "bad key=1" >> "$FLOW_OUTPUT"
                retry: 2
                continue_on_error: true
              - name: failing
                shell: echo run2 >> log; echo "bad key=1" >> "$FLOW_OUTPUT"; exit 3
                retry: 1
                continue_on_error: true
              - name: tidy
                shell: printf 'k=1\\n\\nk=2\\r\\n' >> "$FLOW_OUTPUT"
              - print: "${{ steps.bad.status }} ${{ steps.bad.exit_code }} [${{ steps.tidy.outputs.k }}]"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-color"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["run", "run2", "run2"], "\(r)")
        #expect(r.stderr.contains("✗ bad FLOW_OUTPUT line 1: invalid output key `bad key`"), "\(r)")
        #expect(r.stdoutLines.last == "print@4 | failed 0 [2]", "\(r)")
    }

    /// A `FLOW_OUTPUT` flow cannot read fails the step, as one it cannot parse does, and
    /// is not retried: read with `try?`, a file over the 64 MiB limit, or one the step made
    /// a directory, was taken as empty, and the step succeeded with its outputs silently
    /// gone (found by reading `Executor.runShell`).
    @Test func anUnreadableOutputFileFailsTheStepAndIsNotRetried() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: huge
                shell: |
                  echo run >> log
                  echo small=1 >> "$FLOW_OUTPUT"
                  printf big= >> "$FLOW_OUTPUT"; head -c 70000000 /dev/zero | tr '\\0' x >> "$FLOW_OUTPUT"
                retry: 2
                continue_on_error: true
              - name: dir
                shell: rm "$FLOW_OUTPUT" && mkdir "$FLOW_OUTPUT" && touch "$FLOW_OUTPUT/k=v"
                continue_on_error: true
              - print: "${{ steps.huge.status }} ${{ steps.huge.exit_code }} [${{ steps.huge.outputs.small }}] ${{ steps.dir.status }}"
            """)
        try FileManager.default.createDirectory(atPath: box.path("tmp"), withIntermediateDirectories: false)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-color"], env: ["TMPDIR": box.path("tmp")])
        #expect(r.status == 0, "\(r)")
        // The directory the step made where its file was goes with the rest: it kept the
        // run's scratch directory for good (one left in /dev/shm by each run of this test).
        #expect((try? FileManager.default.contentsOfDirectory(atPath: box.path("tmp"))) == [], "left behind")
        #expect(box.lines("log") == ["run"], "\(r)")
        #expect(r.stderr.contains("✗ huge cannot read FLOW_OUTPUT: larger than 64 MiB"), "\(r)")
        #expect(r.stderr.contains("✗ dir cannot read FLOW_OUTPUT: it is a directory"), "\(r)")
        #expect(r.stdoutLines.last == "print@3 | failed 0 [] failed", "\(r)")
    }

    /// A failure's reason that quotes a value from the run (a `with` value refused, a bad
    /// key in `FLOW_OUTPUT`) shows its control characters escaped on the step's end line, in
    /// every text mode, as the live tree, `flow show` and diagnostics do. It was written raw:
    /// a step could clear the screen or retitle the terminal through flow's own line.
    @Test(arguments: ["prefixed", "raw", "grouped"])
    func failureReasonsEscapeControlCharacters(_ mode: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            actions:
              deploy:
                params:
                  env: { allowed: [staging, prod] }
                steps:
                  - print: "deploy ${{ params.env }}"
            steps:
              - name: gen
                shell: printf 'v=x\033[2Jy\n' >> "$FLOW_OUTPUT"
              - name: d
                use: deploy
                with: { env: "${{ steps.gen.outputs.v }}" }
                continue_on_error: true
              - name: bad
                shell: printf 'a\033]0;t\007=1\n' >> "$FLOW_OUTPUT"
            """#)
        let r = try box.run(["run", "wf.yaml", "--output", mode, "--no-color"])
        #expect(r.status == 1, "\(r)")
        #expect(!r.stderr.contains("\u{1B}") && !r.stderr.contains("\u{7}"), "\(r)")
        #expect(r.stderr.contains(#"`x\u{1B}[2Jy` is not an allowed value of `env`"#), "\(r)")
        #expect(r.stderr.contains(#"FLOW_OUTPUT line 1: invalid output key `a\u{1B}]0;t\u{7}`"#), "\(r)")
    }

    /// What flow says in a step's output when it cannot start it (`flow: working directory
    /// … does not exist`) quotes values from the run: escaped, as flow's own text is, in
    /// the output as it is shown and as `flow logs` reads it back. It was written raw.
    @Test func flowsWordsInAStepsOutputEscapeControlCharacters() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", #"""
            steps:
              - name: gen
                shell: printf 'v=x\033[2Jy\n' >> "$FLOW_OUTPUT"
              - name: d
                dir: "${{ steps.gen.outputs.v }}"
                shell: echo hi
                continue_on_error: true
            """#)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-color"])
        #expect(r.status == 0, "\(r)")
        #expect(!r.stdout.contains("\u{1B}") && !r.stderr.contains("\u{1B}") && !r.stderr.contains("\u{7}"), "\(r)")
        #expect(r.stderr.contains(#"| flow: working directory `x\u{1B}[2Jy` does not exist"#), "\(r)")
        let logs = try box.run(["logs", "last"])
        #expect(logs.status == 0 && !logs.stdout.contains("\u{1B}") && !logs.stderr.contains("\u{1B}"), "\(logs)")
    }

    /// A `FLOW_OUTPUT` the step made something other than a file (a FIFO, a link to a
    /// device) fails the step as a directory does: flow cannot read outputs from it (a
    /// FIFO's writer waits for a reader, `/dev/zero` never ends). It was never opened, which
    /// is right, but taken as empty: the step succeeded with its outputs silently gone.
    @Test func anOutputFileThatIsNotAFileFailsTheStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: fifo
                shell: rm "$FLOW_OUTPUT" && mkfifo "$FLOW_OUTPUT"
                continue_on_error: true
              - name: zero
                shell: rm "$FLOW_OUTPUT" && ln -s /dev/zero "$FLOW_OUTPUT"
                continue_on_error: true
              - name: gone
                shell: rm "$FLOW_OUTPUT"
              - print: "${{ steps.fifo.status }} ${{ steps.zero.status }} ${{ steps.gone.status }}"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-color"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("✗ fifo cannot read FLOW_OUTPUT: it is a FIFO, not a file"), "\(r)")
        #expect(r.stderr.contains("✗ zero cannot read FLOW_OUTPUT: it is a device, not a file"), "\(r)")
        // A file the step removed held no outputs, as an empty one.
        #expect(r.stdoutLines.last == "print@4 | failed failed succeeded", "\(r)")
    }

    @Test func stepStatusAndExitCode() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: soft
                continue_on_error: true
                shell: exit 4
              - name: fine
                shell: "true"
              - name: report
                print: "soft ${{ steps.soft.status }} ${{ steps.soft.exit_code }} fine ${{ steps.fine.status }} ${{ steps.fine.exit_code }}"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(Self.hasLine(r.stdout, "report | soft failed 4 fine succeeded 0"), "\(r)")
    }

    @Test(arguments: ["\"; touch PWNED; echo \"", "$(touch PWNED2)", "`touch PWNED3`", "'; touch PWNED4; echo '"])
    func expressionsNeverBecomeCode(_ value: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars: { v: safe }
            steps:
              - name: quoted
                shell: echo "v=${{ vars.v }}"
              - name: bare
                shell: echo ${{ vars.v }}
              - name: printed
                print: "p=${{ vars.v }}"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--var", "v=\(value)"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdoutLines.map(LiveFlow.squeeze)
        #expect(lines == ["quoted | v=\(value)", "bare | \(value)", "printed | p=\(value)"], "\(r)")
        let files = try FileManager.default.contentsOfDirectory(atPath: box.root.path)
        #expect(!files.contains { $0.hasPrefix("PWNED") }, "\(files)")
    }

    // MARK: rollback

    static let rollbackWorkflow = """
        ROLLBACK
        steps:
          - name: a
            shell: echo a >> log
            undo:
              shell: echo undo-a >> log
          - name: b
            shell: echo b >> log
            undo:
              - name: undo_b
                shell: echo undo-b >> log; exit 5
          - name: pair
            concurrent:
              - name: x
                shell: while [ ! -f y-done ]; do sleep 0.02; done; sleep 0.3; echo x >> log
                undo:
                  shell: echo undo-x >> log
              - name: y
                shell: echo y >> log; touch y-done
                undo:
                  shell: echo undo-y >> log
          - name: d
            shell: exit 1
            undo:
              shell: echo undo-d >> log
        finally:
          - shell: echo finally >> log
        """

    @Test func rollbackRunsUndoInReverseCompletionOrder() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.rollbackWorkflow.replacingOccurrences(of: "ROLLBACK", with: ""))
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["a", "b", "y", "x", "finally", "undo-x", "undo-y", "undo-b", "undo-a"], "\(r)")
        #expect(r.finalState(of: "a") == "undone", "\(r)")
        #expect(r.states(of: "b").suffix(2) == ["undoing", "undo_failed"], "\(r.states(of: "b"))")
        #expect(r.finalState(of: "d") == "failed")

        let prefixed = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(prefixed.status == 1)
        #expect(prefixed.stderr.contains("undo_b") || prefixed.stderr.contains("undo"), "a failing undo is reported: \(prefixed)")
        #expect(prefixed.stderrLines.contains { $0.hasPrefix("✗ undo_b exit 5") }, "\(prefixed)")
    }

    /// Every step a rollback reverses gets its end line (its block in `grouped`), whatever
    /// its kind: a `print` and a group used to get none, so `rolling back 4 steps` was
    /// followed by 2 lines. Under `flow undo`, each is first said to come from the run.
    @Test func everyStepARollbackReversesGetsItsLine() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            rollback: true
            steps:
              - name: p
                print: hello
                undo:
                  - print: undo p
              - name: d
                delay: 10ms
                undo:
                  - print: undo d
              - name: s
                shell: "true"
                undo:
                  - shell: "true"
              - name: g
                sequential:
                  - print: inside
                undo:
                  - print: undo g
              - name: last
                shell: exit ${{ vars.code }}
            vars:
              code: "3"
            """)
        func ends(_ lines: [String], _ marker: String) -> [String] {
            lines.filter { $0.hasPrefix(marker) }.map { String($0.split(separator: " ")[1]) }
        }
        let prefixed = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-journal"])
        #expect(prefixed.status == 1, "\(prefixed)")
        #expect(prefixed.stderrLines.contains("rolling back 4 steps"), "\(prefixed)")
        #expect(ends(prefixed.stderrLines, "↺ ") == ["g", "s", "d", "p"], "\(prefixed)")

        let grouped = try box.run(["run", "wf.yaml", "--output", "grouped", "--no-journal"])
        #expect(grouped.status == 1, "\(grouped)")
        #expect(grouped.stderrLines.filter { $0.hasPrefix("── ↺ ") }.map { String($0.split(separator: " ")[2]) } == ["g", "s", "d", "p"],
                "\(grouped)")

        // `flow undo` of a run that succeeded: each step it reverses (and those inside the
        // group it reverses, before it, as they completed), then each undone.
        #expect(try box.run(["run", "wf.yaml", "--var", "code=0", "--output", "prefixed"]).status == 0)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(ends(undo.stderrLines.filter { $0.contains(" succeeded in run ") }, "✓ ") == ["p", "d", "s", "print@4.1", "g"], "\(undo)")
        #expect(ends(undo.stderrLines, "↺ ") == ["g", "s", "d", "p"], "\(undo)")
    }

    @Test func rollbackFalseAndNoRollbackDisableIt() throws {
        let box = try RunSandbox()
        try box.write("off.yaml", Self.rollbackWorkflow.replacingOccurrences(of: "ROLLBACK", with: "rollback: false"))
        let off = try box.run(["run", "off.yaml", "--output", "prefixed"])
        #expect(off.status == 1, "\(off)")
        #expect(box.lines("log") == ["a", "b", "y", "x", "finally"])

        try FileManager.default.removeItem(atPath: box.path("log"))
        try FileManager.default.removeItem(atPath: box.path("y-done"))
        try box.write("on.yaml", Self.rollbackWorkflow.replacingOccurrences(of: "ROLLBACK", with: "rollback: true"))
        let flag = try box.run(["run", "on.yaml", "--output", "prefixed", "--no-rollback"])
        #expect(flag.status == 1, "\(flag)")
        #expect(box.lines("log") == ["a", "b", "y", "x", "finally"])
    }

    @Test func noRollbackWhenTheRunSucceeds() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: echo a >> log
                undo:
                  shell: echo undo-a >> log
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["a"])
    }

    @Test func undoSeesTheOutputsOfItsStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: reserve
                shell: echo "id=r-42" >> "$FLOW_OUTPUT"
                undo:
                  shell: echo "release ${{ steps.reserve.outputs.id }}" >> log
              - name: boom
                shell: exit 1
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["release r-42"])
    }

    // MARK: actions, invalid workflows

    @Test func runOneActionWithParams() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: echo main >> log
            actions:
              deploy:
                params:
                  env: { required: true, allowed: [staging, prod] }
                  region: { default: eu-west-1 }
                steps:
                  - name: dep
                    shell: echo "deploy ${{ params.env }} ${{ params.region }}" >> log
            """)
        let r = try box.run(["run", "wf.yaml", "deploy", "--with", "env=prod", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["deploy prod eu-west-1"])
        let bad = try box.run(["run", "wf.yaml", "deploy", "--with", "env=qa", "--output", "prefixed"])
        #expect(bad.status == 2, "\(bad)")
        #expect(box.lines("log") == ["deploy prod eu-west-1"])
    }

    @Test func invalidWorkflowRunsNothing() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: touch ran
              - shel: echo typo
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 2, "\(r)")
        #expect(!box.exists("ran"))
        #expect(r.stderr.contains("wf.yaml:3:"), "\(r)")
        #expect(!box.exists("state/journal.sqlite"), "nothing ran, nothing recorded")
    }

    @Test func unknownVarIsAUsageError() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - shell: touch ran\n")
        let r = try box.run(["run", "wf.yaml", "--var", "nope=1"])
        #expect(r.status == 2, "\(r)")
        #expect(!box.exists("ran"))
    }

    // MARK: output modes

    @Test func prefixedLinesNeverInterleave() throws {
        let box = try RunSandbox()
        let a = String(repeating: "A", count: 700)
        let b = String(repeating: "B", count: 900)
        try box.write("wf.yaml", """
            steps:
              - name: g
                concurrent:
                  - name: a
                    shell: yes \(a) | head -n 2000
                  - name: b
                    shell: yes \(b) | head -n 2000
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r.stderr)")
        let regex = try Regex("^(a|b) +\\| (A+|B+)$")
        let lines = r.stdoutLines
        let bad = lines.filter { (try? regex.wholeMatch(in: $0)) == nil }
        #expect(bad.isEmpty, "\(bad.count) mangled lines, e.g. \(bad.first?.prefix(200) ?? "")")
        #expect(lines.filter { $0.hasSuffix(a) && LiveFlow.squeeze($0) == "a | \(a)" }.count == 2000)
        #expect(lines.filter { LiveFlow.squeeze($0) == "b | \(b)" }.count == 2000)
    }

    @Test(arguments: ["prefixed", "json", "raw"])
    func stdoutIsStreamedWhileAStepRuns(_ mode: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: w
                shell: $CHILD --stderr started ready --sleep 30
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", mode, "--grace", "1s"])
        if mode != "json" {
            // The child's stderr line shows it runs (flow writes stderr lines at once); in
            // json mode every event goes to stdout, so the wait below covers both.
            let started = flow.waitFor { out, err in (out + err).contains("started") }
            #expect(started, "\(flow.stdout)\(flow.stderr)")
        }
        let ready = flow.waitFor(timeout: 3) { out, _ in
            out.split(separator: "\n").contains { line in
                mode == "json" ? line.contains("\"line\":\"ready\"") : LiveFlow.squeeze(String(line)) == (mode == "raw" ? "ready" : "w | ready")
            }
        }
        #expect(ready, "the line printed by a running step reaches flow's stdout while it runs")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    static let mixedWorkflow = """
        name: mixed
        steps:
          - name: ok
            shell: echo ok-out; echo ok-err >&2
          - name: say
            print: said
          - name: bad
            shell: echo bad-out; echo bad-err >&2; exit 2
          - name: never
            shell: echo never
        """

    @Test func jsonOutputIsOneEventPerLine() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixedWorkflow)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(!r.stdoutLines.isEmpty)
        var types = Set<String>()
        var runIDs = Set<String>()
        for line in r.stdoutLines {
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line)")
            guard let object else { continue }
            if let type = object["event"] as? String { types.insert(type) }
            #expect((object["time"] as? String)?.isEmpty == false, "\(line)")
            if let id = object["run_id"] as? String { runIDs.insert(id) } else { Issue.record("no run_id: \(line)") }
            if object["event"] as? String != "run_started" && object["event"] as? String != "run_finished" {
                #expect(object["step"] is String, "\(line)")
            } else {
                #expect(object["step"] is NSNull, "the run's own events have step: null: \(line)")
            }
        }
        #expect(types == ["run_started", "step_state", "output", "run_finished"], "\(types)")
        #expect(runIDs.count == 1)
        let outputs = r.jsonEvents.filter { $0["event"] as? String == "output" }
        #expect(outputs.contains { $0["line"] as? String == "ok-err" && $0["stream"] as? String == "stderr" })
        #expect(outputs.contains { $0["line"] as? String == "ok-out" && $0["stream"] as? String == "stdout" })
        #expect(r.jsonEvents.first?["event"] as? String == "run_started")
        #expect(r.jsonEvents.last?["event"] as? String == "run_finished")
    }

    @Test func rawOutputHasNoPrefixes() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixedWorkflow)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdoutLines == ["ok-out", "said", "bad-out"], "\(r)")
        #expect(r.stderr.contains("ok-err\n") && r.stderr.contains("bad-err\n"), "\(r)")
        #expect(!r.all.contains("| "), "\(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("✗ failed:") }, "summary: \(r)")
    }

    @Test func groupedOutputUsesGitHubLogGroups() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixedWorkflow)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(r.status == 1, "\(r)")
        let lines = (r.stdoutLines + r.stderrLines)
        #expect(lines.contains { $0.hasPrefix("::group::") && $0.contains("ok") }, "\(r)")
        #expect(lines.contains("::endgroup::"), "\(r)")
        #expect(lines.contains { $0.hasPrefix("::error") && $0.contains("bad") }, "\(r)")
        #expect(r.all.contains("ok-out") && r.all.contains("bad-out"), "\(r)")
        // Each block is whole: nothing of `bad` inside the `ok` group.
        if let start = lines.firstIndex(where: { $0.hasPrefix("::group::") && $0.contains("ok") }),
           let end = lines[start...].firstIndex(of: "::endgroup::") {
            #expect(!lines[start...end].contains { $0.contains("bad-") }, "\(r)")
        }
    }

    /// Plain `grouped` keeps the streams: a step's stdout lines on stdout, its stderr lines
    /// and flow's own lines (headers, the summary) on stderr.
    @Test func groupedOutputKeepsStreams() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: both, shell: "echo to-out; echo to-err >&2" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines == ["to-out"], "\(r)")
        #expect(r.stderrLines.contains("to-err"), "\(r)")
        #expect(r.stderrLines.first?.contains("both") == true, "\(r)")
        #expect(r.stderrLines.last?.hasPrefix("✓ succeeded:") == true, "\(r)")
    }

    /// `grouped` keeps each line's own ending, as `prefixed` does: a `\r\n` keeps its `\r`
    /// on either stream; an unfinished last line ends with `\n`.
    @Test func groupedOutputKeepsLineEndings() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: crlf, shell: "printf 'one\\r\\ntwo\\n'; printf 'e1\\r\\ne2' >&2" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutBytes == Array("one\r\ntwo\n".utf8), "\(r.stdoutBytes)")
        #expect(r.stderr.contains("── ✓ crlf (") && r.stderr.contains(" ──\ne1\r\ne2\n✓ succeeded:"), "\(Array(r.stderr.utf8))")
    }

    /// Under GitHub Actions, a failed attempt that a retry makes good (the step's own, or
    /// its group's) gets no `::error::` annotation; a step that stays failed does.
    @Test func githubAnnotatesOnlyFinalFailures() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: flaky, retry: 1, shell: "test -e marker || { touch marker; exit 1; }" }
              - name: again
                retry: 1
                sequential:
                  - { name: flaky2, shell: "test -e marker2 || { touch marker2; exit 1; }" }
              - { name: broken, shell: exit 2 }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(r.status == 1, "\(r)")
        let errors = r.stdoutLines.filter { $0.hasPrefix("::error") }
        #expect(errors.count == 1 && errors.first?.contains("broken") == true, "\(r)")
    }

    /// `-` is standard input for every command that reads a workflow (`gen | flow run -`),
    /// named `<stdin>` in messages; resume uses the content recorded with the run. A resume
    /// of it is `<stdin>` too, in `flow runs` and `flow show` (it was `-`).
    @Test func aWorkflowFromStandardInput() throws {
        let box = try RunSandbox()
        let result = try FlowBinary.run([], in: box.root, shellScript: #"""
            printf 'steps:\n  - name: a\n    shell: echo from-stdin\n  - name: b\n    shell: test -e fixed\n' > wf.yaml
            "$0" validate - < wf.yaml; echo "validate $?"
            "$0" plan - < wf.yaml | head -1
            "$0" run - --output prefixed < wf.yaml 2>/dev/null; echo "run $?"
            touch fixed; rm wf.yaml
            "$0" resume last --output prefixed 2>/dev/null; echo "resume $?"
            "$0" runs | sed -n 2p | grep -o '<stdin> (resume\|- (resume'
            "$0" show last | head -1 | grep -o '· <stdin> ([^)]*)'
            printf 'steps:\n  - shel: x\n' | "$0" validate - 2>&1 | head -1
            printf 'steps:\n  - shel: x\n' | "$0" run - 2>&1 | tail -1
            "$0" validate - - < /dev/null 2>/dev/null; echo "twice $?"
            """#)
        #expect(result.stdout == """
            <stdin>: valid
            validate 0
            <stdin> (<stdin>)
            a | from-stdin
            run 1
            resume 0
            <stdin> (resume
            · <stdin> (<stdin>)
            <stdin>:2:5: error: unknown key `shel` in a step [unknown-key]
            error: <stdin> is invalid (1 error); nothing was run
            twice 2

            """, "\(result)")
    }

    @Test func quietPrintsOnlyFailuresAndTheSummary() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixedWorkflow)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--quiet"])
        #expect(r.status == 1, "\(r)")
        #expect(!r.all.contains("ok-out") && !r.all.contains("ok-err"), "\(r)")
        #expect(!r.all.contains("▶"), "\(r)")
        #expect(!r.all.contains("✓ ok"), "\(r)")
        #expect(r.all.contains("bad-out") && r.all.contains("bad-err"), "\(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("✗ bad exit 2 ") }, "the failure names its step: \(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("✗ failed:") }, "\(r)")
    }

    /// A step and a group that fail once and are made good by a retry, and a step that fails.
    static let retriedWorkflow = """
        steps:
          - name: flaky
            shell: test -f flag || { touch flag; echo boom; exit 3; }
            retry: 2
          - name: again
            retry: 1
            sequential:
              - name: flaky2
                shell: test -f flag2 || { touch flag2; exit 5; }
          - name: broken
            shell: echo broke; exit 4
        """

    /// `--quiet` keeps flow's notes about the whole run (a rollback), not those about a
    /// step (a retry), in prefixed and grouped output.
    @Test(arguments: ["prefixed", "grouped"])
    func quietKeepsTheRunsNotes(_ mode: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: made
                shell: "true"
                undo:
                  shell: echo undone > log
              - name: broken
                shell: exit 4
                retry: 1
            """)
        let r = try box.run(["run", "wf.yaml", "--output", mode, "--quiet"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderrLines.contains("rolling back 1 step"), "\(r)")
        #expect(!r.all.contains("retry"), "\(r)")
        #expect(box.lines("log") == ["undone"])
    }

    /// `prefixed --quiet` writes a failure before the rollback it causes (`rolling back 1
    /// step` stood above it), and names a step whose undo failed, not only its undo step.
    @Test func quietWritesTheFailureBeforeItsRollbackAndNamesAFailedUndo() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: p
                shell: echo made
                undo:
                  - shell: echo undoing; exit 4
              - name: boom
                shell: exit 3
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--quiet"])
        #expect(r.status == 1, "\(r)")
        let lines = r.stderrLines.filter { $0.hasPrefix("✗") || $0.hasPrefix("rolling") }
            .map { $0.replacingOccurrences(of: #" [0-9.]+s$"#, with: " T", options: .regularExpression) }
        #expect(lines == ["✗ boom exit 3 T", "rolling back 1 step", "✗ shell@1.u1 exit 4 T", "✗ p undo failed T",
                          "✗ failed: 1 failed, 1 undo_failed in T"], "\(r)")
    }

    /// `--quiet` names a step that failed in the end, not an attempt a retry made good.
    @Test func quietLeavesOutAttemptsARetryMadeGood() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.retriedWorkflow)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--quiet"])
        #expect(r.status == 1, "\(r)")
        #expect(!r.all.contains("flaky"), "a retried step and a step of a retried group: \(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("✗ broken exit 4 ") }, "\(r)")
    }

    /// `grouped --quiet` writes only the blocks of the steps that failed, whole (header and
    /// lines, on their streams), then the summary.
    @Test func groupedQuietPrintsOnlyFailedBlocksAndTheSummary() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixedWorkflow)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped", "--quiet"])
        #expect(r.status == 1, "\(r)")
        #expect(!r.all.contains("ok") && !r.all.contains("said"), "\(r)")
        #expect(r.stdoutLines == ["bad-out"], "\(r)")
        // The block, its stderr line, the summary and (`--quiet` too) the resume hint.
        #expect(r.resumeHint != nil, "\(r)")
        #expect(r.stderrLinesBeforeHint.count == 3, "\(r)")
        #expect(r.stderrLines.first?.hasPrefix("── ✗ bad (exit 2 ") == true, "\(r)")
        #expect(r.stderrLines.dropFirst().first == "bad-err", "\(r)")
        #expect(r.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 2 succeeded, 1 failed, 1 skipped") == true, "\(r)")
    }

    /// `grouped --quiet` leaves out an attempt that a retry made good (of the step, or of a
    /// group around it), and the notes about retries; under GitHub Actions too.
    @Test(arguments: [false, true])
    func groupedQuietLeavesOutAttemptsARetryMadeGood(_ github: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.retriedWorkflow)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped", "--quiet"], env: ["GITHUB_ACTIONS": github ? "true" : ""])
        #expect(r.status == 1, "\(r)")
        #expect(!r.all.contains("flaky") && !r.all.contains("boom") && !r.all.contains("retrying"), "\(r)")
        #expect(r.all.contains("✗ broken (exit 4 ") && r.stdout.contains("broke\n"), "\(r)")
        if github {
            #expect(r.stdoutLines.first?.hasPrefix("::group::✗ broken (exit 4 ") == true, "\(r)")
            #expect(r.stdoutLines.filter { $0.hasPrefix("::error") }.count == 1, "\(r)")
        }
        #expect(r.stderrLinesBeforeHint.last?.hasPrefix("✗ failed:") == true, "\(r)")
    }

    /// `--quiet` with an explicit `--output tty`, `raw` or `json` (each shows everything by
    /// design) is a usage error: exit 2 before anything runs or is recorded, the message
    /// naming the combination and what to use instead. `run --dry-run`, `resume` and `undo`
    /// check it as `run` does; `--dry-run --quiet` with a mode that fits prints the plan.
    @Test(arguments: ["tty", "raw", "json"])
    func quietWithAnOutputThatShowsEverythingIsAUsageError(_ mode: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - { name: s, shell: touch ran }\n")
        for arguments in [["run", "wf.yaml"], ["run", "wf.yaml", "--dry-run"], ["resume", "last"], ["undo", "last"]] {
            let r = try box.run(arguments + ["--output", mode, "--quiet"])
            #expect(r.status == 2, "\(arguments): \(r)")
            #expect(r.stdout.isEmpty, "\(r)")
            #expect(r.stderr.hasPrefix("Error: --quiet does not go with --output \(mode): "), "\(r)")
            #expect(r.stderr.contains("use --output prefixed --quiet or --output grouped --quiet"), "\(r)")
            #expect(r.stderr.contains("Usage: flow \(arguments[0]) "), "\(r)")
        }
        #expect(!box.exists("ran"), "nothing ran")
        #expect(!box.exists("state"), "nothing was recorded")

        let plan = try box.run(["run", "wf.yaml", "--dry-run", "--quiet"])
        #expect(plan.status == 0 && plan.stdout.contains("shell s: touch ran"), "\(plan)")
        let auto = try box.run(["run", "wf.yaml", "--output", "auto", "--quiet"])
        #expect(auto.status == 0 && auto.all.hasPrefix("✓ succeeded: 1 succeeded in "), "auto picks prefixed: \(auto)")
    }

    /// A group's own time-out gets a line of its own (its steps end only `cancelled`).
    @Test func aGroupsTimeoutIsReported() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                timeout: 200ms
                sequential:
                  - { name: long, delay: 5s }
            """)
        for mode in ["prefixed", "raw"] {
            let r = try box.run(["run", "wf.yaml", "--output", mode])
            #expect(r.status == 1, "\(r)")
            #expect(r.stderrLines.contains { $0.hasPrefix("⏱ g timed out after 200ms") }, "\(mode): \(r)")
        }
        let grouped = try box.run(["run", "wf.yaml", "--output", "grouped"])
        #expect(grouped.stderrLines.contains { $0.hasPrefix("── ⏱ g (timed out after 200ms") }, "\(grouped)")
    }

    /// The summary of a run a group's timeout failed counts that group as timed out: it
    /// counted only the group's steps (cancelled), so a failed run named no failure. A retry
    /// of the group that succeeds takes the count back.
    @Test func aGroupsTimeoutIsCountedInTheSummary() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                timeout: 200ms
                sequential:
                  - { name: long, delay: 5s }
              - print: next
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 1 timed_out, 1 cancelled, 1 skipped in ") == true, "\(r)")
        let json = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(json.stdout.contains(#""timed_out":1"#) || json.stdout.contains(#""timed_out": 1"#), "\(json)")

        // Timed out once, then done: no timed-out step is left to count.
        try box.write("retried.yaml", """
            steps:
              - name: g
                timeout: 1s
                retry: 1
                sequential:
                  - shell: 'if [ -e mark ]; then exit 0; fi; touch mark; sleep 30'
            """)
        let retried = try box.run(["run", "retried.yaml", "--output", "prefixed"])
        #expect(retried.status == 0, "\(retried)")
        #expect(retried.stderrLines.last?.hasPrefix("✓ succeeded: 1 succeeded in ") == true, "\(retried)")
    }

    @Test func summaryAndFailedOutputAtTheEnd() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixedWorkflow)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        let lines = r.stderrLinesBeforeHint
        let summary = try Regex("^✗ failed: 2 succeeded, 1 failed, 1 skipped in [0-9.]+m?s$")
        #expect((try? summary.wholeMatch(in: lines.last ?? "")) != nil, "\(r)")
        let header = lines.firstIndex { $0.contains("output of bad") }
        #expect(header != nil, "\(r)")
        if let header {
            #expect(lines[header...].contains("bad-err"), "\(r)")
            #expect(!lines[header...].contains { $0.contains("ok-err") })
        }
        #expect(r.stdout.contains("bad-out"))

        try box.write("ok.yaml", "steps:\n  - name: fine\n    shell: echo fine\n")
        let ok = try box.run(["run", "ok.yaml", "--output", "prefixed"])
        #expect(ok.status == 0)
        let okSummary = try Regex("^✓ succeeded: 1 succeeded in [0-9.]+m?s$")
        #expect((try? okSummary.wholeMatch(in: ok.stderrLines.last ?? "")) != nil, "\(ok)")
        #expect(!ok.stderr.contains("output of"))
    }

    /// The output repeated at the end is a failed step's last 64 KiB; what it leaves out is
    /// said, as in the JUnit report: a replay that began mid-way read as the step's whole
    /// output, where the contract promises the full output of failed steps.
    @Test func theRepeatedOutputOfAFailedStepSaysWhatItLeavesOut() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: small
                shell: echo only line >&2; exit 1
                continue_on_error: true
              - name: big
                shell: 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo "line $i of the output"; done; exit 1'
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        let printed = (1...3000).map { "line \($0) of the output\n" }.joined()
        let lines = r.stderrLinesBeforeHint
        let header = try #require(lines.firstIndex(of: "── output of big ──"), "\(r.stderr.suffix(500))")
        let marker = try #require(lines[header + 1].wholeMatch(
            of: /… \(([0-9]+) bytes of earlier output left out; `(.+)` prints all of it\)/), "after the header: \(lines[header + 1])")
        let omitted = try #require(Int(marker.1))
        let kept = lines[(header + 2)...].prefix { $0.hasPrefix("line ") }.map { $0 + "\n" }.joined()
        #expect(kept.hasPrefix("line ") && printed.hasSuffix(kept), "the replay is not the output's end")
        #expect(omitted + kept.utf8.count == printed.utf8.count, "\(omitted) + \(kept.utf8.count) bytes")
        // The command it names prints the whole output, run as printed.
        let id = try #require(JournalEndToEndTests.runs(box).first?["id"] as? String)
        #expect(marker.2 == "\(FlowOutcome.flowInHint) logs \(id) big", "\(marker.2)")
        let whole = try RunEndingTests.shell(box, String(marker.2))
        #expect(whole.status == 0 && whole.stdout == printed, "\(whole.stdout.count) bytes of \(printed.count)")
        // A step whose output was kept whole gets no such line.
        let small = try #require(lines.firstIndex(of: "── output of small ──"), "\(r.stderr.suffix(500))")
        #expect(lines[small + 1] == "only line", "after the header: \(lines[small + 1])")
        // Without the journal there is nothing to read back: the line names no command.
        let unrecorded = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-journal"])
        #expect(unrecorded.stderrLines.contains { $0.wholeMatch(of: /… \([0-9]+ bytes of earlier output left out\)/) != nil },
                "\(unrecorded.stderr.suffix(500))")
    }

    @Test func junitReportIsValidXMLWithFailures() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixedWorkflow)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(r.status == 1, "\(r)")
        let data = try #require(FileManager.default.contents(atPath: box.path("report.xml")))
        #if canImport(FoundationXML) || os(macOS)
        let document = try XMLDocument(data: data)
        let cases = try document.nodes(forXPath: "//testcase")
        #expect(cases.count >= 3, "\(String(decoding: data, as: UTF8.self))")
        let failures = try document.nodes(forXPath: "//testcase/failure")
        #expect(failures.count == 1, "\(String(decoding: data, as: UTF8.self))")
        let failed = try document.nodes(forXPath: "//testcase[failure]/@name").compactMap(\.stringValue)
        #expect(failed.contains { $0.contains("bad") }, "\(failed)")
        #endif
    }

    /// A JUnit file that cannot be written is said on stderr after the summary (flow exits
    /// from the hub's thread right after; a failed run's resume hint, the next step, comes
    /// last), and the exit status stays the run's (docs/cli.md).
    @Test func unwritableJUnitFileIsReportedAndTheStatusIsTheRuns() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixedWorkflow)
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n")
        for (file, status) in [("wf.yaml", Int32(1)), ("ok.yaml", 0)] {
            let r = try box.run(["run", file, "--output", "prefixed", "--junit", "missing/report.xml"])
            #expect(r.status == status, "\(r)")
            #expect(r.stderrLinesBeforeHint.last == "error: cannot write missing/report.xml: No such file or directory", "\(r)")
            #expect((r.resumeHint != nil) == (status != 0), "\(r)")
        }
    }

    @Test func killedStepKeepsItsOutputToTheLastLine() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: killed
                timeout: 500ms
                shell: printf 'first line\\nlast words'; exec $CHILD --sleep 30
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--grace", "1s"])
        #expect(r.status == 1, "\(r)")
        #expect(Self.hasLine(r.stdout, "killed | first line"), "\(r)")
        #expect(Self.hasLine(r.stdout, "killed | last words"), "an unterminated last line is kept: \(r)")
        let header = r.stderrLines.firstIndex { $0.contains("output of killed") }
        #expect(header.map { r.stderrLines[$0...].contains("last words") } == true, "\(r)")
    }

    /// Each step gets its own empty FLOW_OUTPUT file (files are made ahead of time, so this
    /// is worth checking), and the scratch directory of a flow killed with SIGKILL is
    /// removed by the next run.
    @Test func outputFilesAreFreshAndAKilledRunsScratchIsSweptLater() throws {
        let box = try RunSandbox()
        let tmp = box.path("tmp")
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        try box.write("fresh.yaml", """
            steps:
              - concurrent:
                  - shell: test ! -s "$FLOW_OUTPUT" && echo "a=1" >> "$FLOW_OUTPUT"
                  - shell: test ! -s "$FLOW_OUTPUT" && echo "b=2" >> "$FLOW_OUTPUT"
              - shell: test ! -s "$FLOW_OUTPUT" && echo "$FLOW_OUTPUT" > "$SANDBOX/seen"
              - shell: test ! -s "$FLOW_OUTPUT" && test "$FLOW_OUTPUT" != "$(cat "$SANDBOX/seen")"
            """)
        let fresh = try box.run(["run", "fresh.yaml", "--no-journal"], env: ["TMPDIR": tmp])
        #expect(fresh.status == 0, "\(fresh)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: tmp)) == [], "a finished run removes its directory")

        try box.write("slow.yaml", """
            steps:
              - shell: echo started; exec $CHILD --sleep 30
            """)
        let killed = try box.start(["run", "slow.yaml", "--no-journal", "--output", "prefixed"], env: ["TMPDIR": tmp])
        #expect(killed.waitFor { stdout, _ in stdout.contains("started") })
        killed.signal(SIGKILL)
        _ = killed.waitExit(timeout: 10)
        box.killLeftovers()
        let left = try FileManager.default.contentsOfDirectory(atPath: tmp)
        #expect(left.count == 1 && left[0].hasPrefix("flow-\(killed.pid)-"), "\(left)")

        let next = try box.run(["run", "fresh.yaml", "--no-journal"], env: ["TMPDIR": tmp])
        #expect(next.status == 0, "\(next)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: tmp)) == [], "the killed run's directory is gone")
    }

    /// A `use` given at run time a value its action does not allow fails by itself, before
    /// any step inside it runs. `prefixed` showed only a dim note and the summary's
    /// `1 failed` (with `--quiet`, not even the note), `grouped` no block: no `✗` named the
    /// failure. Now its end is shown as a leaf's, once, the reason on it; the group around
    /// it, which failed because it did, ends with its time alone (and, with `--quiet`,
    /// shows nothing).
    @Test func aUseRefusedAtRunTimeShowsItsFailure() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { allowed: [staging, prod] }
                steps:
                  - name: go
                    shell: echo "deploy ${{ params.env }}"
            steps:
              - name: pick
                shell: echo "target=qa" >> "$FLOW_OUTPUT"
                outputs: [target]
              - name: outer
                sequential:
                  - name: ship
                    use: deploy
                    with: { env: "${{ steps.pick.outputs.target }}" }
            """)
        let reason = "`qa` is not an allowed value of `env` (allowed: staging, prod)"
        let timeless = { (lines: [String]) in lines.map { $0.replacing(/[0-9]+\.[0-9]s/, with: "T") } }
        let summary = "✗ failed: 1 succeeded, 1 failed, 1 skipped in T"
        for quiet in [false, true] {
            let r = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed"] + (quiet ? ["--quiet"] : []))
            #expect(r.status == 1, "\(r)")
            #expect(timeless(r.stderrLines) == (quiet ? ["✗ ship \(reason) T"]
                : ["▶ pick", "✓ pick T", "▶ outer", "▶ ship", "✗ ship \(reason) T", "✗ outer T"]) + [summary], "\(r)")

            let g = try box.run(["run", "wf.yaml", "--no-journal", "--output", "grouped"] + (quiet ? ["--quiet"] : []))
            #expect(g.status == 1, "\(g)")
            #expect(timeless(g.stderrLines) == (quiet ? [] : ["── ✓ pick (T) ──"]) + ["── ✗ ship (\(reason) T) ──", summary], "\(g)")
        }
        let raw = try box.run(["run", "wf.yaml", "--no-journal", "--output", "raw"])
        #expect(timeless(raw.stderrLines) == ["✗ ship \(reason) T", summary], "\(raw)")
        // In json the reason is the step's own: no note says it again.
        let json = try box.run(["run", "wf.yaml", "--no-journal", "--output", "json"])
        #expect(!json.jsonEvents.contains { $0["event"] as? String == "note" }, "\(json)")
        #expect(json.jsonEvents.contains { $0["step"] as? String == "2.1" && $0["to"] as? String == "failed" && $0["reason"] as? String == reason },
                "\(json)")
    }

    /// Output that stdout refuses (a full disk: /dev/full) is reported at the end of the
    /// run, pointing at the journal, which has it; before, it was lost without a word and
    /// flow exited 0 as if it had been written. The run's status stays the run's. A reader
    /// that stops reading (EPIPE) is not warned about: a closed pipe only means the reader had enough.
    @Test func outputAFullDiskRefusedIsReportedAtTheEnd() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: chatty
                shell: seq 1 100000
            """)
        for (redirect, warned) in [(">/dev/full", true), ("| head -1 >/dev/null", false)] {
            let flow = try LiveFlow(executable: "/bin/sh",
                                    arguments: ["-c", "\"$0\" \"$@\" \(redirect)", RunSandbox.flowPath,
                                                "run", "wf.yaml", "--output", "prefixed"],
                                    environment: box.environment, directory: box.root.path, ownGroup: false)
            let r = try flow.finish(timeout: 30)
            #expect(r.status == 0, "\(redirect): \(r)")
            #expect(r.stderr.contains("✓ succeeded: 1 succeeded"), "\(redirect): \(r)")
            let warning = "warning: flow could not write all of its output to stdout (no space left on device); `flow logs "
            #expect(r.stderr.contains(warning) == warned, "\(redirect): \(r)")
        }
        let quiet = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(!quiet.stderr.contains("warning: flow could not write"), "\(quiet)")
    }
    /// When the journal stops recording mid-run (its output file past `ulimit -f`: EFBIG, as
    /// a full state dir gives ENOSPC), the end-of-run warning about lost stdout no longer
    /// says `flow logs RUN` shows it: it did not (the journal had stopped, and said so).
    /// Found by the hostile-environment audit (`prlimit --fsize`), where the hint pointed
    /// at a run whose log was cut short. The run still ends with its own status, and stays
    /// resumable.
    @Test func aJournalThatStoppedRecordingIsNotOfferedForTheLostOutput() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: chatty
                shell: seq 1 200000
            """)
        // 1,000 blocks of 512 bytes: seq's 1.3 MB reaches neither the journal's output
        // file nor stdout's file whole.
        let flow = try LiveFlow(executable: "/bin/sh",
                                arguments: ["-c", "ulimit -f 1000 && exec \"$0\" \"$@\" >out.txt", RunSandbox.flowPath,
                                            "run", "wf.yaml", "--output", "prefixed"],
                                environment: box.environment, directory: box.root.path, ownGroup: false)
        let r = try flow.finish(timeout: 60)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("error: the journal stopped recording this run: cannot write "), "\(r)")
        #expect(r.stderr.contains("(File too large)") || r.stderr.contains(": File too large"), "\(r)")
        #expect(r.stderr.contains("warning: flow could not write all of its output to stdout (file too large)\n"), "\(r)")
        #expect(!r.stderr.contains("flow logs"), "\(r)")
        // What the journal has reads as a run whose process died, which resume carries on.
        let runs = try box.run(["runs"])
        #expect(runs.status == 0 && runs.stdout.contains("interrupted"), "\(runs)")
        let resumed = try box.run(["resume", "last"])
        #expect(resumed.status == 0, "\(resumed)")
    }
}
