import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--output grouped` holds a step's output until its block is written: in memory up to
/// 1 MiB, the rest in a temporary file. These check the blocks of steps that print far
/// more than that, and that flow's memory does not grow with the output.
struct GroupedOutputTests {
    /// A retried step's later attempts are blocks of their own, each titled with its
    /// attempt (the three blocks of a step tried three times all read `✗ flaky (exit 1 …)`),
    /// in the terminal's form and GitHub Actions' groups alike.
    @Test func aRetriedStepsLaterAttemptsSayWhichTheyAre() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: flaky
                shell: echo try; exit 1
                retry: 2
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped", "--no-journal"])
        #expect(r.status == 1, "\(r)")
        let titles = r.stderrLines.filter { $0.hasPrefix("── ✗ flaky") }.map { $0.replacingOccurrences(of: #" \d+\.\ds"#, with: "", options: .regularExpression) }
        #expect(titles == ["── ✗ flaky (exit 1) ──", "── ✗ flaky (attempt 2; exit 1) ──", "── ✗ flaky (attempt 3; exit 1) ──"], "\(r)")
        let github = try box.run(["run", "wf.yaml", "--output", "grouped", "--no-journal"], env: ["GITHUB_ACTIONS": "true"])
        let groups = github.stdoutLines.filter { $0.hasPrefix("::group::") }.map { $0.replacingOccurrences(of: #" \d+\.\ds"#, with: "", options: .regularExpression) }
        #expect(groups == ["::group::✗ flaky (exit 1)", "::group::✗ flaky (attempt 2; exit 1)", "::group::✗ flaky (attempt 3; exit 1)"], "\(github)")
    }

    /// A step that writes 8 MiB to stdout and 2 MiB to stderr, in alternating chunks: each
    /// stream of its block holds exactly what the step wrote to it.
    @Test func aBigStepsBlockHoldsExactlyWhatItWrote() throws {
        let box = try RunSandbox()
        var out = ""
        var err = ""
        for i in 0..<64 {
            var o = ""
            for j in 0..<1024 { o += "out \(i) \(j) \(String(repeating: "o", count: 110 + (j % 17)))\(j % 7 == 0 ? "\r\n" : "\n")" }
            let e = (0..<256).map { "err \(i) \($0) \(String(repeating: "e", count: 100))\n" }.joined()
            try box.write("o\(i)", o)
            try box.write("e\(i)", e)
            out += o
            err += e
        }
        #expect(out.utf8.count > 8 << 20)
        try box.write("wf.yaml", """
            steps:
              - name: big
                shell: 'i=0; while [ $i -lt 64 ]; do cat o$i; cat e$i >&2; i=$((i+1)); done; printf unfinished'
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["TMPDIR": box.root.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == out + "unfinished\n", "stdout differs: \(r.stdout.utf8.count) bytes, want \(out.utf8.count + 11)")
        let header = try #require(r.stderr.range(of: "── ✓ big ("))
        let body = try #require(r.stderr.range(of: " ──\n", range: header.upperBound..<r.stderr.endIndex))
        #expect(r.stderr[body.upperBound...].hasPrefix(err), "stderr differs")
        #expect(r.stderr[body.upperBound...].dropFirst(err.count).hasPrefix("✓ succeeded: 1 succeeded"), "\(r.stderr.suffix(200))")
    }

    /// Concurrent steps that each print 4 MiB: their blocks do not mix.
    @Test func concurrentBigStepsDoNotInterleave() throws {
        let box = try RunSandbox()
        // 128 bytes a line: 4 MiB is 32,768 whole lines.
        let lines = ["a", "b", "c"].map { "\($0) \(String(repeating: $0, count: 125))\n" }
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - name: a
                    shell: yes '\(lines[0].dropLast())' | head -c 4194304
                  - name: b
                    shell: yes '\(lines[1].dropLast())' | head -c 4194304
                  - name: c
                    shell: yes '\(lines[2].dropLast())' | head -c 4194304
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["TMPDIR": box.root.path])
        #expect(r.status == 0, "\(r.stderr)")
        // Each block is 32,768 lines of one step, whole.
        let blocks = r.stdoutLines.reduce(into: [(String, Int)]()) { blocks, line in
            let step = String(line.prefix(1))
            if blocks.last?.0 == step { blocks[blocks.count - 1].1 += 1 } else { blocks.append((step, 1)) }
        }
        #expect(blocks.map(\.1) == [32768, 32768, 32768], "\(blocks.prefix(10))")
        #expect(Set(blocks.map(\.0)) == ["a", "b", "c"])
        #expect(Set(r.stdoutLines) == Set(lines.map { String($0.dropLast()) }))
    }

    /// A second signal kills a step that printed 4 MiB: all of it is still written.
    @Test func aKilledBigStepsOutputIsStillWritten() throws {
        let box = try RunSandbox()
        let line = String(repeating: "k", count: 127)
        try box.write("wf.yaml", """
            steps:
              - name: stubborn
                shell: "trap '' INT TERM; yes \(line) | head -n 32768; echo END; exec sleep 30"
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "grouped", "--grace", "30s"], env: ["TMPDIR": box.root.path])
        // flow has read the last line once the journal has it.
        let deadline = Date().addingTimeInterval(30)
        var read = false
        while !read, Date() < deadline {
            read = (try? box.run(["logs", "last"]))?.stdout.contains("END") == true
            if !read { usleep(100_000) }
        }
        #expect(read, "flow read the step's last line")
        flow.signal(SIGINT)
        #expect(flow.waitFor { _, err in err.contains("SIGINT: stopping") }, "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 30)
        #expect(r.status == 130, "\(r.stderr)")
        #expect(r.stdout == String(repeating: line + "\n", count: 32768) + "END\n", "\(r.stdout.utf8.count) bytes")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// A step that prints 300 MB: flow's peak memory stays far below that. Holding the
    /// block in memory, flow peaked above 500 MB. The peak is flow's own `VmHWM`, read by the
    /// next step (flow is its parent) after the big block has been written: no timing, and
    /// not the test process's memory (which a `vfork`ed child's `ru_maxrss` takes in).
    @Test func aStepPrinting300MBDoesNotMakeFlowHoldIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: huge
                shell: yes 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 | head -c 314572800
              - name: peak
                shell: sed -n 's/^VmHWM:[^0-9]*\\([0-9]*\\) kB$/\\1/p' /proc/$PPID/status > peak-kb
            """)
        // flow's 300 MB of stdout to /dev/null, not into the test's memory.
        let r = try FlowBinary.run(["run", "wf.yaml", "--output", "grouped", "--no-journal"], in: box.root, timeout: 120,
                                   shellScript: "TMPDIR=\"$PWD\" exec \"$0\" \"$@\" >/dev/null")
        #expect(r.status == 0, "\(r.stderr)")
        let peak = try #require(Int((box.read("peak-kb") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stderr)")
        #expect(peak < 100 * 1024, "flow peaked at \(peak / 1024) MiB")
    }

    /// `--quiet` keeps the blocks of failed steps until the run ends: 80 steps that each
    /// fail after printing 1,000,000 bytes (under the 1 MiB a running step holds) must not
    /// make flow hold 80 MB. A kept block's bytes went to the temporary file, but its
    /// memory stayed allocated (the buffer was emptied keeping its capacity): flow peaked
    /// above 100 MiB. Peak read as in `aStepPrinting300MBDoesNotMakeFlowHoldIt`.
    @Test func quietKeptFailuresDoNotStayInMemory() throws {
        let box = try RunSandbox()
        let steps = (0..<80).map { i in
            "      - name: f\(i)\n        shell: yes 0123456789012345678901234567890123456789 | head -c 1000000; exit 1"
        }.joined(separator: "\n")
        try box.write("wf.yaml", """
            steps:
              - concurrent:
            \(steps)
                fail_fast: false
                max_parallel: 2
            finally:
              - name: peak
                shell: sed -n 's/^VmHWM:[^0-9]*\\([0-9]*\\) kB$/\\1/p' /proc/$PPID/status > peak-kb
            """)
        let r = try FlowBinary.run(["run", "wf.yaml", "--output", "grouped", "--quiet", "--no-journal"], in: box.root,
                                   timeout: 120, shellScript: "TMPDIR=\"$PWD\" exec \"$0\" \"$@\" >/dev/null")
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("80 failed"), "\(r.stderr.suffix(300))")
        let peak = try #require(Int((box.read("peak-kb") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.stderr)")
        #expect(peak < 60 * 1024, "flow peaked at \(peak / 1024) MiB")
    }
}
