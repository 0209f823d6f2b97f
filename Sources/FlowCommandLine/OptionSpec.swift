/// A named option: a flag (`--quiet`) or an option with a value (`--output json`,
/// `--output=json`).
public struct OptionSpec: Sendable {
    /// The long name without dashes (`max-parallel`); also the key its value is read by.
    public var long: String
    /// A one-letter alias (`-f`), if any.
    public var short: Character?
    /// The value's placeholder in help (`duration` shows as `<duration>`); nil for a flag.
    public var valueName: String?
    public var help: String
    /// Whether it may be given more than once, each value kept (`--var a=1 --var b=2`).
    /// Otherwise the last one given wins.
    public var repeats: Bool
    /// The only values it accepts, if it is a choice (checked while parsing).
    public var choices: [String]
    /// The default shown in help (`(default: 5s)`).
    public var defaultValue: String?
    public var completion: CompletionKind

    /// A flag: present or not.
    public static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: nil, help: help, repeats: false, choices: [],
                   defaultValue: nil, completion: .none)
    }

    /// An option that takes a value.
    public static func value(
        _ long: String, short: Character? = nil, valueName: String? = nil, help: String, repeats: Bool = false,
        choices: [String] = [], defaultValue: String? = nil, completion: CompletionKind? = nil
    ) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: valueName ?? long, help: help, repeats: repeats,
                   choices: choices, defaultValue: defaultValue,
                   completion: completion ?? (choices.isEmpty ? .none : .choices(choices)))
    }

    public var isFlag: Bool { valueName == nil }

    /// `--output <output>`, as in help and error messages.
    public var synopsis: String {
        valueName.map { "--\(long) <\($0)>" } ?? "--\(long)"
    }

    /// `-f, --follow`, as in the help's option list.
    public var label: String {
        (short.map { "-\($0), " } ?? "") + synopsis
    }
}
