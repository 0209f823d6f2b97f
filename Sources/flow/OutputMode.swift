import ArgumentParser

/// `--output`: how a run shows itself.
enum OutputMode: String, ExpressibleByArgument, CaseIterable {
    case auto, tty, prefixed, grouped, raw, json
}
