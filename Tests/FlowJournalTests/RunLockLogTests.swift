#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import FlowJournal
import FlowKit

/// A run's lock file as its intent log: the line format, reading a live run through it, and
/// folding a dead run's file into the database.
@Suite struct RunLockLogTests {
    static func text(_ records: [TransitionRecord]) -> String {
        var text = ""
        for record in records { record.appendLine(to: &text) }
        return text
    }

    static func write(_ text: String, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = text.utf8CString.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
    }

    static func seqs(_ journal: Journal, _ run: String) throws -> [Int] {
        try journal.read { db in
            try db.values("SELECT seq FROM transitions WHERE run_id = ? ORDER BY seq", [run])
        }
    }

    /// A failure `continue_on_error` allowed says so on its line, and only then: the line of
    /// any other transition is as it was before the journal kept it (a flow killed after
    /// an allowed failure showed it as any failure).
    @Test func anAllowedFailureIsMarkedOnItsLineAlone() {
        let allowed = TransitionRecord(seq: 1, path: "2", from: "running", to: "failed", attempt: 1, time: 1, exitCode: 3,
                                       allowedFailure: true)
        var plain = allowed
        plain.allowedFailure = false
        #expect(Self.text([allowed]) == #"{"seq":1,"path":"2","from":"running","to":"failed","attempt":1,"time":1.0,"exit_code":3,"allowed_failure":true}"# + "\n")
        #expect(Self.text([plain]) == #"{"seq":1,"path":"2","from":"running","to":"failed","attempt":1,"time":1.0,"exit_code":3}"# + "\n")
        #expect(TransitionRecord.parseLines(Array(Self.text([allowed, plain]).utf8)).map(\.allowedFailure) == [true, false])
    }

