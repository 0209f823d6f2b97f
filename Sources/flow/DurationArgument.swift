import FlowCommandLine
import FlowKit

/// A duration on the command line (`--grace 10s`).
struct DurationArgument: ArgumentValue, Sendable {
    var value: Duration

    init?(argument: String) {
        guard let value = Duration.parse(argument) else { return nil }
        self.value = value
    }
}
