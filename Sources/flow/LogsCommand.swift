#if canImport(Glibc)
import Glibc
#endif
import FlowCommandLine
import FlowJournal
import FlowKit

/// `flow logs RUN [STEP]`: what a run (or one step of it) printed.
struct LogsCommand: Command {
    static let spec = CommandSpec(
        name: "logs",
        abstract: "Print what a run, or one of its steps, printed.",
        discussion: """
            STEP is a step's name, its label as output shows it (`shell@2.1`) or its path \
            (`2.1`; see `flow show`); a group's STEP includes the steps inside it. With \
            --follow, keeps printing while the run is live.

            Examples:
              flow logs last              # the newest run's output
              flow logs last unit-tests   # one step's
              flow logs 6b0729 -f         # a live run's, as it comes
            """,
        arguments: [
            JournalOptions.runArgument,
            ArgumentSpec("step", help: "Only this step (name, label such as shell@2.1, or path).", isOptional: true,
                         completion: CompletionValues.runSteps),
        ],
        options: JournalOptions.options + [.flag("follow", short: "f", help: "Keep printing new lines while the run is live.")]
    )

    var runID: String
    var step: String?
    var journal: JournalOptions
    var follow: Bool

    init(_ arguments: ParsedArguments) {
        runID = arguments.argument("run-id") ?? ""
        step = arguments.argument("step")
        journal = JournalOptions(arguments)
        follow = arguments.flag("follow")
    }

