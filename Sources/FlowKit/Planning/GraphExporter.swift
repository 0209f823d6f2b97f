/// Exports a plan as a Mermaid flowchart or a Graphviz digraph (`flow graph`).
///
/// Groups become subgraphs; a sequential group chains its children, a concurrent group
/// forks to all of them and joins after; `finally` steps follow their group.
public struct GraphExporter {
    /// The graph languages flow writes.
    public enum Format: String, CaseIterable, Sendable {
        case mermaid
        case dot
    }

    let plan: Plan
    let format: Format
    let context: StaticContext
    var lines: [String] = []
    var edges: [(String, String)] = []
    var skipped: [String] = []
    var counter = 0

    public init(plan: Plan, format: Format) {
        self.plan = plan
        self.format = format
        var vars: [String: String] = [:]
        for (name, value) in plan.vars { vars[name] = value }
        context = StaticContext(vars: vars, workflowName: plan.workflowName)
    }

    public static func export(_ plan: Plan, format: Format) -> String {
        var exporter = GraphExporter(plan: plan, format: format)
        return exporter.render()
    }

    mutating func render() -> String {
        let start = "start", end = "finish"
        var ctx = context
        if case .use(_, let with) = plan.root.kind { ctx = context.entering(with) }
        let (entries, exits) = list(plan.root.children, concurrent: false, indent: 1, context: ctx)
        let (fEntries, fExits) = list(plan.root.finally, concurrent: false, indent: 1, context: ctx)
        for e in entries { edges.append((start, e)) }
        let afterSteps = exits.isEmpty ? [start] : exits
        if fEntries.isEmpty {
            for x in afterSteps { edges.append((x, end)) }
        } else {
            for x in afterSteps { for e in fEntries { edges.append((x, e)) } }
            for x in fExits { edges.append((x, end)) }
        }
        var out: [String] = []
        switch format {
        case .mermaid:
            out.append("flowchart TD")
            out.append("  \(start)([\"\(Self.mermaidEscape(plan.title))\"])")
            out += lines
            out.append("  \(end)([\"end\"])")
            for (a, b) in edges { out.append("  \(a) --> \(b)") }
            if !skipped.isEmpty {
                out.append("  classDef skipped stroke-dasharray: 5 5,opacity:0.5")
                out.append("  class \(skipped.joined(separator: ",")) skipped")
            }
        case .dot:
            out.append("digraph \"\(Self.dotEscape(plan.workflowName))\" {")
            out.append("  rankdir=TB;")
            out.append("  node [shape=box, style=rounded];")
            out.append("  \(start) [label=\"\(Self.dotEscape(plan.title))\", shape=oval];")
            out += lines
            out.append("  \(end) [label=\"end\", shape=oval];")
            for (a, b) in edges { out.append("  \(a) -> \(b);") }
            out.append("}")
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// Adds a list of nodes; returns the ids that enter it and the ids that leave it.
    mutating func list(_ nodes: [PlanNode], concurrent: Bool, indent: Int, context: StaticContext) -> ([String], [String]) {
        var entries: [String] = []
        var exits: [String] = []
        for node in nodes {
            let (e, x) = add(node, indent: indent, context: context)
            if concurrent {
                entries += e
                exits += x
            } else {
                if entries.isEmpty { entries = e } else { for a in exits { for b in e { edges.append((a, b)) } } }
                exits = x
            }
        }
        return (entries, exits)
    }

    mutating func add(_ node: PlanNode, indent: Int, context: StaticContext) -> ([String], [String]) {
        counter += 1
        let id = "n\(counter)"
        let pad = String(repeating: "  ", count: indent)
        var inner = context
        inner.env = node.env
        if !node.isGroup {
            let label = text(Self.label(node, context: inner), options: node)
            switch format {
            case .mermaid: lines.append("\(pad)\(id)[\"\(label)\"]")
            case .dot:
                lines.append("\(pad)\(id) [label=\"\(label)\"\(node.selected ? "" : ", style=\"rounded,dashed\"")];")
            }
            if !node.selected { skipped.append(id) }
            return ([id], [id])
        }
        var title = node.keyword + (node.name.map { " " + $0 } ?? "")
        if case .use(let action, let with) = node.kind {
            title = "use \(action)" + (node.name.map { " (\($0))" } ?? "")
            inner = inner.entering(with)
        }
        // A group the selection leaves out is dashed as its steps are (Mermaid's `class`
        // applies to a subgraph too), so the graph and the plan agree on what is selected.
        if !node.selected { skipped.append(id) }
        let label = text(title, options: node)
        switch format {
        case .mermaid: lines.append("\(pad)subgraph \(id) [\"\(label)\"]")
        case .dot:
            lines.append("\(pad)subgraph cluster_\(id) {")
            lines.append("\(pad)  label=\"\(label)\";")
            if !node.selected { lines.append("\(pad)  style=dashed;") }
        }
        var isConcurrent = false
        if case .concurrent = node.kind { isConcurrent = true }
        var (entries, exits) = list(node.children, concurrent: isConcurrent, indent: indent + 1, context: inner)
        if !node.finally.isEmpty {
            let (fe, fx) = list(node.finally, concurrent: false, indent: indent + 1, context: inner)
            for a in exits { for b in fe { edges.append((a, b)) } }
            exits = fx
            if entries.isEmpty { entries = fe }
        }
        switch format {
        case .mermaid: lines.append("\(pad)end")
        case .dot: lines.append("\(pad)}")
        }
        return (entries, exits)
    }

    /// A node's or subgraph's label, escaped for the format: `title`, then on a line of
    /// its own how the step runs (`if`, `timeout`, `retry`, `continue_on_error`, as `plan`
    /// writes them), so the graph shows which steps may not run or may run again.
    func text(_ title: String, options node: PlanNode) -> String {
        let options = PlanPrinter.runOptions(node)
        var second = options.joined(separator: " · ")
        if second.unicodeScalars.count > 60 { second = String(String.UnicodeScalarView(second.unicodeScalars.prefix(57))) + "…" }
        switch format {
        case .mermaid: return Self.mermaidEscape(title) + (options.isEmpty ? "" : "<br/>" + Self.mermaidEscape(second))
        case .dot: return Self.dotEscape(title) + (options.isEmpty ? "" : "\\n" + Self.dotEscape(second))
        }
    }

    static func label(_ node: PlanNode, context: StaticContext) -> String {
        var text = node.name.map { "\($0): " } ?? ""
        switch node.kind {
        case .print(let message, _): text += "print " + PlanPrinter.oneLine(ExpressionEvaluator.render(message, in: context))
        case .delay(let d): text += "delay " + d.compact
        case .shell(let task): text += PlanPrinter.oneLine(ExpressionEvaluator.render(task.command, in: context))
        default: text += node.keyword
        }
        if text.unicodeScalars.count > 60 { text = String(String.UnicodeScalarView(text.unicodeScalars.prefix(57))) + "…" }
        return text
    }

    // Control characters first (as `\u{1B}`): a graph is text someone views or pipes.
    // Mermaid reads `#name;` as an entity before it parses, renders labels as HTML (so
    // `&lt;` would show as `<`), and takes a label that starts with a backtick for Markdown:
    // `#` goes first (the entities below bring their own), then each of those characters.
    static func mermaidEscape(_ s: String) -> String {
        ControlEscaping.escaped(s).replacing("#", with: "#35;").replacing("&", with: "#amp;").replacing("\"", with: "#quot;")
            .replacing("<", with: "#lt;").replacing(">", with: "#gt;").replacing("`", with: "#96;")
    }

    static func dotEscape(_ s: String) -> String {
        ControlEscaping.escaped(s).replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
    }
}
