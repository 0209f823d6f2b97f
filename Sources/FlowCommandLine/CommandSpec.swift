/// One command of a command-line tool, described as data: what it does, its positional
/// arguments, its options and its subcommands.
///
/// flow describes its command line with these values instead of swift-argument-parser's
/// property wrappers. The library discovers a command's options by reflection (a `Mirror`
/// of every option group, dynamic casts of every property wrapper), which was two thirds
/// of the instructions of a one-step `flow run`, and it links FoundationEssentials, which
/// doubles the table of protocol conformances that every dynamic cast of the process scans.
/// The start-up target of issue #5 (at most twice make's) could not be met with it. The
/// conventions stay the library's: `--help` and `-h` everywhere, `flow help SUBCOMMAND`,
/// `--version`, `--generate-completion-script`, the same help layout and error messages.
public struct CommandSpec: Sendable {
    /// The name typed on the command line (`run`); the root's is the tool's name.
    public var name: String
    /// One line, shown in the parent's list of subcommands and after `OVERVIEW:`.
    public var abstract: String
    /// Paragraphs after the overview. Lines that start with a space are printed as they
    /// are (examples); others are wrapped.
    public var discussion: String
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    public var subcommands: [CommandSpec]
    /// The root's version, printed by `--version`.
    public var version: String?
    /// Options a sibling command takes that this one does not, each with what to do
    /// instead: its usage error says so (`flow resume ID --var x=2`: the run's recorded
    /// values are what a resume runs with), where a bare "Unknown option" would leave the
    /// user guessing whether it is spelled wrong. A function of the option's name, so that
    /// the texts are only made for the error (a table of them cost 45 k instructions at
    /// every start-up: 3% of a one-step run).
    public var declined: @Sendable (String) -> String?

    public init(
        name: String, abstract: String, discussion: String = "", arguments: [ArgumentSpec] = [],
        options: [OptionSpec] = [], subcommands: [CommandSpec] = [], version: String? = nil,
        declined: @escaping @Sendable (String) -> String? = { _ in nil }
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.version = version
        self.declined = declined
    }

    /// The option whose long name is `long`, if any.
    public func option(_ long: String) -> OptionSpec? {
        options.first { $0.long == long }
    }

    /// The subcommand named `name`, if any.
    public func subcommand(_ name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }
}
