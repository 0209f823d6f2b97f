import ArgumentParser
import FlowKit

/// A duration on the command line (`--grace 10s`).
struct DurationArgument: ExpressibleByArgument, Sendable {
    var value: Duration

    init?(argument: String) {
        guard let value = Duration.parse(argument) else { return nil }
        self.value = value
    }

    var defaultValueDescription: String { value.compact }
}
