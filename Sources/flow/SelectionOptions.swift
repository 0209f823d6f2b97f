import ArgumentParser
import FlowKit

/// Options shared by `run` and `plan`: variables, action params and step selection.
struct SelectionOptions: ParsableArguments {
    @Option(name: .customLong("var"), help: ArgumentHelp("Override a workflow variable.", valueName: "key=value"))
    var vars: [KeyValue] = []

    @Option(name: .customLong("with"), help: ArgumentHelp("Set a parameter of ACTION.", valueName: "key=value"))
    var with: [KeyValue] = []

    @Option(help: ArgumentHelp("Run only steps with one of these tags (comma-separated).", valueName: "a,b"))
    var tags: String?

    @Option(name: .customLong("skip-tags"), help: ArgumentHelp("Skip steps with one of these tags.", valueName: "a,b"))
    var skipTags: String?

    @Option(help: ArgumentHelp("Run one named step (inside its groups) and nothing else.", valueName: "NAME"))
    var only: String?

    func planOptions(action: String?) -> PlanOptions {
        var options = PlanOptions()
        options.vars = vars.map { ($0.key, $0.value) }
        options.with = with.map { ($0.key, $0.value) }
        options.action = action
        options.tags = Self.list(tags)
        options.skipTags = Self.list(skipTags)
        options.only = only
        return options
    }

    static func list(_ text: String?) -> [String] {
        guard let text else { return [] }
        return text.split(separator: ",").map { String($0.trimmingPrefixAndSuffixSpaces) }.filter { !$0.isEmpty }
    }
}

extension Substring {
    var trimmingPrefixAndSuffixSpaces: Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}
