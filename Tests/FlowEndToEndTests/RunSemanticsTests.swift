import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Run semantics at the edges: `finally` lists, retried groups, skipped groups, outputs
/// written with CRLF, and signals that arrive while `finally` or rollback runs.
@Suite struct RunSemanticsTests {
    /// Every step of a `finally` list runs, even after one of them failed (root and group).
    @Test func everyFinallyStepRunsAfterOneFails() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                sequential:
                  - { name: body, shell: echo body >> log }
                finally:
                  - { name: gf1, shell: echo gf1 >> log; exit 3 }
                  - { name: gf2, shell: "echo gf2 ${{ run.status }} >> log" }
            finally:
              - { name: rf1, shell: echo rf1 >> log; exit 4 }
              - { name: rf2, shell: "echo rf2 ${{ run.status }} >> log" }
              - name: rfgroup
                sequential:
                  - { name: rf3, shell: echo rf3 >> log }
                  - concurrent:
                      - { name: rf4, shell: echo rf4 >> log }
                  - sequential:
                      - { name: rf5, if: failure(), shell: echo rf5 >> log }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        // `run.status` is the status so far: failed once an earlier finally step failed. A
        // group in a finally list runs its steps as any group does; `failure()` deep inside
        // still sees the failure before.
        #expect(box.lines("log") == ["body", "gf1", "gf2 failed", "rf1", "rf2 failed", "rf3", "rf4", "rf5"], "\(r)")
        #expect(r.finalState(of: "grp") == "failed", "\(r)")
    }

    /// `run.status` in a step nested in a group of a `finally` list is the status so far: a
    /// step failed before it in that group (at any depth, in a concurrent group too) makes
    /// it `failed`. It said `succeeded` (the status when the group started) until the
    /// next step of the `finally` list.
    @Test func runStatusDeepInFinallySeesAFailureBeforeIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, print: a }
            finally:
              - name: cleanup
                sequential:
                  - { name: first, print: "first ${{ run.status }}" }
                  - name: inner
                    sequential:
                      - { name: boom, shell: exit 3 }
                  - { name: after, print: "after ${{ run.status }}", if: always() }
                  - name: both
                    concurrent:
                      - { name: deep, print: "deep ${{ run.status }}" }
                    if: always()
              - { name: last, print: "last ${{ run.status }}" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdoutLines == ["a", "first succeeded", "after failed", "deep failed", "last failed"], "\(r)")
    }

    /// A value that cannot reach the step's process fails the step before it starts, naming
    /// where the value came from, and is not retried: a NUL byte (C strings end there: the
    /// command silently ran with the value cut) or a value over Linux's 128 KiB per
    /// variable (the step failed with only "argument list too long", exit 127).
    /// A number compares with a string only when the string is a decimal number: an
    /// output `0x10` (a hex id, a version's hash) was equal to 16, and `inf` to nothing
    /// sensible, because `Double(_:)` reads hexadecimal and words.
    @Test func onlyADecimalStringEqualsANumber() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: id
                shell: printf 'hex=0x10\\ndec=16.0\\n' >> "$FLOW_OUTPUT"
                outputs: [hex, dec]
              - { name: hex, print: hex, if: "steps.id.outputs.hex == 16" }
              - { name: dec, print: dec, if: "steps.id.outputs.dec == 16" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        #expect(r.finalState(of: "hex") == "skipped", "\(r)")
        #expect(r.finalState(of: "dec") == "succeeded", "\(r)")
    }

    @Test func valuesNoProcessCanTakeFailTheStepByName() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: gen
                shell: head -c 200000 /dev/zero | tr '\\0' x | sed 's/^/blob=/' >> "$FLOW_OUTPUT"
              - name: nul
                shell: printf 'k=a\\000b\\n' >> "$FLOW_OUTPUT"
              - name: big
                shell: printf '%s' "${{ steps.gen.outputs.blob }}" | wc -c
                continue_on_error: true
              - name: cut
                shell: echo "[$X]" >> log
                env: { X: "${{ steps.nul.outputs.k }}" }
                retry: 2
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("big | flow: the value of `${{ steps.gen.outputs.blob }}` is 200000 bytes: Linux passes at most"), "\(r)")
        #expect(r.stderr.contains("cut | flow: the value of env `X` holds a NUL byte"), "\(r)")
        #expect(!r.stderr.contains("retrying"), "certain to fail again: \(r)")
        #expect(box.lines("log").isEmpty, "nothing ran with the value cut")
        #expect(r.stderr.contains("✗ big the value of") && r.stderr.contains("✗ cut the value of"), "\(r)")
    }

    /// A command the kernel refuses as too long (E2BIG) fails the step with the reason in the
    /// workflow's terms, once: before, the step said only "cannot run `/usr/bin/sh`: argument
    /// list too long" and was retried, though the same command would come again. A command
    /// over 128 KiB (the shell gets it as one argument) and an environment over ARG_MAX
    /// made of values each small enough to pass.
    @Test func aCommandTooLongForTheKernelIsNamedAndNotRetried() throws {
        let box = try RunSandbox()
        let long = String(repeating: "x", count: 200_000)
        let env = (1...20).map { "      E\($0): \(String(repeating: "z", count: 120_000))" }.joined(separator: "\n")
        try box.write("wf.yaml", """
            steps:
              - name: long
                shell: echo \(long) | wc -c >> log
                retry: 2
                continue_on_error: true
              - name: crowded
                shell: echo ran >> log
                retry: 2
                env:
            \(env)
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("long    | flow: the command is 200020 bytes: Linux passes at most 131071 bytes as one argument"), "\(r)")
        #expect(r.stderr.contains("crowded | flow: the command and its environment come to about"), "\(r)")
        #expect(r.stderr.contains("more than Linux passes to a command (`getconf ARG_MAX`: "), "\(r)")
        #expect(!r.stderr.contains("argument list too long"), "\(r)")
        #expect(!r.stderr.contains("retrying"), "certain to fail again: \(r)")
        #expect(box.lines("log").isEmpty, "\(r)")
    }

    /// A command flow execs directly (no shell syntax) finds its program through a relative
    /// `PATH` entry from the step's `dir`, as the shell it stands in for does (`sh -c tool`
    /// run in `dir`). It was looked up from flow's own directory and then exec'd in `dir`:
    /// `./tool` found beside the workflow failed as "not found" in a `dir` without one (the
    /// shell ran the `tool` of a later `PATH` entry), and a `tool` in `dir` lost to one of a
    /// later entry (found by reading `Executor.runShell`).
    @Test func aDirectCommandFindsItsProgramFromItsDir() throws {
        let box = try RunSandbox()
        for (file, says) in [("tool", "top"), ("bin/tool", "bin"), ("bin/other", "bin"), ("inner/other", "inner")] {
            try box.write(file, "#!/bin/sh\necho \(says)-$(basename $0)\n")
            chmod(box.path(file), 0o755)
        }
        try FileManager.default.createDirectory(atPath: box.path("empty"), withIntermediateDirectories: false)
        try box.write("wf.yaml", """
            steps:
              - { name: direct_a, shell: tool, dir: empty }
              - { name: shell_a, shell: "tool;", dir: empty }
              - { name: direct_b, shell: other, dir: inner }
              - { name: shell_b, shell: "other;", dir: inner }
              - { name: direct_c, shell: tool }
            """)
        let r = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed"],
                            env: ["PATH": ".:\(box.path("bin")):/usr/local/bin:/usr/bin:/bin"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("direct_a | bin-tool"), "\(r)")
        #expect(r.stdout.contains("shell_a  | bin-tool"), "\(r)")
        #expect(r.stdout.contains("direct_b | inner-other"), "\(r)")
        #expect(r.stdout.contains("shell_b  | inner-other"), "\(r)")
        #expect(r.stdout.contains("direct_c | top-tool"), "\(r)")
    }

    /// A flow in another pid namespace that shares the temporary directory (a container
    /// run with `--ipc=host`, or `/tmp` mounted in with `TMPDIR=/tmp`) leaves a running
    /// flow's scratch directory alone: it saw no process with the pid in the name and
    /// removed it, and the running flow's next step failed to write `FLOW_OUTPUT`
    /// ("Directory nonexistent"). Needs `unshare -p` (root); skipped without it.
    @Test func aFlowInAnotherPidNamespaceLeavesARunningFlowsScratchAlone() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return }
        let box = try RunSandbox()
        defer { box.killLeftovers() }
        try FileManager.default.createDirectory(atPath: box.path("tmp"), withIntermediateDirectories: false)
        let tmp = ["TMPDIR": box.path("tmp")]
        try box.write("a.yaml", """
            steps:
              - name: first
                shell: echo k=v >> "$FLOW_OUTPUT"; echo ready >&2; while [ ! -e go ]; do sleep 0.05; done
                outputs: [k]
              - name: second
                shell: echo k2=v2 >> "$FLOW_OUTPUT"
                outputs: [k2]
              - print: "got ${{ steps.first.outputs.k }} ${{ steps.second.outputs.k2 }}"
            """)
        try box.write("b.yaml", """
            steps:
              - shell: "true"
              - shell: "true"
            """)
        let a = try box.start(["run", "a.yaml", "--no-journal", "--output", "prefixed"], env: tmp)
        #expect(a.waitForLine("first | ready"), "\(a.stderr)")
        var env = box.environment
        env["TMPDIR"] = box.path("tmp")
        let b = try LiveFlow(executable: "/usr/bin/unshare",
                             arguments: ["-p", "-f", "--mount-proc", RunSandbox.flowPath, "run", "b.yaml", "--no-journal"],
                             environment: env, directory: box.root.path, ownGroup: false)
        let bStatus = b.waitExit(timeout: 30)
        guard bStatus == 0 else {
            // No pid namespace to be had here (a container without the capability).
            try box.write("go", "")
            _ = a.waitExit(timeout: 30)
            return
        }
        try box.write("go", "")
        let r = try a.finish(timeout: 30)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("got v v2"), "\(r)")
    }

    /// The scratch directory of a flow that was a container's init (`flow-1-…`) and was
    /// killed, left in a `/tmp` the host shares, is swept once no flow holds it and it is
    /// old: pid 1 always exists, so it was taken for a live flow's and never removed (nor
    /// by the next container's flow, pid 1 itself). A young one stays (a flow may be between
    /// making its directory and locking it).
    @Test func anOldScratchDirectoryOfAFlowThatWasPidOneIsSwept() throws {
        let box = try RunSandbox()
        let old = "tmp/flow-1-6b000000-0badf00d-AbCdEf"
        let young = "tmp/flow-1-6b000001-0badf00d-GhIjKl"
        for dir in [old, young] {
            try FileManager.default.createDirectory(atPath: box.path(dir), withIntermediateDirectories: true)
            try box.write("\(dir)/1.out", "")
        }
        var times = [timeval(tv_sec: time(nil) - 3600, tv_usec: 0), timeval(tv_sec: time(nil) - 3600, tv_usec: 0)]
        #expect(utimes(box.path(old), &times) == 0)
        // Enough shell steps that the run's upkeep, which sweeps, comes before its end.
        try box.write("wf.yaml", "steps:\n" + String(repeating: "  - shell: \"true\"\n", count: 40))
        let r = try box.run(["run", "wf.yaml", "--no-journal"], env: ["TMPDIR": box.path("tmp")])
        #expect(r.status == 0, "\(r)")
        #expect(!box.exists(old), "\(r)")
        #expect(box.exists(young), "\(r)")
    }

    /// A step that writes megabytes without a newline has its output cut into lines of
    /// 1 MiB, none lost: flow held the whole unterminated line in memory (a 200 MB one made
    /// flow 600 MB in `prefixed`, 1.2 GB in `json`). In `prefixed`, 2.5 MiB of `x` is two
    /// whole-MiB lines and the rest, in the output and in the journal alike.
    @Test func aLineWithoutEndIsCutIntoLinesOfAMebibyte() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: big, shell: "head -c 2621440 /dev/zero | tr '\\\\0' x; echo; echo after" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map { $0.utf8.count }
        let prefix = "big | ".utf8.count
        #expect(lines == [prefix + 1_048_576, prefix + 1_048_576, prefix + 524_288, prefix + 5, 0], "\(lines)")
        let logs = try box.run(["logs", "last", "big"])
        #expect(logs.stdout.split(separator: "\n").map(\.utf8.count) == [1_048_576, 1_048_576, 524_288, 5], "\(logs.stderr)")
    }

    /// A `dir` that names a file says so: the step said "working directory `f` does not
    /// exist", though `ls` showed it there.
    @Test func aDirThatIsAFileIsCalledThat() throws {
        let box = try RunSandbox()
        try box.write("f", "")
        try box.write("wf.yaml", """
            steps:
              - { name: build, shell: echo ran >> log, dir: f }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("build | flow: working directory `f` is not a directory"), "\(r)")
        #expect(box.lines("log").isEmpty)
    }

    /// A `dir` this user may not enter says so: the step said "cannot run `/usr/bin/sh`:
    /// permission denied", blaming the shell for what the directory refused (the child's
    /// chdir comes before its exec). Root enters any directory: it runs as `nobody` here.
    @Test func aDirThatCannotBeEnteredIsCalledThat() throws {
        let root = getuid() == 0
        let setpriv = "/usr/bin/setpriv"
        guard !root || FileManager.default.isExecutableFile(atPath: setpriv) else { return }
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: build, shell: pwd, dir: locked, continue_on_error: true }
              - { name: piped, shell: pwd | cat, dir: locked }
            """)
        try FileManager.default.createDirectory(atPath: box.path("locked"), withIntermediateDirectories: false)
        chmod(box.root.path, 0o755)
        chmod(box.path("wf.yaml"), 0o644)
        // Nobody's: its owner can enter it, no one else can (root only as root).
        chmod(box.path("locked"), 0o700)
        let script = root ? "exec \(setpriv) --reuid=65534 --regid=65534 --clear-groups \"$0\" \"$@\"" : "exec \"$0\" \"$@\""
        if !root { chmod(box.path("locked"), 0o600) }
        defer { chmod(box.path("locked"), 0o755) }
        let r = try FlowBinary.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed", "--no-color"],
                                   in: box.root, shellScript: script)
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("build | flow: working directory `locked` cannot be entered: permission denied"), "\(r)")
        #expect(r.stderr.contains("piped | flow: working directory `locked` cannot be entered: permission denied"), "\(r)")
        #expect(!r.stderr.contains("cannot run"), "\(r)")
    }

    /// A `dir` whose expressions come to the empty string fails the step, naming the `dir`
    /// as written (the spawn said "working directory `` does not exist"), and is not
    /// retried: the same values would come again.
    @Test func aDirThatComesToTheEmptyStringIsNamed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars: { sub: "" }
            steps:
              - name: build
                shell: echo ran >> log
                dir: "${{ vars.sub }}"
                retry: 2
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("build | flow: `dir: ${{ vars.sub }}` came to the empty string, which names no directory"), "\(r)")
        #expect(!r.stderr.contains("retrying"), "\(r)")
        #expect(box.lines("log").isEmpty)
    }

    /// In a rollback, the undo steps' status functions see the failure being rolled back, as
    /// the top-level `finally` does and as `run.status` says (`success()` was true there and
    /// `failure()` false); without an `if` they still run.
    @Test func undoStepsSeeTheFailureTheyRollBack() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  - { name: u1, if: failure(), shell: echo failure >> log }
                  - { name: u2, if: success(), shell: echo success >> log }
                  - { name: u3, shell: "echo plain ${{ run.status }} >> log" }
              - { name: boom, shell: exit 1 }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["failure", "plain failed"], "\(r)")
        #expect(r.finalState(of: "a") == "undone", "\(r)")
    }

    /// Thousands of expressions in one command: each is its own variable, and every name
    /// still reaches the process with its value (setting them was quadratic).
    @Test func aCommandWithThousandsOfExpressions() throws {
        let box = try RunSandbox()
        let parts = (1...3000).map { "${{ '\($0)' }}" }.joined(separator: "+")
        try box.write("wf.yaml", "steps:\n  - shell: echo \"\(parts)\" > out\n")
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("out") == [(1...3000).map(String.init).joined(separator: "+")])
    }

    /// `run.status` in a nested group's `finally` is the run's status so far (a sibling
    /// branch failed), not the group's own (it said `succeeded`).
    @Test func runStatusInAGroupsFinallyIsTheRunsSoFar() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - { name: boom, shell: exit 1 }
                  - name: slow
                    sequential: [ { shell: sleep 0.3 } ]
                    finally: [ { name: notify, shell: "echo notify ${{ run.status }} >> log" } ]
                fail_fast: false
            finally: [ { name: top, shell: "echo top ${{ run.status }} >> log" } ]
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["notify failed", "top failed"], "\(r)")
    }

    /// In a concurrent group a sibling's failure is not an earlier step's: a branch that
    /// `max_parallel` held back runs with `fail_fast: false`, and a written-out `success()`
    /// agrees with the implied one (it used to be false when the branch started after the
    /// failure was recorded, true when before: timing decided). `failure()` likewise does
    /// not see a sibling, but sees a failure from before the group.
    @Test func statusFunctionsInAConcurrentBranchIgnoreSiblings() throws {
        let box = try RunSandbox()
        // The delay lets the failure be recorded before `explicit` starts, which is what
        // made the old behaviour show; the outcome must not depend on it either way.
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - { name: bad, shell: exit 1 }
                  - { name: sibling_failure, if: failure(), shell: echo sibling_failure >> log }
                  - delay: 200ms
                  - { name: explicit, if: success(), shell: echo explicit >> log }
                  - { name: implied, shell: echo implied >> log }
                  - { name: conditioned, if: true, shell: echo conditioned >> log }
                max_parallel: 1
                fail_fast: false
              - name: after
                if: failure()
                concurrent:
                  - { name: seen, if: failure(), shell: echo seen >> log }
                  - { name: unseen, if: success(), shell: echo unseen >> log }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["explicit", "implied", "conditioned", "seen"], "\(r)")
        #expect(r.finalState(of: "sibling_failure") == "skipped", "\(r)")
        #expect(r.finalState(of: "unseen") == "skipped", "\(r)")
    }

    /// `env.NAME` is the step's environment variable: in a shell step's command, `dir` and
    /// `stdin` that includes what flow sets for the process (`${{ env.FLOW_OUTPUT }}` and
    /// `${{ env.FLOW_STEP }}` were empty, though `$FLOW_OUTPUT` was set).
    @Test func envExpressionsSeeTheVariablesFlowSetsForAShellStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: write
                shell: echo "v=${{ env.FLOW_STEP }}" >> "${{ env.FLOW_OUTPUT }}"
                outputs: [v]
              - name: same
                stdin: "${{ env.FLOW_OUTPUT }} ${{ env.FLOW_STEP }} ${{ env.FLOW_RUN_ID }}\\n"
                shell: |
                  read -r out step id
                  [ "$out" = "$FLOW_OUTPUT" ] && [ "$step" = "$FLOW_STEP" ] && [ "$id" = "$FLOW_RUN_ID" ]
                  echo "${{ steps.write.outputs.v }} $step" > log
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["write same"], "\(r)")
    }

    /// `env` values are evaluated in order, outer mappings first, as docs/workflow-format.md
    /// says: an entry reading a later entry of its mapping gets the enclosing value, one
    /// reading its own name the enclosing one too, and an outer entry is not re-evaluated
    /// for an inner override.
    @Test func envValuesAreEvaluatedInOrder() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            env: { A: wf, D: "${{ env.A }}-d" }
            steps:
              - env:
                  B: "${{ env.A }}"
                  A: step
                  C: "${{ env.A }}"
                  E: "${{ env.E }}+e"
                shell: echo "$B $C $D $E" > log
            """)
        let r = try box.run(["run", "wf.yaml", "--no-journal"], env: ["E": "flow"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["wf step wf-d flow+e"], "\(r)")
    }

    /// A group or `use` step that runs after a failure because its `if` says so runs its
    /// steps (they used to be skipped for the very failure that let the group run): their
    /// implied `success()` looks at the group's own steps, `failure()` inside still sees
    /// the earlier failure.
    @Test func aGroupWhoseIfCallsAStatusFunctionRunsItsSteps() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              notify:
                steps:
                  - { name: n1, shell: echo notify >> log }
            steps:
              - { name: boom, shell: exit 3 }
              - name: report
                if: failure()
                concurrent:
                  - { name: r1, shell: echo r1 >> log }
                  - { name: r2, shell: echo r2 >> log }
              - name: cleanup
                if: always()
                sequential:
                  - { name: c1, shell: echo c1 >> log; exit 1 }
                  - { name: c2, shell: echo c2 >> log }
                  - { name: c3, if: failure(), shell: echo c3 >> log }
              - { name: tell, use: notify, if: failure() }
              - name: deeper
                if: failure()
                sequential:
                  - sequential:
                      - { name: d1, if: failure(), shell: echo d1 >> log }
                      - { name: d2, shell: echo d2 >> log }
                    finally:
                      - { name: df, if: failure(), shell: echo df >> log }
              - name: never
                sequential:
                  - { name: s1, shell: echo s1 >> log }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(Set(box.lines("log")) == ["r1", "r2", "c1", "c3", "notify", "d1", "d2", "df"], "\(r)")
        #expect(r.finalState(of: "report") == "succeeded", "\(r)")
        #expect(r.finalState(of: "c2") == "skipped", "after c1 failed, in its own group: \(r)")
        #expect(r.finalState(of: "cleanup") == "failed", "\(r)")
        #expect(r.finalState(of: "s1") == "skipped", "\(r)")
    }

    /// A retried group runs its steps again as new instances: the summary counts each
    /// workflow step once (its latest state), and rollback reverses every attempt that
    /// succeeded, each with its own outputs, latest first.
    @Test func retriedGroupCountsEachStepOnceAndUndoesEveryAttempt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                retry: 1
                sequential:
                  - name: make
                    shell: |
                      n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n
                      echo "id=$n" >> "$FLOW_OUTPUT"
                    undo:
                      shell: "echo undo ${{ steps.make.outputs.id }} >> log"
                  - { name: flaky, shell: "test -e marker || { touch marker; exit 1; }" }
                  - { name: after, print: after }
              - { name: boom, shell: exit 1 }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["undo 2", "undo 1"], "\(r)")
        let finished = r.jsonEvents.first { $0["event"] as? String == "run_finished" }
        let counts = finished?["counts"] as? [String: Int]
        #expect(counts == ["succeeded": 2, "failed": 1, "undone": 1], "\(r)")
        // What flow says about the run comes as documented `note` events.
        let notes = r.jsonEvents.filter { $0["event"] as? String == "note" }
        #expect(notes.contains { $0["step"] as? String == "1" && ($0["message"] as? String)?.hasPrefix("retrying") == true }, "\(r)")
        #expect(notes.contains { $0["step"] is NSNull && $0["message"] as? String == "rolling back 2 steps" }, "\(r)")
    }

    /// The journal keeps each step's latest instance: the rollback of an earlier attempt of a
    /// retried group does not make a step whose last attempt failed `undone`, and a step the
    /// last attempt skipped keeps nothing of the attempt before. `flow show` said the failed
    /// run had `1 skipped, 1 undone` (no failure) while its summary said `1 failed, 1
    /// skipped`, and showed the skipped step with the earlier attempt's exit code and time.
    @Test func rollbackOfAnEarlierGroupAttemptKeepsTheLatestStateInTheJournal() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                retry: 1
                sequential:
                  - name: make
                    shell: echo x >> made; test "$(wc -l < made)" -eq 1
                    undo: { name: unmake, shell: echo unmade >> log }
                  - { name: flaky, shell: echo x >> ran; test "$(wc -l < ran)" -gt 1 }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["unmade"], "the first attempt's make is undone: \(r)")
        let finished = try #require(r.jsonEvents.first { $0["event"] as? String == "run_finished" })
        #expect(finished["counts"] as? [String: Int] == ["failed": 1, "skipped": 1], "\(r)")
        let shown = try JournalEndToEndTests.show(box)
        #expect(shown["counts"] as? [String: Int] == ["failed": 1, "skipped": 1], "\(shown)")
        let steps = try #require(shown["steps"] as? [[String: Any]])
        let make = try #require(steps.first { $0["name"] as? String == "make" })
        #expect(make["state"] as? String == "failed", "\(make)")
        let flaky = try #require(steps.first { $0["name"] as? String == "flaky" })
        #expect(flaky["state"] as? String == "skipped", "\(flaky)")
        #expect(flaky["exit_code"] is NSNull && flaky["duration_seconds"] is NSNull && flaky["attempts"] as? Int == 0,
                "nothing of the attempt before: \(flaky)")
        let unmake = try #require(steps.first { $0["name"] as? String == "unmake" })
        #expect(unmake["state"] as? String == "succeeded", "\(unmake)")
    }

    /// A step whose latest instance failed or was skipped has no outputs in the journal, as
    /// at run time: `flow show` listed the outputs an earlier attempt of its retried group
    /// wrote (`○ tag [skipped · outputs v]`), and `flow undo` gave them to undo steps.
    @Test func aRetriedGroupsStepKeepsNoOutputsOfAnEarlierAttempt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            rollback: false
            steps:
              - name: grp
                retry: 1
                sequential:
                  - { name: count, shell: echo x >> counted; echo "n=$(wc -l < counted)" >> "$FLOW_OUTPUT" }
                  - name: tag
                    shell: echo "v=1" >> "$FLOW_OUTPUT"
                    if: steps.count.outputs.n == 1
                  - name: fails
                    shell: echo x >> failed; echo "v=$(wc -l < failed)" >> "$FLOW_OUTPUT"; test "$(wc -l < failed)" -eq 1
                  - { name: flaky, shell: exit 1 }
              - name: after
                print: "[${{ steps.tag.outputs.v }}][${{ steps.fails.outputs.v }}]"
                if: always()
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(r.finalState(of: "tag") == "skipped" && r.finalState(of: "fails") == "failed", "\(r)")
        let printed = r.jsonEvents.first { $0["event"] as? String == "output" && $0["step"] as? String == "2" }
        #expect(printed?["line"] as? String == "[][]", "at run time both are empty: \(r)")
        let steps = try #require(JournalEndToEndTests.show(box)["steps"] as? [[String: Any]])
        for name in ["tag", "fails"] {
            let step = try #require(steps.first { $0["name"] as? String == name })
            #expect(step["outputs"] as? [String: String] == [:], "\(name): \(step)")
        }
    }

    /// `flow show` gives a step of a retried group the time of its latest instance, as the
    /// live output does: it timed it from the first attempt's start, so a step after a
    /// 1s `delay` showed at least 1s (the delay's second run).
    @Test func aRetriedGroupsStepsAreTimedByTheirLatestInstance() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                retry: 1
                sequential:
                  - { name: wait, delay: 1s }
                  - { name: flaky, shell: "test -e marker || { touch marker; exit 1; }" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        let steps = try #require(JournalEndToEndTests.show(box)["steps"] as? [[String: Any]])
        func seconds(_ name: String) -> Double? {
            steps.first { $0["name"] as? String == name }?["duration_seconds"] as? Double
        }
        let flaky = try #require(seconds("flaky")), wait = try #require(seconds("wait"))
        #expect(flaky < 1, "flaky ran once, after the second delay: \(steps)")
        // A bound, as the property is one: a delay of 1 s, not both; its second of slack is
        // hundreds of times what a delay overruns by.
        #expect(wait >= 1 && wait < 2, "one delay, not both: \(steps)")
        let whole = try #require(seconds("grp"))
        #expect(whole >= 2, "the group's own time spans its attempts: \(steps)")
    }

    /// A step that a group's `timeout` or a sibling's fail-fast stopped before it started is
    /// skipped for that reason: its event said "the run was cancelled", with no signal sent.
    @Test func stepsAStoppedGroupSkipsDoNotSayTheRunWasCancelled() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: bounded
                timeout: 300ms
                sequential:
                  - { name: slow, shell: exec sleep 30 }
                  - { name: after_slow, print: never }
              - name: race
                if: always()
                concurrent:
                  - sequential:
                      - { name: long, shell: exec sleep 30 }
                      - { name: after_long, print: never }
                  - { name: bad, shell: exit 1 }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        let skips = r.jsonEvents.filter { $0["event"] as? String == "step_state" && $0["to"] as? String == "skipped" }
        func reason(_ name: String) -> String? { skips.first { $0["name"] as? String == name }?["reason"] as? String }
        #expect(reason("after_slow") == "its group was stopped (a timeout or fail_fast)", "\(r)")
        #expect(reason("after_long") != nil, "\(r)")
        #expect(!skips.contains { $0["reason"] as? String == "the run was cancelled" }, "\(skips)")
        #expect(r.finalState(of: "bounded") == "timed_out" && r.finalState(of: "bad") == "failed", "\(r)")
    }

    /// A step's `timeout` stops it as cancellation does: SIGTERM, then SIGKILL after
    /// `--grace` (here short, so a step that ignores SIGTERM is killed well before the
    /// default 5s), and `exit_code` says how it ended (137).
    @Test func aTimeoutSendsSigtermThenSigkillAfterTheGrace() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: stubborn
                shell: trap '' TERM; touch started; $CHILD --sleep 30
                timeout: 200ms
                continue_on_error: true
              - print: "${{ steps.stubborn.status }} ${{ steps.stubborn.exit_code }}"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw", "--grace", "100ms"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines == ["timed_out 137"], "\(r)")
        // A bound, as the property is one: the grace given, not the default 5 s. The run
        // takes about 0.3 s (the time-out and the grace); 4 s is over ten times that.
        #expect(r.elapsed < 4, "killed after the 100ms grace, not the default 5s: \(r.elapsed)")
        #expect(box.exists("started"))
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// The undo of an earlier attempt's step sees that attempt's results, also those of the
    /// steps before it: `attach` reverses what it did to the resource its sibling `create`
    /// made in the same attempt. It saw the last attempt's `create` (`detach 2` twice), so
    /// resource 1 stayed attached; its own outputs were already its attempt's.
    @Test func anEarlierAttemptsUndoSeesItsOwnAttemptsSiblings() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                retry: 1
                sequential:
                  - name: create
                    shell: |
                      n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n
                      echo "id=$n" >> "$FLOW_OUTPUT"
                  - name: attach
                    shell: echo "to=${{ steps.create.outputs.id }}" >> "$FLOW_OUTPUT"
                    undo:
                      - name: detach
                        shell: echo "detach ${{ steps.create.outputs.id }} (attached to ${{ steps.attach.outputs.to }}) ${{ steps.create.status }}" >> log
                      - shell: echo "after ${{ steps.detach.status }} ${{ steps.create.outputs.id }}" >> log
                  - { name: flaky, shell: "test -e marker || { touch marker; exit 1; }" }
              - { name: boom, shell: exit 1 }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == [
            "detach 2 (attached to 2) succeeded", "after succeeded 2",
            "detach 1 (attached to 1) succeeded", "after succeeded 1",
        ], "\(r)")
    }

    /// A skipped group's steps (nested to any depth) each get their own `pending → skipped`.
    @Test func stepsOfASkippedGroupAreSkippedToo() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: outer
                if: "false"
                sequential:
                  - { name: one, print: never }
                  - name: inner
                    concurrent:
                      - { name: two, print: never }
                    finally:
                      - { name: three, print: never }
              - { name: last, print: ran }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        for name in ["outer", "one", "inner", "two", "three"] {
            #expect(r.states(of: name) == ["skipped"], "\(name): \(r)")
        }
        let show = try box.run(["show", "last", "--json"])
        #expect(!show.stdout.contains("\"pending\""), "\(show)")
    }

    /// `key=value` lines ending in CRLF are read as lines, the CR dropped.
    @Test func outputsWrittenWithCRLF() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: produce
                shell: printf 'a=1\\r\\nb=2\\r\\nnotes<<END\\r\\nx\\r\\nEND\\r\\n' >> "$FLOW_OUTPUT"
              - name: consume
                print: "[${{ steps.produce.outputs.a }}][${{ steps.produce.outputs.b }}][${{ steps.produce.outputs.notes }}]"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines == ["[1][2][x]"], "\(r)")
    }

    /// A signal while the root `finally` runs: that step is not interrupted, the rest of
    /// `finally` runs and sees `run.status == cancelled`, rollback runs, the run ends
    /// `cancelled` with 128 + the signal.
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalDuringFinallyCancelsTheRun(_ signal: Int32) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: made
                shell: echo made >> log
                undo:
                  shell: echo unmade >> log
            finally:
              - { name: fin1, shell: $CHILD --stderr ready --sleep 1.5 }
              - { name: fin2, shell: "echo fin2 ${{ run.status }} >> log" }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("fin1 | ready"), "\(flow.stderr)")
        flow.signal(signal)
        let r = try flow.finish(timeout: 20)
        #expect(r.status == 128 + signal, "\(r)")
        #expect(box.lines("log") == ["made", "fin2 cancelled", "unmade"], "\(r)")
        // The note says what happens: the steps are over, so nothing is interrupted (it
        // said the running steps got the signal, and SIGKILL after the grace period).
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        #expect(r.stderr.contains("\(name): cancelling: the steps have ended, so no step is interrupted; "
            + "what is left of `finally` and rollback runs; signal again to kill everything now\n"), "\(r)")
        #expect(!r.stderr.contains("running steps get"), "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.first?["state"] as? String == "cancelled", "\(runs)")
    }

    /// A signal during rollback: rollback goes on to the end, and the run ends `cancelled`.
    @Test func aSignalDuringRollbackLetsItFinish() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: first
                shell: echo first >> log
                undo:
                  shell: echo unfirst >> log
              - name: second
                shell: echo second >> log
                undo:
                  shell: $CHILD --stderr ready --sleep 1.5 --print unsecond
              - { name: boom, shell: exit 1 }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitFor { _, err in err.contains("| ready") }, "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 20)
        #expect(r.status == 130, "\(r)")
        #expect(box.lines("log") == ["first", "second", "unfirst"], "\(r)")
        #expect(r.stdout.contains("unsecond"), "\(r)")
        #expect(r.stderr.contains("SIGINT: cancelling: the steps have ended, so no step is interrupted"), "\(r)")
        #expect(!r.stderr.contains("running steps get"), "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    static let allowedWorkflow = """
        vars:
          target: staging
        actions:
          deploy:
            params:
              env: { required: true, allowed: [staging, prod] }
            steps:
              - { name: go, shell: "echo deploying ${{ params.env }} >> log" }
        steps:
          - name: pick
            shell: echo "env=$PICK" >> "$FLOW_OUTPUT"
          - name: fromvars
            use: deploy
            with: { env: "${{ vars.target }}" }
          - name: fromoutput
            use: deploy
            with: { env: "${{ steps.pick.outputs.env }}" }
        """

    /// `allowed` holds for values built from expressions: from `vars` when the run is
    /// planned (a usage error naming the location), from outputs when the step starts.
    @Test func allowedParamValuesAreCheckedWhenKnown() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.allowedWorkflow)
        let plan = try box.run(["plan", "wf.yaml", "--var", "target=bogus"])
        #expect(plan.status == 2, "\(plan)")
        #expect(plan.stderr.contains("wf.yaml:14:18: `bogus` (from `${{ vars.target }}`) is not an allowed value of `env`"), "\(plan)")
        let good = try box.run(["run", "wf.yaml", "--output", "json"], env: ["PICK": "prod"])
        #expect(good.status == 0, "\(good)")
        #expect(box.lines("log") == ["deploying staging", "deploying prod"], "\(good)")
        let bad = try box.run(["run", "wf.yaml", "--output", "json"], env: ["PICK": "evil"])
        #expect(bad.status == 1, "\(bad)")
        #expect(box.lines("log") == ["deploying staging", "deploying prod", "deploying staging"], "\(bad)")
        #expect(bad.finalState(of: "fromoutput") == "failed", "\(bad)")
        let finished = bad.jsonEvents.first { $0["event"] as? String == "run_finished" }
        #expect((finished?["counts"] as? [String: Int])?["failed"] == 1, "the failed use step is counted: \(bad)")
        #expect(bad.jsonEvents.contains { ($0["reason"] as? String)?.contains("`evil` is not an allowed value of `env`") == true }, "\(bad)")
        // The journal counts it as the summary did: `runs` and `show` said "2 succeeded,
        // 1 skipped" for the failed run, naming no failure.
        let recorded = try JournalEndToEndTests.show(box)
        #expect(recorded["counts"] as? [String: Int] == ["succeeded": 2, "failed": 1, "skipped": 1], "\(recorded)")
        let listed = try JournalEndToEndTests.runs(box)
        #expect(listed.first?["counts"] as? [String: Int] == ["succeeded": 2, "failed": 1, "skipped": 1], "\(listed)")
        let shown = try box.run(["show", "last"])
        #expect(shown.stdout.hasSuffix("steps: 2 succeeded, 1 failed, 1 skipped\n"), "\(shown)")
    }

    /// A retried group whose `use` failed before its steps ran (a value not `allowed`) and
    /// then succeeded: the summary counts the `use` by its latest state, as `show` does (it
    /// said "2 succeeded, 1 failed" for a run that succeeded).
    @Test func aRetriedUseThatFailedBeforeItsStepsRanIsCountedByItsLatestState() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true, allowed: [staging, prod] }
                steps:
                  - { name: go, shell: "echo deploying ${{ params.env }} >> log" }
            steps:
              - name: attempt
                retry: 1
                sequential:
                  - name: pick
                    shell: |
                      if [ -e picked ]; then echo "env=prod" >> "$FLOW_OUTPUT"; else touch picked; echo "env=evil" >> "$FLOW_OUTPUT"; fi
                  - name: ship
                    use: deploy
                    with: { env: "${{ steps.pick.outputs.env }}" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["deploying prod"], "\(r)")
        #expect(r.stderr.contains("✗ ship `evil` is not an allowed value of `env`"), "the first attempt's failure is shown: \(r)")
        #expect(r.stderr.contains("✓ succeeded: 2 succeeded in "), "\(r)")
        #expect(!r.stderr.contains("1 failed"), "\(r)")
        let recorded = try JournalEndToEndTests.show(box)
        #expect(recorded["counts"] as? [String: Int] == ["succeeded": 2], "\(recorded)")
    }

    /// `flow undo` interrupted: the rollback goes on to the end, and the undo run ends
    /// `cancelled` with 128 + the signal.
    @Test func aSignalDuringFlowUndoCancelsIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: made
                shell: echo made >> log
                undo:
                  shell: $CHILD --stderr ready --sleep 1.5 --print unmade
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let flow = try box.start(["undo", "last", "--output", "prefixed"])
        #expect(flow.waitFor { _, err in err.contains("| ready") }, "\(flow.stderr)")
        flow.signal(SIGTERM)
        let r = try flow.finish(timeout: 20)
        #expect(r.status == 143, "\(r)")
        #expect(r.stdout.contains("unmade"), "the undo step ran to its end: \(r)")
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.first?["kind"] as? String == "undo", "\(runs)")
        #expect(runs.first?["state"] as? String == "cancelled", "\(runs)")
    }

    /// `--output json` writes each event as it happens, also into a pipe: a reader sees a
    /// step end while the next step still runs.
    @Test func jsonEventsAreWrittenAsTheyHappen() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: quick, shell: "true" }
              - { name: long, shell: $CHILD --sleep 30 }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "json"])
        let seen = flow.waitFor(timeout: 15) { out, _ in out.contains("\"name\":\"long\",\"kind\":\"shell\",\"from\":\"pending\",\"to\":\"running\"") }
        #expect(seen, "events of a running run reach the pipe: \(flow.stdout)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 20)
        #expect(r.status == 130, "\(r)")
    }

    /// A run's recorded start is when it started, not when the journal got to write it: a
    /// short run's duration is never negative.
    @Test func recordedDurationsAreNeverNegative() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - print: hi\n")
        for _ in 0..<5 { #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0) }
        for run in try JournalEndToEndTests.runs(box) {
            #expect((run["duration_seconds"] as? Double ?? -1) >= 0, "\(run)")
        }
    }

    /// An undo run records the steps it leaves alone as `skipped`, none `pending`.
    @Test func anUndoRunSkipsTheStepsItLeavesAlone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: write, shell: echo hi > f.txt, undo: { shell: rm f.txt } }
              - { name: other, print: other }
              - sequential:
                  - { name: nested, print: nested }
            finally:
              - { name: fin, print: fin }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(!box.exists("f.txt"))
        let show = try box.run(["show", "last", "--json"])
        #expect(!show.stdout.contains("\"pending\""), "\(show)")
        #expect(try JournalEndToEndTests.runs(box).first?["counts"] as? [String: Int] == ["undone": 1])
    }

    /// A second Ctrl-C kills every step at once; `--output grouped` still shows what the
    /// killed step printed (its block was held until the step's end, which never came).
    @Test func aSecondSignalKeepsTheGroupedOutputOfKilledSteps() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: stubborn
                shell: "trap '' INT TERM; echo before; touch started; exec sleep 30"
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "grouped", "--grace", "30s"])
        // flow has read the line once the journal has it (the run is live: `flow logs`
        // reads what is committed).
        let deadline = Date().addingTimeInterval(20)
        var read = false
        while !read, Date() < deadline {
            read = (try? box.run(["logs", "last"]))?.stdout.contains("before") == true
            if !read { usleep(50_000) }
        }
        #expect(read, "flow read the step's line")
        flow.signal(SIGINT)
        // flow says it heard the first (two signals sent at once would merge into one).
        #expect(flow.waitFor { _, err in err.contains("SIGINT: stopping") }, "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 20)
        #expect(r.status == 130, "\(r)")
        #expect(r.stdoutLines.contains("before"), "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }
}

extension RunSemanticsTests {
    /// fail_fast skips the siblings not started, as the contract says, one whose `if`
    /// calls `always()` too (docs/workflow-format.md, Groups): whether it had started is
    /// timing. A step after the group with `if: always()` runs and sees it `skipped`.
    @Test func failFastSkipsANotStartedSiblingWhoseIfIsAlways() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - shell: exit 1
                  - { name: held, if: always(), shell: echo held >> log }
                max_parallel: 1
              - { name: after, if: always(), shell: "echo after ${{ steps.held.status }} >> log" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["after skipped"], "\(r)")
        #expect(r.stdout.contains(#""name":"held","kind":"shell","from":"pending","to":"skipped","attempt":1,"reason":"a sibling failed (fail_fast)""#), "\(r)")
    }
}
