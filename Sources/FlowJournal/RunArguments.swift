import FlowKit
import Foundation

/// The command-line choices that shape a plan, stored (as JSON) so `resume` and `undo`
/// plan the same tree.
public struct RunArguments: Sendable, Equatable, Codable {
    public var action: String?
    public var vars: [[String]] = []
    public var with: [[String]] = []
    public var tags: [String] = []
    public var skipTags: [String] = []
    public var only: String?

    enum CodingKeys: String, CodingKey {
        case action, vars, with, tags, only
        case skipTags = "skip_tags"
    }

    public init(_ options: PlanOptions) {
        action = options.action
        vars = options.vars.map { [$0.name, $0.value] }
        with = options.with.map { [$0.name, $0.value] }
        tags = options.tags
        skipTags = options.skipTags
        only = options.only
    }

    public var planOptions: PlanOptions {
        var options = PlanOptions()
        options.action = action
        options.vars = vars.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        options.with = with.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        options.tags = tags
        options.skipTags = skipTags
        options.only = only
        return options
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static func decode(_ json: String) -> RunArguments? {
        try? JSONDecoder().decode(RunArguments.self, from: Data(json.utf8))
    }
}
