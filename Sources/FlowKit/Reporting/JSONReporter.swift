/// `--output json`: one JSON object per line per event (`run_started`, `step_state`,
/// `output`, `note`, `run_finished`), each with a timestamp, the run id and the step path.
public final class JSONReporter: RunObserver, @unchecked Sendable {
    let out = OutputWriter(fd: 1)
    var runID = ""

    public init() {}

    func write(_ members: [(String, JSONValue)]) {
        out.append(JSONValue.object(members).rendered() + "\n")
    }

    public func handle(_ event: RunEvent) {
        // Every event is written as it happens (a reader of the stream acts on it, and a
        // second Ctrl-C must not lose what was buffered); output lines go at each chunk's end.
        defer { out.flush() }
        switch event {
        case .runStarted(let info):
            runID = info.id
            // Every event has `step`: null for the run's own, as for a note about the run.
            write([("event", .string("run_started")), ("time", .string(info.startedAt.iso8601)), ("run_id", .string(info.id)),
                   ("step", .null), ("workflow", .string(info.workflowName)), ("file", .string(info.file)), ("steps", .int(info.totalSteps))])
        case .stepState(let t):
            var members: [(String, JSONValue)] = [
                ("event", .string("step_state")), ("time", .string(t.time.iso8601)), ("run_id", .string(runID)),
                ("step", .string(t.step.path)), ("name", t.step.name.map(JSONValue.string) ?? .null),
                ("kind", .string(t.step.kind)), ("from", .string(t.from.rawValue)), ("to", .string(t.to.rawValue)),
                ("attempt", .int(t.attempt)),
            ]
            if let action = t.step.action { members.insert(("action", .string(action)), at: 6) }
            if let code = t.exitCode { members.append(("exit_code", .int(Int(code)))) }
            if let signal = t.signal { members.append(("signal", .int(Int(signal)))) }
            if let reason = t.reason { members.append(("reason", .string(reason))) }
            if let elapsed = t.elapsed { members.append(("elapsed_seconds", .double((elapsed * 1000).rounded() / 1000))) }
            if t.isAllowedFailure { members.append(("allowed_failure", .bool(true))) }
            write(members)
        case .note(let step, let message, let allowing):
            var members: [(String, JSONValue)] = [
                ("event", .string("note")), ("time", .string(Timestamp.now().iso8601)), ("run_id", .string(runID)),
                ("step", step.map { .string($0.path) } ?? .null), ("message", .string(message)),
            ]
            if !allowing.isEmpty {
                members.append(("allowed_failure", .bool(true)))
                members.append(("allowed_steps", .array(allowing.map(JSONValue.string))))
            }
            write(members)
        case .runFinished(let outcome):
            var counts: [(String, JSONValue)] = []
            var allowed: [(String, JSONValue)] = []
            for state in StepState.allCases where (outcome.counts[state] ?? 0) > 0 {
                counts.append((state.rawValue, .int(outcome.counts[state]!)))
                if let n = outcome.allowedFailures[state], n > 0 { allowed.append((state.rawValue, .int(n))) }
            }
            write([("event", .string("run_finished")), ("time", .string(outcome.time.iso8601)), ("run_id", .string(runID)),
                   ("step", .null), ("status", .string(outcome.status.rawValue)), ("exit_code", .int(Int(outcome.exitCode))),
                   ("counts", .object(counts)), ("allowed_failures", .object(allowed)),
                   ("elapsed_seconds", .double((outcome.elapsed * 1000).rounded() / 1000))])
            out.flush()
        }
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        write([("event", .string("output")), ("time", .string(Timestamp.now().iso8601)), ("run_id", .string(runID)),
               ("step", .string(step.path)), ("stream", .string(stream == .stdout ? "stdout" : "stderr")),
               ("line", .string(String(decoding: line, as: UTF8.self)))])
    }

    public func endOfChunk() {
        out.flush()
    }

    public func finish() {
        out.flush()
    }
}
