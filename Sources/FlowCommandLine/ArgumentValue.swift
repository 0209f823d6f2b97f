/// A type a command-line value converts to (`--limit 5`, `--grace 2s`).
public protocol ArgumentValue {
    /// The value `argument` stands for, or nil when it is not one.
    init?(argument: String)
    /// Why `argument` is not a value (`durations cannot be negative`), said after "is
    /// invalid": the value alone leaves the user to guess what is wrong with it.
    static func whyInvalid(_ argument: String) -> String?
}

extension ArgumentValue {
    public static func whyInvalid(_ argument: String) -> String? { nil }
}

extension String: ArgumentValue {
    public init?(argument: String) { self = argument }
}

extension Int: ArgumentValue {
    public init?(argument: String) { self.init(argument, radix: 10) }
    public static func whyInvalid(_ argument: String) -> String? { "expected a whole number, such as 4" }
}

extension ArgumentValue where Self: RawRepresentable, RawValue == String {
    public init?(argument: String) { self.init(rawValue: argument) }
}

extension ArgumentValue where Self: RawRepresentable & CaseIterable, RawValue == String {
    /// Every value, for an option's `choices`. Inlinable, so that it is specialised for each
    /// enum where it is used: unspecialised, it looked up `AllCases` and built a key path at
    /// run time, a tenth of the instructions of `flow --version`.
    @inlinable public static var choices: [String] { allCases.map { $0.rawValue } }
}
