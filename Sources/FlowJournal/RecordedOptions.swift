import FlowKit

/// The options of `flow run` that decide how a run runs and fails, rather than what runs or
/// how it is shown: `--no-rollback`, `--max-parallel` and `--grace`. Recorded with the run
/// (in its `args`) so that a resume carries the run on as it was started, and an undo
/// reverses it as its own rollback would have: a run started with `--no-rollback` to
/// inspect a broken deployment was rolled back, reused steps and all, by a resume that
/// failed, unless the user remembered to say `--no-rollback` again.
///
/// Each is nil when it was not given (its default then applies, or, on a resume or undo,
/// the run's): a run records only what it was given, so a later flow's other default is
/// not taken for a choice.
public struct RecordedOptions: Sendable, Equatable {
    /// false: `--no-rollback`; true: `--rollback` (a resume turning it back on); nil: neither.
    public var rollback: Bool?
    /// `--max-parallel N`.
    public var maxParallel: Int?
    /// `--grace`, as it was written (`30s`, `1m30s`); a valid duration.
    public var grace: String?

    public init(rollback: Bool? = nil, maxParallel: Int? = nil, grace: String? = nil) {
        self.rollback = rollback
        self.maxParallel = maxParallel
        self.grace = grace
    }

    /// These options where given, else those of `run` (the run a resume or undo carries on):
    /// an option on the resume's own command line overrides the run's.
    public func inheriting(_ run: RecordedOptions) -> RecordedOptions {
        RecordedOptions(rollback: rollback ?? run.rollback, maxParallel: maxParallel ?? run.maxParallel, grace: grace ?? run.grace)
    }

    /// Those of these options (the run's) that `given` leaves to them: what a resume or
    /// undo takes from the run, which it says.
    public func left(by given: RecordedOptions) -> RecordedOptions {
        RecordedOptions(rollback: given.rollback == nil ? rollback : nil, maxParallel: given.maxParallel == nil ? maxParallel : nil,
                        grace: given.grace == nil ? grace : nil)
    }

    /// Whether none was given.
    public var isEmpty: Bool { self == RecordedOptions() }

    /// The options as command-line words (`--no-rollback --max-parallel 2 --grace 30s`), as
    /// `flow show` says them; `--rollback` is left out, as rollback is on without it.
    public var commandLine: String {
        var words: [String] = []
        if rollback == false { words.append("--no-rollback") }
        if let maxParallel { words += ["--max-parallel", String(maxParallel)] }
        if let grace { words += ["--grace", RunArguments.shellQuoted(grace)] }
        return words.joined(separator: " ")
    }

    /// The options as JSON members, sorted by key; those not given are left out (a run
    /// recorded before flow kept them has none: it is resumed as it was then).
    var jsonMembers: [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        if let grace { members.append(("grace", .string(grace))) }
        if let maxParallel { members.append(("max_parallel", .int(maxParallel))) }
        if let rollback { members.append(("rollback", .bool(rollback))) }
        return members
    }

    /// The options of a JSON object `jsonMembers` wrote; nil if one of them is not what
    /// flow writes (a row edited by hand or by another tool), which is damage, as for the
    /// other arguments: taking it as not given would resume with rollback on, say.
    static func decode(_ object: JSONValue) -> RecordedOptions? {
        var options = RecordedOptions()
        if let value = object["rollback"] {
            guard case .bool(let rollback) = value else { return nil }
            options.rollback = rollback
        }
        if let value = object["max_parallel"] {
            guard case .int(let count) = value, count >= 1 else { return nil }
            options.maxParallel = count
        }
        if let value = object["grace"] {
            guard let text = value.stringValue, Duration.parse(text) != nil else { return nil }
            options.grace = text
        }
        return options
    }
}
