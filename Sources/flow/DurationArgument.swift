import FlowCommandLine
import FlowKit

/// A duration on the command line (`--grace 10s`).
struct DurationArgument: ArgumentValue, Sendable {
    var value: Duration
    /// As it was written: what the journal records, and `flow show` says.
    var text: String

    init?(argument: String) {
        guard let value = Duration.parse(argument) else { return nil }
        self.value = value
        text = argument
    }

    /// As a workflow's invalid duration is explained (`WorkflowParser`'s durations).
    static func whyInvalid(_ argument: String) -> String? {
        switch Duration.parseChecked(argument) {
        case .success: nil
        case .failure(.empty): "expected a duration such as 5s"
        case .failure(.negative): "durations cannot be negative"
        case .failure(.tooLong): "longer than the maximum, \(Duration.maximumText)"
        case .failure(.malformed):
            Duration.suggestion(for: argument).map { "did you mean '\($0)'?" }
                ?? "write e.g. 30s, 1m30s, 250ms or a number of seconds"
        }
    }
}
