import FlowCommandLine

/// `--output`: how a run shows itself.
enum OutputMode: String, ArgumentValue, CaseIterable {
    case auto, tty, prefixed, grouped, raw, json
}
