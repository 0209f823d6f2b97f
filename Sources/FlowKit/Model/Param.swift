/// One parameter of an action.
public struct Param: Sendable {
    public var name: Located<String>
    public var description: Located<String>?
    public var required = false
    public var defaultValue: Located<String>?
    /// When set, the only values the parameter accepts.
    public var allowed: [Located<String>]?

    public init(name: Located<String>) {
        self.name = name
    }

    /// `value` as a message names it: in backticks, or "the empty string" (an empty code
    /// span, ``` `` ```, read as two stray backticks).
    public static func shown(_ value: String) -> String {
        value.isEmpty ? "the empty string" : "`\(value)`"
    }

    /// The help for `value`, which is not in `allowed`: the allowed values, after a "did
    /// you mean" when `value` looks like one of them mistyped (`prdo`, `Prod`), as a
    /// misspelt key, action or parameter gets. `quoted` puts each value in backticks, as
    /// a diagnostic under the source line shows them.
    public static func allowedHelp(for value: String, allowed: [String], quoted: Bool) -> String {
        let list = "allowed: " + allowed.map { quoted ? "`\($0)`" : $0 }.joined(separator: ", ")
        return Suggestion.help(for: value, in: allowed).map { $0 + " " + list } ?? list
    }
}
