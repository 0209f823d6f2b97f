/// How a child's standard output and standard error are handled.
public enum ChildOutputMode: Sendable, Hashable {
    /// Read through pipes and handed to the `onOutput` callback of `ProcessHub.spawn`.
    case capture
    /// Flow's own descriptors 1 and 2 are passed down (the cheapest: no copy at all).
    case inherit
    /// Both streams go to flow's stderr: an interactive step under `--output json`, where
    /// flow's stdout is the stream of events (the step's bytes broke every JSON reader).
    case inheritOnStderr
}
