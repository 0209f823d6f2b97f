/// Prints a plan as a box-drawn tree (`flow plan`, `flow run --dry-run`) or as JSON.
public struct PlanPrinter {
    let plan: Plan
    let base: StaticContext

    public init(plan: Plan) {
        self.plan = plan
        var vars: [String: String] = [:]
        for (name, value) in plan.vars { vars[name] = value }
        base = StaticContext(vars: vars, workflowName: plan.workflowName)
    }

    // MARK: Text

    public func text() -> String {
        var bytes: [UInt8] = []
        writeText { bytes.append(contentsOf: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes the text plan to `write` as UTF-8, a piece of at most about 64 KiB at a time:
    /// a 100,000-step plan is 5 MB, and building it whole (then decoding it into a
    /// `String` only to encode it again) cost page faults and a check of every byte.
    public func writeText(_ write: (UnsafeRawBufferPointer) -> Void) {
        // Bytes, not a String: appending to a String checks grapheme boundaries at every
        // seam, which costs more than everything else here on a 100,000-step plan.
        var out: [UInt8] = []
        out.reserveCapacity(Self.pieceBytes + 4096)
        Self.put(ControlEscaping.escaped(plan.title), into: &out)
        // ACTION's params, as a `use` line shows its action's: `--with` and the defaults
        // are what its steps run with, and the header is the only place to see them whole.
        if case .use(_, let with) = plan.root.kind, !with.isEmpty {
            let args = with.map { "\($0.name)=\(Self.shown(ExpressionEvaluator.render($0.value, in: base)))" }
            Self.put("(" + args.joined(separator: ", ") + ")", into: &out)
        }
        Self.put(" (", into: &out)
        Self.put(ControlEscaping.escaped(plan.file.path), into: &out)
        Self.put(")", into: &out)
        // The workflow's shell, once: shown on every shell step, `shell: bash` at the top
        // (or in `defaults`) was `[shell bash]` on each line of the tree.
        if plan.shell != .sh { Self.put("  [shell \(ControlEscaping.escaped(plan.shell.spec))]", into: &out) }
        out.append(0x0A)
        var context = base
        if case .use(_, let with) = plan.root.kind { context = base.entering(with) }
        let lists: [(String?, [PlanNode])] = [(nil, plan.root.children), ("finally", plan.root.finally)]
        for (title, nodes) in lists where !nodes.isEmpty {
            if let title { Self.put(title + "\n", into: &out) }
            for (i, node) in nodes.enumerated() {
                line(node, prefix: [], last: i == nodes.count - 1, context: context, into: &out, write: write)
            }
        }
        let summary = PlanSummary(plan: plan)
        Self.put("\n\(summary.text)\n", into: &out)
        out.withUnsafeBytes(write)
    }

    /// How many bytes of the text plan are handed on at once.
    static let pieceBytes = 64 * 1024

    /// Appends `text`'s bytes, copied whole: `append(contentsOf: text.utf8)` went through
    /// the generic sequence path a byte at a time (half a million calls for a 100,000-step
    /// plan).
    @inline(__always)
    static func put(_ text: String, into out: inout [UInt8]) {
        if text.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil {
            out.append(contentsOf: text.utf8)
        }
    }

    /// One node's line and, below it, its steps' (`prefix`: the tree's lines to its left).
    func line(_ node: PlanNode, prefix: [UInt8], last: Bool, context: StaticContext, into out: inout [UInt8],
              write: (UnsafeRawBufferPointer) -> Void) {
        if out.count >= Self.pieceBytes {
            out.withUnsafeBytes(write)
            out.removeAll(keepingCapacity: true)
        }
        out.append(contentsOf: prefix)
        Self.put(last ? "└─ " : "├─ ", into: &out)
        if !node.selected { Self.put("○ ", into: &out) }
        Self.put(node.keyword, into: &out)
        if let name = node.name {
            out.append(0x20)
            Self.put(ControlEscaping.escaped(name), into: &out)
        }
        var inner = context
        inner.env = node.env
        switch node.kind {
        case .print(let message, let stream):
            Self.put(": ", into: &out)
            Self.put(Self.shown(ExpressionEvaluator.render(message, in: inner)), into: &out)
            if stream == .stderr { Self.put("  [stderr]", into: &out) }
        case .delay(let duration):
            Self.put(": ", into: &out)
            Self.put(duration.compact, into: &out)
        case .shell(let task):
            Self.put(": ", into: &out)
            Self.put(Self.shown(ExpressionEvaluator.render(task.command, in: inner)), into: &out)
        case .use(let action, let with):
            let args = with.map { "\($0.name)=\(Self.shown(ExpressionEvaluator.render($0.value, in: inner)))" }
            Self.put(": \(action)" + (args.isEmpty ? "" : "(" + args.joined(separator: ", ") + ")"), into: &out)
            inner = inner.entering(with)
        case .sequential, .concurrent:
            break
        }
        let options = optionText(node, context: inner)
        if !options.isEmpty {
            Self.put("  [", into: &out)
            Self.put(ControlEscaping.escaped(options.joined(separator: " · ")), into: &out)
            out.append(UInt8(ascii: "]"))
        }
        // A blank description has nothing to show: a bare `—` would look cut off.
        if let description = node.description, !description.allSatisfy(\.isWhitespace) {
            Self.put("  — ", into: &out)
            Self.put(Self.shown(description), into: &out)
        }
        if !node.selected { Self.put("  (skipped: not selected)", into: &out) }
        out.append(0x0A)
        guard !node.children.isEmpty || !node.finally.isEmpty || !node.undo.isEmpty else { return }
        var childPrefix = prefix
        Self.put(last ? "   " : "│  ", into: &childPrefix)
        var sections: [(String?, [PlanNode])] = [(nil, node.children)]
        if !node.finally.isEmpty { sections.append(("finally", node.finally)) }
        if !node.undo.isEmpty { sections.append(("undo", node.undo)) }
        let titled = sections.filter { !$0.1.isEmpty }
        for (s, (title, nodes)) in titled.enumerated() {
            let lastSection = s == titled.count - 1
            if let title {
                out.append(contentsOf: childPrefix)
                Self.put((lastSection ? "└─ " : "├─ ") + title + "\n", into: &out)
                var sectionPrefix = childPrefix
                Self.put(lastSection ? "   " : "│  ", into: &sectionPrefix)
                for (i, child) in nodes.enumerated() {
                    line(child, prefix: sectionPrefix, last: i == nodes.count - 1, context: title == "undo" ? context : inner, into: &out, write: write)
                }
            } else {
                for (i, child) in nodes.enumerated() {
                    line(child, prefix: childPrefix, last: lastSection && i == nodes.count - 1, context: inner, into: &out, write: write)
                }
            }
        }
    }

    /// The bracketed options of `node`'s line; `context` is the one its command is shown
    /// with, so a `dir` reads its action's `params` and the step's `env` as the command
    /// does (with the workflow's alone, `dir: pkg/${{ params.name }}` showed unresolved on
    /// every `use` of the action, where `--format json` resolved it).
    func optionText(_ node: PlanNode, context: StaticContext) -> [String] {
        var options: [String] = []
        if case .concurrent(let maxParallel, let failFast) = node.kind {
            if let maxParallel { options.append("max_parallel \(maxParallel)") }
            if !failFast { options.append("fail_fast false") }
        }
        if case .shell(let task) = node.kind {
            // Only where a group's `shell` makes it differ from the workflow's (the header's).
            if task.program != plan.shell { options.append("shell \(task.program.spec)") }
            if let dir = task.dir { options.append("dir \(ExpressionEvaluator.render(dir, in: context))") }
            if task.interactive { options.append("interactive") }
            if task.stdin != nil { options.append("stdin") }
        }
        options += Self.runOptions(node)
        if !node.tags.isEmpty { options.append("tags " + node.tags.joined(separator: ",")) }
        if let outputs = node.outputs, !outputs.isEmpty { options.append("outputs " + outputs.joined(separator: ",")) }
        return options
    }

    /// How the step runs, beyond what it runs: `if`, `timeout`, `retry` and
    /// `continue_on_error`, as the plan writes them (`flow graph` shows these too).
    static func runOptions(_ node: PlanNode) -> [String] {
        var options: [String] = []
        if let condition = node.condition { options.append("if \(condition.text)") }
        if let timeout = node.timeout { options.append("timeout \(timeout.compact)") }
        if let retry = node.retry, retry.limit > 0 {
            var text = "retry \(retry.limit)"
            // The waits as they come: `every D` when each is `delay`; with a backoff, the
            // first one (attempt 2 waits `delay × backoff`, as the contract's formula has
            // it) and the factor of each next one. "every 5s ×2" read as a first wait of 5s.
            // A `max_delay` at or below the first wait makes every wait the same: `every`
            // that, not `every 5s max 2s` (which waits 2s); no `delay`, no wait to grow.
            let first = retry.delay(beforeAttempt: 2)
            let constant = retry.backoff == 1 || first == .zero || retry.maxDelay.map { first >= $0 } == true
            if first > .zero {
                text += constant ? " every \(first.compact)" : " after \(first.compact)"
            }
            if !constant { text += " ×\(ExpressionValue.number(retry.backoff).description)" }
            if !constant, let maxDelay = retry.maxDelay { text += " max \(maxDelay.compact)" }
            // `exit_codes: []` retries no exit code: only time-outs are left to retry.
            if let codes = retry.exitCodes {
                text += codes.isEmpty ? " on timeout only" : " on exit " + codes.map(String.init).joined(separator: ",")
            }
            options.append(text)
        }
        if node.continueOnError { options.append("continue_on_error") }
        return options
    }

    /// Text from the workflow as a plan line shows it: its first line, control characters
    /// escaped (an ESC or CR in a message must not act on the terminal).
    static func shown(_ text: String) -> String {
        ControlEscaping.escaped(oneLine(text))
    }

    /// The first line of a multi-line text that is not blank, marked as continued: a
    /// command or message that starts with a line break (`"\nmake"`, a block scalar
    /// with a blank first line) showed as ` …` alone.
    static func oneLine(_ text: String) -> String {
        guard text.containsByte(UInt8(ascii: "\n")) else { return text }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let blank = { (line: Substring) in line.allSatisfy { $0 == " " || $0 == "\t" } }
        while let last = lines.last, blank(last), lines.count > 1 { lines.removeLast() }
        guard let first = lines.first(where: { !blank($0) }) ?? lines.first else { return "" }
        return lines.count > 1 ? String(first) + " …" : String(first)
    }

    // MARK: JSON

    public func json() -> String {
        var context = base
        if case .use(_, let with) = plan.root.kind { context = base.entering(with) }
        let summary = PlanSummary(plan: plan)
        let value = JSONValue.object([
            ("workflow", .string(plan.workflowName)),
            ("file", .string(plan.file.path)),
            ("action", plan.action.map(JSONValue.string) ?? .null),
            ("with", plan.action == nil ? .null : {
                guard case .use(_, let with) = plan.root.kind else { return .object([]) }
                return .object(with.map { ($0.name, .string(ExpressionEvaluator.render($0.value, in: base))) })
            }()),
            ("vars", .object(plan.vars.map { ($0.name, .string($0.value)) })),
            ("steps", .array(plan.root.children.map { jsonNode($0, context: context) })),
            ("finally", .array(plan.root.finally.map { jsonNode($0, context: context) })),
            ("summary", .object([
                ("steps", .int(summary.total)),
                ("selected", .int(summary.selected)),
            ] + Self.jsonDuration("shortest_wall_time", summary.shortestWallTime) + [
                // The sum stopped at the maximum: the text plan's "or more".
                ("shortest_wall_time_saturated", .bool(summary.isSaturated)),
            ])),
        ])
        return value.rendered(pretty: true) + "\n"
    }

    /// A duration three ways: `key` as flow prints it (`1m30.5s`, exact, and it parses back),
    /// `key_nanoseconds` as an exact integer, `key_seconds` as a float for convenience (it
    /// may not be exact: 1ns is `1e-09`). A delay's own duration has no prefix: `duration`,
    /// `nanoseconds`, `seconds`.
    static func jsonDuration(_ key: String?, _ duration: Duration) -> [(String, JSONValue)] {
        let prefix = key.map { $0 + "_" } ?? ""
        return [
            (key ?? "duration", .string(duration.compact)),
            (prefix + "nanoseconds", .int(Int(duration.wholeNanoseconds))),
            (prefix + "seconds", .double(duration.seconds)),
        ]
    }

    func jsonNode(_ node: PlanNode, context: StaticContext) -> JSONValue {
        var inner = context
        inner.env = node.env
        var members: [(String, JSONValue)] = [
            ("path", .string(node.path)),
            ("kind", .string(node.keyword)),
            ("name", node.name.map(JSONValue.string) ?? .null),
            ("selected", .bool(node.selected)),
        ]
        switch node.kind {
        case .print(let message, let stream):
            members.append(("message", .string(ExpressionEvaluator.render(message, in: inner))))
            members.append(("stream", .string(stream.rawValue)))
        case .delay(let duration):
            members += Self.jsonDuration(nil, duration)
        case .shell(let task):
            members.append(("command", .string(ExpressionEvaluator.render(task.command, in: inner))))
            members.append(("shell", .string(task.program.spec)))
            if let dir = task.dir { members.append(("dir", .string(ExpressionEvaluator.render(dir, in: inner)))) }
            if task.interactive { members.append(("interactive", .bool(true))) }
        case .concurrent(let maxParallel, let failFast):
            members.append(("max_parallel", maxParallel.map(JSONValue.int) ?? .null))
            members.append(("fail_fast", .bool(failFast)))
        case .use(let action, let with):
            members.append(("action", .string(action)))
            members.append(("with", .object(with.map { ($0.name, .string(ExpressionEvaluator.render($0.value, in: inner))) })))
            inner = inner.entering(with)
        case .sequential:
            break
        }
        if let description = node.description { members.append(("description", .string(description))) }
        if let condition = node.condition { members.append(("if", .string(condition.text))) }
        if let timeout = node.timeout { members += Self.jsonDuration("timeout", timeout) }
        if let retry = node.retry {
            let maxDelay = retry.maxDelay.map { Self.jsonDuration("max_delay", $0) }
                ?? [("max_delay", .null), ("max_delay_nanoseconds", .null), ("max_delay_seconds", .null)]
            members.append(("retry", .object([("limit", .int(retry.limit))] + Self.jsonDuration("delay", retry.delay) + [
                ("backoff", .double(retry.backoff)),
            ] + maxDelay + [
                ("exit_codes", retry.exitCodes.map { .array($0.map { .int(Int($0)) }) } ?? .null),
            ])))
        }
        if node.continueOnError { members.append(("continue_on_error", .bool(true))) }
        if !node.tags.isEmpty { members.append(("tags", .array(node.tags.map(JSONValue.string)))) }
        if let outputs = node.outputs { members.append(("outputs", .array(outputs.map(JSONValue.string)))) }
        if node.isGroup { members.append(("steps", .array(node.children.map { jsonNode($0, context: inner) }))) }
        if !node.finally.isEmpty { members.append(("finally", .array(node.finally.map { jsonNode($0, context: inner) }))) }
        if !node.undo.isEmpty { members.append(("undo", .array(node.undo.map { jsonNode($0, context: context) }))) }
        return .object(members)
    }
}
