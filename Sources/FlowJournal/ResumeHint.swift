import FlowKit
import Synchronization

/// The line after a recorded run that did not succeed (failed, or cancelled by a signal)
/// that says how to resume it: `to resume from where it stopped: flow resume ID`, as
/// Ansible names its retry file at the end of a failed play. `flow` is the path flow was
/// started by when the shell would not find this flow by that name (`ProgramName`).
///
/// Said only when the journal holds the run to its end (`JournalRecorder.isRecording`):
/// a run it never recorded, or stopped recording, cannot be resumed, or not from where it
/// stopped. `--output json` makes none (the caller does not ask: the events carry the
/// run's id). An undo is not resumed: one that did not succeed says how to undo again
/// what it did not undo (`to undo what is left: flow undo ID`, the run it undid), when it
/// left something (`line(succeeded:counts:)`).
public final class ResumeHint: Sendable {
    private let runID: String
    private let stateDir: String?
    private let program: String?
    /// For an undo run: the run it undid, which `flow undo` takes again.
    private let undoing: String?
    private let recorder = Mutex<JournalRecorder?>(nil)

    /// `stateDir` is the `--state-dir` the run was given, if any: `$FLOW_STATE_DIR` is
    /// still set in the shell that pastes the command, a `--state-dir` is not. The id is
    /// the whole id, as `flow runs` shows it (a prefix may stop being unique). `program`
    /// names flow in the command; nil for `ProgramName.current`, looked up only when the
    /// line is made.
    /// `undoing`: the run an undo run undid (the hint's command is `flow undo` of it).
    public init(runID: String, stateDir: String?, program: String? = nil, undoing: String? = nil) {
        self.runID = runID
        self.stateDir = stateDir
        self.program = program
        self.undoing = undoing
    }

    /// The command, ready to paste: `flow resume ID` (`flow undo ID` after an undo), with
    /// `--state-dir DIR` when the journal is not where the same command would look without it.
    public var command: String { Self.pasteable(undoing.map { words("undo", $0) } ?? words("resume", runID)) }

    /// `flow logs ID STEP`, ready to paste, while the journal records the run: where the
    /// whole output of a failed step is when the end of a run repeats only its last part.
    /// nil when the run is not recorded (there is nothing to read back).
    public func logsCommand(step label: String) -> String? {
        guard let recorder = recorder.withLock({ $0 }), recorder.isRecording else { return nil }
        return Self.pasteable(words("logs", runID, label))
    }

    /// flow's name, then `arguments`, then `--state-dir DIR` when the run was given one.
    private func words(_ arguments: String...) -> [String] {
        var words = [program ?? ProgramName.current] + arguments
        if let stateDir, !stateDir.isEmpty { words += ["--state-dir", stateDir] }
        return words
    }

    /// `words` as one command a POSIX shell reads back as those words.
    private static func pasteable(_ words: [String]) -> String {
        // Quoted as a shell reads it back: a state dir with a space or a quote in it. Control
        // characters escaped (`\u{1B}`) as in every message of flow's, and as `flow logs`
        // writes its state dir: raw, an escape sequence in a directory's name acted on the
        // terminal; such a word must be retyped, which no quoting could spare. Joined
        // by hand: the generic `joined(separator:)` looked up a conformance of `[String]` on
        // its first call, scanning the binary's (about 100,000 instructions, a sixth of what
        // `flow run` does between reading its command line and starting the first step).
        var command = ""
        for word in words {
            if !command.isEmpty { command += " " }
            command += RunArguments.shellQuoted(ControlEscaping.escaped(word))
        }
        return command
    }

    /// The recorder whose journal holds the run.
    public func watch(_ recorder: JournalRecorder) {
        self.recorder.withLock { $0 = recorder }
    }

    /// The line to write on stderr once the run has ended (`succeeded` false: it failed or
    /// was cancelled), or nil when there is nothing to resume or the journal cannot resume it.
    /// `counts`: the run's (the summary's), when it ended as runs do. An undo that every
    /// step it reversed ended `undone` in (one a signal cancelled, which still runs its undo
    /// steps to the end) has left nothing to undo: it said `to undo what is left: flow undo
    /// ID`, and that command was refused (`already undone`).
    public func line(succeeded: Bool, counts: [StepState: Int]? = nil) -> String? {
        guard !succeeded, let recorder = recorder.withLock({ $0 }), recorder.isRecording else { return nil }
        if undoing != nil, let counts, counts.keys.allSatisfy({ $0 == .undone || $0 == .skipped }) { return nil }
        // A second `flow undo` reverses what the first did not (it leaves what it undid alone).
        return undoing == nil ? "to resume from where it stopped: \(command)\n" : "to undo what is left: \(command)\n"
    }
}
