import Foundation
import FlowKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `--output json` stream is what docs/events.md says, through the built binary: the
/// tables there (each event's members, their types, which are always present; the legal
/// transitions) are read by this test and every event of varied runs is checked against
/// them, so the page cannot drift from what flow writes. The transition table is also
/// compared with the code's (`StepState.transitions`).
@Suite struct EventStreamTests {
    /// One documented member of an event: the JSON types it may have, and whether it is
    /// always present.
    struct Member {
        var types: Set<String>
        var always: Bool
    }

    /// The documented events and their members, from docs/events.md's tables.
    struct Contract {
        var events: [String: [String: Member]] = [:]
        var transitions: [String: Set<String>] = [:]
    }

    static func contract() throws -> Contract {
        let url = FlowBinary.packageRoot.appendingPathComponent("docs/events.md")
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        var contract = Contract()
        var section = ""
        var event: String?
        for line in lines {
            if line.hasPrefix("## ") { section = String(line.dropFirst(3)); event = nil }
            if line.hasPrefix("### `"), section == "Events" {
                event = String(line.dropFirst(5).prefix { $0 != "`" })
                contract.events[event!] = [:]
            }
            guard line.hasPrefix("| `") else { continue }
            // Cells split at `|` not escaped as `\|` (which the type column uses).
            let cells = line.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|")
                .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\u{1}", with: "|") }
            let name = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            if let event, cells.count >= 3 {
                let types = Set(cells[1].split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) })
                contract.events[event]![name] = Member(types: types, always: cells[2] == "always")
            } else if section == "Transitions", cells.count >= 2 {
                contract.transitions[name] = Set(cells[1].split(separator: ",").map {
                    $0.trimmingCharacters(in: CharacterSet(charactersIn: "` "))
                })
            }
        }
        return contract
    }

    /// The JSON type of a value as the tables name it.
    static func jsonType(_ value: Any) -> String {
        if value is NSNull { return "null" }
        if value is Bool, !(value is Int) { return "boolean" }
        if let number = value as? NSNumber {
            // Foundation parses `true` and `false` as numbers of type `c` (char).
            if String(cString: number.objCType) == "c" { return "boolean" }
            // Foundation keeps what it parsed: `d` for a number with a fraction or exponent.
            let type = String(cString: number.objCType)
            return type == "d" || type == "f" ? "number" : "integer"
        }
        if value is String { return "string" }
        if value is [String: Any] { return "object" }
        if value is [Any] { return "array" }
        return "?"
    }

    /// Every problem of one run's stream: members and types against the tables, the
    /// transitions, the order (first, last, output while running), each step's end, the
    /// counts against the steps' ends, and the exit status.
    static func problems(_ outcome: FlowOutcome, _ contract: Contract) -> [String] {
        var problems: [String] = []
        let lines = outcome.stdoutLines
        var events: [[String: Any]] = []
        for line in lines {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                problems.append("not a JSON object: \(line)")
                continue
            }
            events.append(object)
        }
        for (index, event) in events.enumerated() {
            let name = event["event"] as? String ?? "?"
            guard let members = contract.events[name] else {
                problems.append("event \(index): `\(name)` is not documented")
                continue
            }
            for (key, value) in event {
                guard let member = members[key] else {
                    problems.append("event \(index) `\(name)`: member `\(key)` is not documented")
                    continue
                }
                let type = jsonType(value)
                // An integer is a number too (`elapsed_seconds` of 0 is written `0`).
                if !member.types.contains(type), !(type == "integer" && member.types.contains("number")) {
                    problems.append("event \(index) `\(name)`: `\(key)` is \(type), documented \(member.types.sorted())")
                }
            }
            for (key, member) in members where member.always && event[key] == nil {
                problems.append("event \(index) `\(name)`: `\(key)` is missing")
            }
        }
        let kinds = events.map { $0["event"] as? String ?? "" }
        if kinds.first != "run_started" || kinds.filter({ $0 == "run_started" }).count != 1 {
            problems.append("run_started is not first, once")
        }
        if kinds.last != "run_finished" || kinds.filter({ $0 == "run_finished" }).count != 1 {
            problems.append("run_finished is not last, once")
        }
        // Each path's instances (a retried group's steps start again at `pending`).
        var states: [String: [(state: String, kind: String, attempt: Int)]] = [:]
        // Whether the run is an undo (it skips the steps it leaves alone, `not undone by this
        // run`, and those inside a group it leaves alone): its counts leave its skips out.
        var isUndo = false
        for (index, event) in events.enumerated() {
            let path = event["step"] as? String ?? ""
            switch event["event"] as? String {
            case "step_state":
                let from = event["from"] as? String ?? "", to = event["to"] as? String ?? ""
                if to == "skipped", event["reason"] as? String == "not undone by this run" { isUndo = true }
                let attempt = event["attempt"] as? Int ?? 0
                if contract.transitions[from]?.contains(to) != true {
                    problems.append("event \(index): \(path) \(from) → \(to) is not a documented transition")
                }
                if from == "pending" {
                    states[path, default: []].append((to, event["kind"] as? String ?? "", attempt))
                } else if let i = states[path]?.lastIndex(where: { $0.state == from }) {
                    if attempt < states[path]![i].attempt { problems.append("event \(index): \(path) attempt went down") }
                    states[path]![i].state = to
                    states[path]![i].attempt = attempt
                } else {
                    problems.append("event \(index): \(path) \(from) → \(to), but it was \(states[path]?.map(\.state) ?? [])")
                }
            case "output":
                if states[path]?.last?.state != "running" {
                    problems.append("event \(index): output of \(path) while \(states[path]?.last?.state ?? "pending")")
                }
            default: break
            }
        }
        let finals: Set<String> = ["succeeded", "failed", "timed_out", "cancelled", "skipped", "undone", "undo_failed"]
        for (path, instances) in states where instances.contains(where: { !finals.contains($0.state) }) {
            problems.append("\(path) did not end: \(instances.map(\.state))")
        }
        guard let finished = events.last, finished["event"] as? String == "run_finished",
              let total = events.first?["steps"] as? Int, let counts = finished["counts"] as? [String: Int]
        else { return problems + ["no run_started / run_finished to compare"] }
        // The leaf steps' latest states (no group here is counted on its own).
        var expected: [String: Int] = [:]
        let leaves = states.filter { path, instances in
            ["print", "delay", "shell"].contains(instances.last!.kind) && !path.split(separator: ".").contains { $0.hasPrefix("u") }
        }
        for (_, instances) in leaves where !(isUndo && instances.last!.state == "skipped") {
            expected[instances.last!.state, default: 0] += 1
        }
        if leaves.count < total { expected["pending"] = total - leaves.count }
        if counts != expected { problems.append("counts \(counts), the steps' ends \(expected) (of \(total) steps)") }
        if finished["exit_code"] as? Int != Int(outcome.status) {
            problems.append("exit status \(outcome.status), run_finished says \(finished["exit_code"] ?? "nothing")")
        }
        return problems
    }

    @Test func theDocumentedTransitionsAreTheCodes() throws {
        let documented = try Self.contract().transitions
        let code = Dictionary(uniqueKeysWithValues: StepState.transitions.map { ($0.key.rawValue, Set($0.value.map(\.rawValue))) })
        #expect(documented == code)
        #expect(try Self.contract().events.keys.sorted() == ["note", "output", "run_finished", "run_started", "step_state"])
    }

    /// A run with a retry, a time-out killed by its signal, `continue_on_error`, a failure,
    /// an action, `finally` at two levels, outputs, a multi-line `print` on stderr, output
    /// without a final newline, and a rollback with an undo that fails; then `flow resume`
    /// and `flow undo` of it. Every member flow writes is in the tables, and every event
    /// has the members the tables say are always there, with their types.
    @Test func everyEventIsAsDocumented() throws {
        let contract = try Self.contract()
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: varied
            actions:
              greet:
                params: {who: {default: world}}
                steps:
                  - name: hello
                    shell: echo "hello ${{ params.who }}"
            steps:
              - name: tag
                shell: echo "k=v" >> "$FLOW_OUTPUT"; printf 'no newline'
                outputs: [k]
                undo:
                  - print: "undo ${{ steps.tag.outputs.k }}"
              - name: reserve
                print: "two\\nlines"
                stream: stderr
                undo:
                  - shell: echo cannot release >&2; exit 4
              - use: greet
                with: {who: flow}
              - concurrent:
                  - name: flaky
                    shell: f="$SANDBOX/count"; n=$(cat "$f" 2>/dev/null || echo 0); echo $((n+1)) > "$f"; [ "$n" -ge 1 ]
                    retry: {limit: 2, delay: 0.01s}
                  - name: slow
                    shell: sleep 5
                    timeout: 0.1s
                    continue_on_error: true
                  - delay: 0.01s
                fail_fast: false
                finally:
                  - print: cleanup
              - name: broken
                shell: echo bad >&2; exit 3
              - name: never
                shell: echo never
            finally:
              - print: "status ${{ run.status }}"
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(run.status == 1, "\(run)")
        #expect(Self.problems(run, contract) == [], "\(run)")
        // Each optional member appears somewhere, so the check above saw them all.
        let steps = run.jsonEvents.filter { $0["event"] as? String == "step_state" }
        for key in ["exit_code", "signal", "reason", "elapsed_seconds"] {
            #expect(steps.contains { $0[key] != nil }, "no step_state with \(key)")
        }
        #expect(run.jsonEvents.contains { $0["event"] as? String == "note" && $0["step"] is String })
        #expect(run.jsonEvents.contains { $0["event"] as? String == "note" && $0["step"] is NSNull })
        #expect(run.finalStates["2"] == "undo_failed" && run.finalStates["1"] == "undone", "\(run.finalStates)")
        let id = try #require(run.jsonEvents.first?["run_id"] as? String)

        let resumed = try box.run(["resume", id, "--output", "json"])
        #expect(resumed.status == 1, "\(resumed)")
        #expect(Self.problems(resumed, contract) == [], "\(resumed)")
        #expect(resumed.jsonEvents.contains { ($0["reason"] as? String)?.hasPrefix("reused from run ") == true })

        // The resume's own rollback failed to undo `reserve` (reused): `flow undo` of the
        // resume (which carries the run on) tries it again.
        let resumedID = try #require(resumed.jsonEvents.first?["run_id"] as? String)
        let undone = try box.run(["undo", resumedID, "--output", "json"])
        #expect(undone.status == 1, "\(undone)")
        #expect(Self.problems(undone, contract) == [], "\(undone)")
    }

    /// A second Ctrl-C: the killed step's end, the steps never reached counted `pending`.
    @Test func aSecondSignalsStreamIsAsDocumented() throws {
        let contract = try Self.contract()
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: echo a
              - name: wait
                shell: trap '' INT; echo ready; sleep 30
              - name: after
                shell: echo after
            finally:
              - print: fin
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "json"])
        #expect(flow.waitFor { out, _ in out.contains(#""line":"ready""#) })
        flow.signal(SIGINT)
        #expect(flow.waitFor { out, _ in out.contains("signal again to kill everything now") })
        flow.signal(SIGINT)
        let outcome = try flow.finish()
        #expect(outcome.status == 130, "\(outcome)")
        #expect(Self.problems(outcome, contract) == [], "\(outcome)")
        let finished = try #require(outcome.jsonEvents.last)
        #expect(finished["counts"] as? [String: Int] == ["succeeded": 1, "cancelled": 1, "pending": 2], "\(outcome)")
    }

    /// `flow undo` said in `run_started` how many steps it reversed (a group among them
    /// counted as one), where a run says how many leaf steps it counts: its `run_finished`
    /// counts every leaf step (the others `skipped`), and added up to more than `steps`
    /// (found by the events audit's checker). Now `steps` is the run's leaf steps, as the
    /// journal's `total_steps` is.
    @Test func undoSaysHowManyStepsItCounts() throws {
        let contract = try Self.contract()
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            rollback: false
            steps:
              - name: a
                print: a
                undo:
                  - print: undo a
              - name: b
                print: b
              - name: c
                shell: exit 1
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(run.status == 1, "\(run)")
        let undone = try box.run(["undo", "last", "--output", "json"])
        #expect(undone.status == 0, "\(undone)")
        #expect(undone.jsonEvents.first?["steps"] as? Int == 3, "\(undone)")
        #expect(Self.problems(undone, contract) == [], "\(undone)")
    }

    /// With `--output json`, stdout carries only events: `flow undo` of a run with nothing
    /// to roll back wrote its `nothing to roll back` there, a line no event parser reads
    /// (found by the events audit's checker). It goes to stderr in that mode.
    @Test func nothingToRollBackIsNotWrittenAmongTheEvents() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - shell: exit 1\n")
        #expect(try box.run(["run", "wf.yaml", "--output", "json"]).status == 1)
        let undone = try box.run(["undo", "last", "--output", "json"])
        #expect(undone.status == 0, "\(undone)")
        #expect(undone.stdout == "", "\(undone)")
        #expect(undone.stderr.hasSuffix("nothing to roll back\n"), "\(undone)")
    }
}