    /// The line encoder (`LineWriter`) copies runs that need no escape whole and writes
    /// integers digit by digit (it is on the path to every sequential spawn): the bytes must be those of JSON's
    /// escapes and of `String(Int)`, for every control byte, quote, backslash, DEL and
    /// multi-byte character, wherever it falls in the string, and for every integer size.
    @Test func linesSpellStringsAndIntegersExactly() {
        /// JSON's escapes, one character at a time: the spelling the encoder must match.
        func quoted(_ s: String) -> String {
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{0}"..."\u{1F}", "\u{7F}":
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        var strings = ["", "plain", "é", "✓ done", "🎉", "a\"b", "\\", "\u{7F}", "x\u{7F}y", "line\nnext\r\n", "\"\"\""]
        for byte in 0..<0x20 {
            let control = String(UnicodeScalar(UInt8(byte)))
            strings += [control, "a" + control, control + "b", "é" + control + "🎉"]
        }
        let numbers = [0, 1, -1, 9, 10, -10, 99, 100, 12_345, -987_654_321, Int(Int32.max), Int(Int32.min), Int.max, Int.min]
        for (index, text) in strings.enumerated() {
            let number = numbers[index % numbers.count]
            let record = TransitionRecord(seq: number, path: text, from: "running", to: "failed", attempt: index,
                                          time: 0.5, reason: text, exitCode: ~number, signal: number,
                                          outputs: [(key: text, value: text + text)])
            let expected = "{\"seq\":\(number),\"path\":\(quoted(text)),\"from\":\"running\",\"to\":\"failed\","
                + "\"attempt\":\(index),\"time\":0.5,\"reason\":\(quoted(text)),\"exit_code\":\(~number),"
                + "\"signal\":\(number),\"outputs\":{\(quoted(text)):\(quoted(text + text))}}\n"
            var bytes: [UInt8] = []
            record.appendLine(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == expected, "\(Array(text.utf8))")
            // Read back when a step could have written it (seq and attempt from 1, codes
            // of 32 bits); a line no step could write ends what is read.
            let plausible = number >= 1 && index >= 1 && number <= Int(Int32.max)
            #expect(TransitionRecord.parseLines(bytes) == (plausible ? [record] : []))
        }
        for number in numbers + [Int.max - 1, Int.min + 1, 1_000_000, -1_000_000] {
            let text = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: LineWriter.decimalBound) { buffer in
                var writer = LineWriter(buffer)
                writer.decimal(number)
                return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<writer.count]), as: UTF8.self)
            }
            #expect(text == String(number))
        }
    }

    /// The room sized for a line holds its worst case: many outputs, each with the comma
    /// before it and the colon inside it, whose values are all escapes.
    @Test func aLineOfManyFullyEscapedOutputsFitsItsRoom() {
        let outputs = (0..<400).map { (key: "", value: String(repeating: "\u{1}", count: $0 % 3)) }
        let record = TransitionRecord(seq: 1, path: "1", from: "running", to: "succeeded", attempt: 1, time: 1,
                                      reason: nil, exitCode: 0, signal: nil, outputs: outputs)
        var bytes: [UInt8] = []
        record.appendLine(to: &bytes)
        let members = outputs.map { "\"\":\"" + String(repeating: "\\u0001", count: $0.value.count) + "\"" }
        #expect(String(decoding: bytes, as: UTF8.self) == "{\"seq\":1,\"path\":\"1\",\"from\":\"running\",\"to\":\"succeeded\","
                    + "\"attempt\":1,\"time\":1.0,\"exit_code\":0,\"outputs\":{" + members.joined(separator: ",") + "}}\n")
    }

    @Test func recordsRoundTripThroughLinesAndATornLineEndsThem() {
        let records = [
            TransitionRecord(seq: 1, path: "1.2", from: "pending", to: "running", attempt: 1, time: 1_763_780_000.123456),
            TransitionRecord(seq: 2, path: "1.2", from: "running", to: "failed", attempt: 2, time: 0.5,
                             reason: "said \"no\"\n\tand \u{1} ✓", exitCode: -1, signal: 9),
            TransitionRecord(seq: 3, path: "3", from: "running", to: "succeeded", attempt: 1, time: 2, exitCode: 0,
                             outputs: [(key: "a", value: "x=y\nz"), (key: "b", value: "")]),
        ]
        let whole = Array(Self.text(records).utf8)
        #expect(TransitionRecord.parseLines(whole) == records)
        // A crash of the machine can cut the last write short: what precedes it stands.
        let torn = Array(Self.text(records).dropLast(7).utf8)
        #expect(TransitionRecord.parseLines(torn) == Array(records.prefix(2)))
        #expect(TransitionRecord.parseLines(Array("{\"seq\":1}\n".utf8) + whole).isEmpty, "not a record: nothing after it is trusted")
    }

    @Test func aDeadRunsFileIsFoldedInOnceWithoutGapsAndRemoved() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try JournalStorageTests.insertUnfinishedRun(db, id: "r1", transitions: [
                ("1", "pending", "running", 1, nil), ("1", "running", "succeeded", 1, 0),
            ])
        }
        let lines = Self.text([
            TransitionRecord(seq: 2, path: "1", from: "running", to: "succeeded", attempt: 1, time: 2, exitCode: 0),
            TransitionRecord(seq: 3, path: "2", from: "pending", to: "running", attempt: 1, time: 3),
            TransitionRecord(seq: 4, path: "2", from: "running", to: "succeeded", attempt: 1, time: 4, exitCode: 0,
                             outputs: [(key: "token", value: "abc")]),
            TransitionRecord(seq: 6, path: "3", from: "pending", to: "running", attempt: 1, time: 6),
        ])
        Self.write(lines, to: dir + "/locks/r1.lock")
        // A file whose run is not recorded (its process has not got that far) is left alone.
        Self.write(lines, to: dir + "/locks/r9.lock")

        let reopened = try Journal.open(stateDir: dir, create: false)
        #expect(try Self.seqs(reopened, "r1") == [1, 2, 3, 4], "seq 2 was there already; 6 follows a gap")
        #expect(access(dir + "/locks/r1.lock", F_OK) != 0, "folded in, then removed")
        #expect(access(dir + "/locks/r9.lock", F_OK) == 0)
        let steps = try reopened.steps("r1")
        #expect(steps.map(\.state) == ["succeeded", "succeeded", "pending"])
        #expect(steps[1].outputs == ["token": "abc"])
        #expect(try reopened.runs(limit: nil).first?.state == "interrupted")

        // Opening again adds nothing.
        _ = try Journal.open(stateDir: dir, create: false)
        #expect(try Self.seqs(reopened, "r1") == [1, 2, 3, 4])
    }

    /// Lines that parse but that no step could have written are not records: a state that
    /// does not exist, a move the transition table forbids, an attempt or seq below 1. Each
    /// ends what is read, as a torn line does. Found by the hostile-input review: such a
    /// line was taken as it was.
    @Test(arguments: [
        #"{"seq":1,"path":"1","from":"pending","to":"exploded","attempt":1,"time":1}"#,
        #"{"seq":1,"path":"1","from":"pending","to":"succeeded","attempt":1,"time":1}"#,
        #"{"seq":1,"path":"1","from":"succeeded","to":"running","attempt":1,"time":1}"#,
        #"{"seq":1,"path":"1","from":"pending","to":"running","attempt":0,"time":1}"#,
        #"{"seq":0,"path":"1","from":"pending","to":"running","attempt":1,"time":1}"#,
        #"{"seq":1,"path":"1","from":"pending","to":"running","attempt":1,"time":1e999}"#,
    ])
    func aLineNoStepCouldWriteEndsWhatIsRead(_ line: String) {
        let good = Self.text([TransitionRecord(seq: 2, path: "1", from: "running", to: "succeeded", attempt: 1, time: 2)])
        #expect(TransitionRecord.parseLines(Array((line + "\n" + good).utf8)).isEmpty)
    }

    /// A dead run's lines are folded in only while each carries on from where its step is:
    /// a line of a path the run does not have, or one moving a step from a state it is not
    /// in, ends the fold. `pending → running` of step 2 was folded in whatever the line
    /// before it said; a line `running → succeeded` of a step the database had `pending` made
    /// a step that never ran read `succeeded`, and `flow resume` skip it.
    @Test func aDeadRunsLinesAreFoldedInOnlyWhileEachFollowsItsStep() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            for id in ["r1", "r2"] {
                try JournalStorageTests.insertUnfinishedRun(db, id: id, transitions: [("1", "pending", "running", 1, nil)])
            }
        }
        Self.write(Self.text([
            TransitionRecord(seq: 2, path: "1", from: "running", to: "succeeded", attempt: 1, time: 2, exitCode: 0),
            TransitionRecord(seq: 3, path: "2", from: "running", to: "succeeded", attempt: 1, time: 3, exitCode: 0),
        ]), to: dir + "/locks/r1.lock")
        Self.write(Self.text([
            TransitionRecord(seq: 2, path: "1", from: "running", to: "succeeded", attempt: 1, time: 2, exitCode: 0),
            TransitionRecord(seq: 3, path: "9", from: "pending", to: "running", attempt: 1, time: 3),
        ]), to: dir + "/locks/r2.lock")
        let reopened = try Journal.open(stateDir: dir, create: false)
        #expect(try Self.seqs(reopened, "r1") == [1, 2])
        #expect(try reopened.steps("r1").map(\.state) == ["succeeded", "pending", "pending"])
        #expect(try Self.seqs(reopened, "r2") == [1, 2])
        #expect(access(dir + "/locks/r1.lock", F_OK) != 0 && access(dir + "/locks/r2.lock", F_OK) != 0, "taken all the same")
    }

    /// A retried group runs its steps again as new instances, each from `pending` (after
    /// `succeeded` or `failed` of the attempt before): such lines follow their step too.
    /// Taken for a move from the wrong state, they ended the fold, and a SIGKILLed run lost
    /// its second attempt's step ends (`resume` ran them again).
    @Test func aRetriedGroupsStepStartingAgainFromPendingIsFoldedIn() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try JournalStorageTests.insertUnfinishedRun(db, id: "r7", transitions: [
                ("1", "pending", "running", 1, nil), ("1", "running", "failed", 1, 1),
            ])
        }
        Self.write(Self.text([
            TransitionRecord(seq: 3, path: "1", from: "pending", to: "running", attempt: 1, time: 3),
            TransitionRecord(seq: 4, path: "1", from: "running", to: "succeeded", attempt: 1, time: 4, exitCode: 0),
        ]), to: dir + "/locks/r7.lock")
        let reopened = try Journal.open(stateDir: dir, create: false)
        #expect(try Self.seqs(reopened, "r7") == [1, 2, 3, 4])
        #expect(try reopened.steps("r7").first?.state == "succeeded")
    }

    @Test func aLiveRunsFileIsReadButNotTaken() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try JournalStorageTests.insertUnfinishedRun(db, id: "r2", transitions: [("1", "pending", "running", 1, nil)])
        }
        let lock = try #require(RunLock(stateDir: dir, runID: "r2"))
        #expect(lock.append(Self.text([
            TransitionRecord(seq: 2, path: "1", from: "running", to: "succeeded", attempt: 1, time: 2, exitCode: 0,
                             outputs: [(key: "k", value: "v")]),
        ])))
        let reopened = try Journal.open(stateDir: dir, create: false)
        #expect(try Self.seqs(reopened, "r2") == [1], "a live run's file is its own")
        let steps = try reopened.steps("r2")
        #expect(steps.map(\.state) == ["succeeded", "pending", "pending"], "but readers see it")
        #expect(steps[0].outputs == ["k": "v"])
        #expect(try reopened.runs(limit: nil).first?.state == "running")

        lock.clear()
        #expect(RunLock.records(stateDir: dir, runID: "r2").isEmpty)
        lock.release(stateDir: dir, runID: "r2")
    }

    /// A run commits its end, then lets go of its lock. A reader whose snapshot still had it
    /// `running` but who looked at the lock after it was let go read a run that had just
    /// succeeded as `interrupted` (the concurrency audit: `flow runs` in a loop beside short
    /// runs, about one read in 700); `flow resume` took it up. The row is read again then.
    @Test func aRunThatEndedBetweenTheSnapshotAndTheLockIsNotInterrupted() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try JournalStorageTests.insertUnfinishedRun(db, id: "r5", transitions: [("1", "pending", "running", 1, nil)])
            try JournalStorageTests.insertUnfinishedRun(db, id: "r6", transitions: [("1", "pending", "running", 1, nil)])
        }
        let lock = try #require(RunLock(stateDir: dir, runID: "r5"))
        // The snapshot: both `running`.
        let columns = journal.runColumns
        let stale = try journal.read { db in try db.rows("SELECT \(columns) FROM runs ORDER BY id") }
        // Then r5 ends as a run does: its end committed, then its lock let go. r6 died.
        try journal.write { db in
            try db.execute("UPDATE runs SET state = 'succeeded', exit_status = 0, ended_at = 9 WHERE id = 'r5'")
        }
        lock.release(stateDir: dir, runID: "r5")
        let records = try journal.runRecords(stale)
        #expect(records.map(\.state) == ["succeeded", RunRecord.interrupted])
        #expect(records[0].exitStatus == 0 && records[0].endedAt == 9)
    }

    /// A run killed after a `--prune` folded dead runs in (when it opened the journal), and
    /// before it read the runs, is pruned as `interrupted` with its lock file still there:
    /// that file stayed for good, since `recover` leaves the file of a run it does not have.
    @Test func pruningAKilledRunRemovesItsLockFile() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            try JournalStorageTests.insertUnfinishedRun(db, id: "r7", transitions: [("1", "pending", "running", 1, nil)])
        }
        Self.write(Self.text([TransitionRecord(seq: 2, path: "1", from: "running", to: "succeeded", attempt: 1, time: 2)]),
                   to: dir + "/locks/r7.lock")
        #expect(try journal.runs(limit: nil).map(\.state) == [RunRecord.interrupted])
        #expect(try journal.prune(keep: 0, before: nil) == 1)
        #expect(access(dir + "/locks/r7.lock", F_OK) != 0, "the killed run's lock file went with it")
        #expect(access(dir + "/locks/r7.claim", F_OK) != 0, "and the prune's claim")
    }

    /// A second run that drew a live run's id does not wait for that run's lock (its
    /// journal would hang until the other run ended): it gets none, at once.
    @Test func aRunIDInUseIsNotTakenAgain() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        _ = try Journal.open(stateDir: dir, create: true)
        let first = try #require(RunLock(stateDir: dir, runID: "r3"))
        #expect(RunLock(stateDir: dir, runID: "r3") == nil)
        first.release(stateDir: dir, runID: "r3")
        #expect(RunLock(stateDir: dir, runID: "r3") != nil, "once released, the file is gone")
    }

    /// Run ids: the second in hex, then 32 random bits; sortable by time, distinct.
    @Test func runIDsHaveThirtyTwoRandomBits() {
        let ids = (0..<1000).map { _ in ProcessEnvironment.newRunID() }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(10) {
            let parts = id.split(separator: "-")
            #expect(parts.count == 2 && parts[0].count == 8 && parts[1].count == 8, "\(id)")
            #expect(id.allSatisfy { $0 == "-" || $0.isHexDigit }, "\(id)")
        }
    }
}