    func run() async throws {
        let journal = try JournalInput.open(self.journal, readOnly: true)
        let id = try JournalInput.attempt { () throws(JournalError) in try journal.resolve(runID) }
        let steps = try JournalInput.attempt { () throws(JournalError) in try journal.steps(id) }
        var path: String?
        if let step {
            // A name used by several steps (one inside an action that runs more than once):
            // which one is meant cannot be told, so ask for a path rather than pick one.
            let named = steps.filter { $0.name == step }
            if named.count > 1 {
                Console.stderr("error: `\(ControlEscaping.escaped(step))` names \(named.count) steps of run \(id) (an action used more than once); "
                               + "give one by its path: " + named.map { Self.pathNamingItsGroup($0, in: steps) }.joined(separator: ", ") + "\n")
                throw ExitCode(2)
            }
            guard let match = JournalInput.step(step, in: steps) else {
                let names = steps.compactMap(\.name) + steps.map(\.label)
                let help = Suggestion.help(for: step, in: names).map { " (\($0))" } ?? ""
                Console.stderr("error: run \(id) has no step `\(ControlEscaping.escaped(step))`" + ControlEscaping.escaped(help) + "\n")
                throw ExitCode(2)
            }
            path = match.path
        }
        // The labels of the live output (`name`, else `KIND@PATH`), padded as `prefixed`
        // pads them (to the widest selected step's, within a maximum), so lines read as
        // they did then.
        let unselected = try JournalInput.attempt { () throws(JournalError) in try journal.unselectedPaths(id) }
        func isSelected(_ step: StepRecord) -> Bool {
            unselected.isEmpty || !unselected.contains { step.path == $0 || step.path.hasPrefix($0 + ".") }
        }
        let width = min(steps.filter { $0.isLeaf && isSelected($0) }.map { DisplayWidth.columns(of: $0.label) }.max() ?? 0,
                        PrefixedReporter.maximumLabelWidth)
        let labels = Dictionary(steps.map { ($0.path, PrefixedReporter.padded($0.label, to: width)) },
                                uniquingKeysWith: { a, _ in a })
        let prefixed = path == nil || steps.contains { $0.path.hasPrefix(path! + ".") }
        var last: Int64 = 0
        var followedLive = false
        // Written in pieces of about 64 KiB as the rows are read: a log of any size takes
        // memory for one row (it was all read first: 1.2 GB for 300 MB of output).
        var out: [UInt8] = []
        out.reserveCapacity(80 * 1024)
        func flush() {
            if !out.isEmpty { Console.stdout(bytes: out) }
            out.removeAll(keepingCapacity: true)
        }
        while true {
            let before = last
            // Asked before the rows are read: rows the run commits after the read, before
            // it ends, are read in the next round (asked after, they could be missed).
            let live = try follow && JournalInput.attempt { () throws(JournalError) in try journal.isLive(id) }
            followedLive = followedLive || live
            // What was read before a failure (an output file cut short by a crash or by
            // hand) is printed before the error: it was dropped with the unflushed piece,
            // so a small log printed nothing and a large one stopped at a 64 KiB boundary.
            let read = Result { () throws(JournalError) -> Int64 in
                try journal.forEachLines(id, path: path, after: last) { record in
                    // Bytes, not a String: a line that is not UTF-8 is printed as the step printed it.
                    guard prefixed else {
                        out += record.bytes
                        out.append(0x0A)
                        if out.count >= 64 * 1024 { flush() }
                        return
                    }
                    let prefix = Array(((labels[record.path] ?? record.path) + " | ").utf8)
                    record.bytes.withUnsafeBytes { row in
                        // Each line (`\n` separates them; the row has none at its end).
                        var start = 0
                        while true {
                            let end = row.baseAddress.flatMap { memchr($0 + start, 0x0A, row.count - start) }
                                .map { row.baseAddress!.distance(to: UnsafeRawPointer($0)) } ?? row.count
                            out += prefix
                            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: row[start..<end]))
                            out.append(0x0A)
                            if out.count >= 64 * 1024 { flush() }
                            if end >= row.count { break }
                            start = end + 1
                        }
                    }
                }
            }
            flush()
            last = try JournalInput.attempt { () throws(JournalError) in try read.get() }
            guard follow, live else {
                // A run deleted meanwhile (`runs --prune` once it ended, while `--follow` was a
                // round behind) has no rows left to read: the log stopped short, exit 0, as if
                // the run had printed no more (found by the concurrency audit).
                if try !JournalInput.attempt({ () throws(JournalError) in try journal.contains(id) }) {
                    Console.stderr("error: run \(id) was deleted (`flow runs --prune`) while its output was read; "
                                   + "what it printed after the lines above is gone\n")
                    throw ExitCode(2)
                }
                if let path {
                    try Self.sayWhereReusedOutputIs(of: path, in: id, steps: steps, journal: journal, stateDir: stateDirWords)
                }
                // A run followed while live whose process then died (SIGKILL, a crash, the
                // machine's OOM killer) ends the log as one that ended would: say why it
                // stopped, and how to carry it on (the log just stopped, exit 0).
                if followedLive, try JournalInput.attempt({ () throws(JournalError) in try journal.run(id).state }) == RunRecord.interrupted {
                    Console.stderr("note: run \(id) stopped before it ended: its flow process died (killed, or it crashed); "
                                   + "`flow resume \(id)\(stateDirWords)` carries it on\n")
                }
                return
            }
            if last == before { usleep(200_000) }
        }
    }

    /// A step a resume reused printed nothing in it: its output is in the run that ran it,
    /// which a note on stderr names (the log was empty, exit 0, with nothing to say why).
    private static func sayWhereReusedOutputIs(of path: String, in id: String, steps: [StepRecord],
                                               journal: Journal, stateDir: String) throws {
        let producers = try JournalInput.attempt { () throws(JournalError) -> [String: String] in
            guard try journal.reusedSources(id)[path] != nil else { return [:] }
            return try journal.producers([path: id])
        }
        guard let source = producers[path], source != id, let step = steps.first(where: { $0.path == path }), step.isLeaf else { return }
        let label = ControlEscaping.escaped(step.label)
        Console.stderr("note: \(label) did not run in run \(id): it was reused from run \(source), "
                       + "which has its output (flow logs \(source) \(label)\(stateDir))\n")
    }

    /// ` --state-dir DIR` when this command was given one, for a command a note names:
    /// without it, that command looked for the run in the default journal.
    private var stateDirWords: String {
        guard let dir = journal.stateDir, !dir.isEmpty else { return "" }
        return " --state-dir " + RunArguments.shellQuoted(ControlEscaping.escaped(dir))
    }

    /// `step`'s path for the list of steps that share its name, with the nearest named
    /// step around it: `1.2.2 (in beta)`. The paths alone did not say which was which (an
    /// action `check` used as `alpha`, `beta` and `gamma` gave `1.1.2, 1.2.2, 1.3.2`), so
    /// picking the failed package's `test` took a `flow show` first.
    static func pathNamingItsGroup(_ step: StepRecord, in steps: [StepRecord]) -> String {
        var parts = step.path.split(separator: ".")
        while parts.count > 1 {
            parts.removeLast()
            let parent = parts.joined(separator: ".")
            if let name = steps.first(where: { $0.path == parent })?.name {
                return "\(step.path) (in \(ControlEscaping.escaped(name)))"
            }
        }
        return step.path
    }
}
