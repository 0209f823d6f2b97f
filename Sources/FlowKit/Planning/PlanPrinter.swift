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
        // Bytes, not a String: appending to a String checks grapheme boundaries at every
        // seam, which costs more than everything else here on a 100,000-step plan.
        var out: [UInt8] = []
        out.reserveCapacity(128 * 1024)
        out.append(contentsOf: ControlEscaping.escaped(plan.title).utf8)
        out.append(contentsOf: (" (\(ControlEscaping.escaped(plan.file.path)))\n").utf8)
        var context = base
        if case .use(_, let with) = plan.root.kind { context = base.entering(with) }
        let lists: [(String?, [PlanNode])] = [(nil, plan.root.children), ("finally", plan.root.finally)]
        for (title, nodes) in lists where !nodes.isEmpty {
            if let title { out.append(contentsOf: ("\(title)\n").utf8) }
            for (i, node) in nodes.enumerated() {
                line(node, prefix: "", last: i == nodes.count - 1, context: context, into: &out)
            }
        }
        let summary = PlanSummary(plan: plan)
        out.append(contentsOf: ("\n\(summary.text)\n").utf8)
        return String(decoding: out, as: UTF8.self)
    }

    func line(_ node: PlanNode, prefix: String, last: Bool, context: StaticContext, into out: inout [UInt8]) {
        out.append(contentsOf: (prefix).utf8)
        out.append(contentsOf: (last ? "└─ " : "├─ ").utf8)
        if !node.selected { out.append(contentsOf: ("○ ").utf8) }
        out.append(contentsOf: (node.keyword).utf8)
        if let name = node.name { out.append(contentsOf: (" " + ControlEscaping.escaped(name)).utf8) }
        var inner = context
        inner.env = node.env
        switch node.kind {
        case .print(let message, let stream):
            out.append(contentsOf: (": " + Self.shown(ExpressionEvaluator.render(message, in: inner))).utf8)
            if stream == .stderr { out.append(contentsOf: ("  [stderr]").utf8) }
        case .delay(let duration):
            out.append(contentsOf: (": " + duration.compact).utf8)
        case .shell(let task):
            out.append(contentsOf: (": " + Self.shown(ExpressionEvaluator.render(task.command, in: inner))).utf8)
        case .use(let action, let with):
            let args = with.map { "\($0.name)=\(Self.shown(ExpressionEvaluator.render($0.value, in: inner)))" }
            out.append(contentsOf: (": \(action)" + (args.isEmpty ? "" : "(" + args.joined(separator: ", ") + ")")).utf8)
            inner = inner.entering(with)
        case .sequential, .concurrent:
            break
        }
        let options = optionText(node)
        if !options.isEmpty { out.append(contentsOf: ("  [" + ControlEscaping.escaped(options.joined(separator: " · ")) + "]").utf8) }
        if let description = node.description { out.append(contentsOf: ("  — " + Self.shown(description)).utf8) }
        if !node.selected { out.append(contentsOf: ("  (skipped: not selected)").utf8) }
        out.append(contentsOf: ("\n").utf8)
        let childPrefix = prefix + (last ? "   " : "│  ")
        var sections: [(String?, [PlanNode])] = [(nil, node.children)]
        if !node.finally.isEmpty { sections.append(("finally", node.finally)) }
        if !node.undo.isEmpty { sections.append(("undo", node.undo)) }
        let titled = sections.filter { !$0.1.isEmpty }
        for (s, (title, nodes)) in titled.enumerated() {
            let lastSection = s == titled.count - 1
            if let title {
                out.append(contentsOf: (childPrefix + (lastSection ? "└─ " : "├─ ") + title + "\n").utf8)
                let sectionPrefix = childPrefix + (lastSection ? "   " : "│  ")
                for (i, child) in nodes.enumerated() {
                    line(child, prefix: sectionPrefix, last: i == nodes.count - 1, context: title == "undo" ? context : inner, into: &out)
                }
            } else {
                for (i, child) in nodes.enumerated() {
                    line(child, prefix: childPrefix, last: lastSection && i == nodes.count - 1, context: inner, into: &out)
                }
            }
        }
    }

    func optionText(_ node: PlanNode) -> [String] {
        var options: [String] = []
        if case .concurrent(let maxParallel, let failFast) = node.kind {
            if let maxParallel { options.append("max_parallel \(maxParallel)") }
            if !failFast { options.append("fail_fast false") }
        }
        if case .shell(let task) = node.kind {
            if task.program != .sh { options.append("shell \(task.program.spec)") }
            if let dir = task.dir { options.append("dir \(ExpressionEvaluator.render(dir, in: base))") }
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
            if retry.delay > .zero { text += " every \(retry.delay.compact)" }
            if retry.backoff != 1 { text += " ×\(ExpressionValue.number(retry.backoff).description)" }
            if let maxDelay = retry.maxDelay { text += " max \(maxDelay.compact)" }
            if let codes = retry.exitCodes { text += " on exit " + codes.map(String.init).joined(separator: ",") }
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

    /// The first line of a multi-line text, marked as continued.
    static func oneLine(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "\n")) else { return text }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        while let last = lines.last, last.allSatisfy({ $0 == " " || $0 == "\t" }), lines.count > 1 { lines.removeLast() }
        guard let first = lines.first else { return "" }
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
