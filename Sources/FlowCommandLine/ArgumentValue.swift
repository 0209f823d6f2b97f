/// A type a command-line value converts to (`--limit 5`, `--grace 2s`).
public protocol ArgumentValue {
    /// The value `argument` stands for, or nil when it is not one.
    init?(argument: String)
}

extension String: ArgumentValue {
    public init?(argument: String) { self = argument }
}

extension Int: ArgumentValue {
    public init?(argument: String) { self.init(argument, radix: 10) }
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
