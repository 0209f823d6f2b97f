import FlowKit

/// One step transition as the journal stores it: a `transitions` row, plus the outputs of a
/// step that succeeded.
///
/// The same record is a line of JSON in a live run's lock file (see `RunLock`): the recorder
/// appends transitions there before flow acts on them, and `Journal.recover` folds a dead
/// run's lines into the database. One type, so both ways write identical rows.
struct TransitionRecord: Equatable {
    /// Order in the run, from 1, without gaps.
    var seq: Int
    var path: String
    var from: String
    var to: String
    var attempt: Int
    var time: Double
    var reason: String?
    var exitCode: Int?
    var signal: Int?
    /// A `failed` or `timed_out` that did not fail the run (`StepTransition.isAllowedFailure`).
    var allowedFailure = false
    /// Sorted by key.
    var outputs: [(key: String, value: String)] = []

    init(seq: Int, path: String, from: String, to: String, attempt: Int, time: Double, reason: String? = nil,
         exitCode: Int? = nil, signal: Int? = nil, allowedFailure: Bool = false, outputs: [(key: String, value: String)] = []) {
        self.seq = seq
        self.path = path
        self.from = from
        self.to = to
        self.attempt = attempt
        self.time = time
        self.reason = reason
        self.exitCode = exitCode
        self.signal = signal
        self.allowedFailure = allowedFailure
        self.outputs = outputs
    }

    init(seq: Int, _ t: StepTransition) {
        self.init(seq: seq, path: t.step.path, from: t.from.rawValue, to: t.to.rawValue, attempt: t.attempt,
                  time: t.time.unix, reason: t.reason, exitCode: t.exitCode.map(Int.init), signal: t.signal.map(Int.init),
                  allowedFailure: t.isAllowedFailure, outputs: (t.outputs ?? [:]).sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
    }

    static func == (a: TransitionRecord, b: TransitionRecord) -> Bool {
        a.seq == b.seq && a.path == b.path && a.from == b.from && a.to == b.to && a.attempt == b.attempt
            && a.time == b.time && a.reason == b.reason && a.exitCode == b.exitCode && a.signal == b.signal
            && a.allowedFailure == b.allowedFailure && a.outputs.map(\.key) == b.outputs.map(\.key) && a.outputs.map(\.value) == b.outputs.map(\.value)
    }

    /// Appends the record as one line of JSON, ending in `\n`.
    func appendLine(to out: inout String) {
        var bytes: [UInt8] = []
        appendLine(to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the record as one line of JSON, ending in `\n`, in UTF-8. Two lines go to
    /// the lock file before each sequential step, on the path from one step's exit to the
    /// next spawn: written with plain stores (`LineWriter`) into room sized once, they
    /// take ~3,000 instructions a step (as strings ~20,000; as `Array` appends ~10,000).
    func appendLine(to out: inout [UInt8]) {
        let time = self.time.description
        var bound = 192 + 4 * LineWriter.decimalBound + time.utf8.count
            + LineWriter.quotedBound(path) + LineWriter.quotedBound(from) + LineWriter.quotedBound(to)
        if let reason { bound += LineWriter.quotedBound(reason) }
        // A comma before and a colon inside each output.
        for output in outputs { bound += 2 + LineWriter.quotedBound(output.key) + LineWriter.quotedBound(output.value) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { buffer in
            var line = LineWriter(buffer)
            line.raw(#"{"seq":"#)
            line.decimal(seq)
            line.raw(#","path":"#)
            line.quoted(path)
            line.raw(#","from":"#)
            line.quoted(from)
            line.raw(#","to":"#)
            line.quoted(to)
            line.raw(#","attempt":"#)
            line.decimal(attempt)
            line.raw(#","time":"#)
            var text = time
            text.withUTF8 { line.raw($0) }
            if let reason {
                line.raw(#","reason":"#)
                line.quoted(reason)
            }
            if let exitCode {
                line.raw(#","exit_code":"#)
                line.decimal(exitCode)
            }
            if let signal {
                line.raw(#","signal":"#)
                line.decimal(signal)
            }
            // Only when set, as in the events: a run without `continue_on_error` writes nothing more.
            if allowedFailure { line.raw(#","allowed_failure":true"#) }
            if !outputs.isEmpty {
                line.raw(#","outputs":{"#)
                for (index, output) in outputs.enumerated() {
                    if index > 0 { line.byte(0x2C) }  // ","
                    line.quoted(output.key)
                    line.byte(0x3A)  // ":"
                    line.quoted(output.value)
                }
                line.byte(0x7D)  // "}"
            }
            line.raw("}\n")
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<line.count]))
        }
    }

    /// The records of a lock file's text, in order, up to the first line that is not a
    /// whole record (a write cut short by a crash of the machine; a killed process cannot
    /// leave one, its writes are whole or absent).
    static func parseLines(_ bytes: [UInt8]) -> [TransitionRecord] {
        var records: [TransitionRecord] = []
        var start = 0
        while let end = bytes[start...].firstIndex(of: 0x0A) {
            guard let record = parse(bytes[start..<end]) else { break }
            records.append(record)
            start = end + 1
        }
        return records
    }

    /// The record of one line; nil unless it is a whole record of a move the transition
    /// table allows: a line that parses but names no state, or a move no step makes
    /// (`pending → succeeded`), is not one flow wrote, and folded in it made a step that
    /// never ran read `succeeded` (and `resume` skip it).
    static func parse(_ line: ArraySlice<UInt8>) -> TransitionRecord? {
        guard let object = JSONParser.parse(line) else { return nil }
        guard let seq = object["seq"]?.intValue, seq >= 1, let path = object["path"]?.stringValue,
              let from = object["from"]?.stringValue, let to = object["to"]?.stringValue,
              let fromState = StepState(rawValue: from), let toState = StepState(rawValue: to), fromState.canMove(to: toState),
              let attempt = object["attempt"]?.intValue, attempt >= 1, let time = object["time"]?.doubleValue,
              Journal.plausibleTime(time) != nil,
              object["exit_code"]?.intValue == Journal.plausibleCode(object["exit_code"]?.intValue),
              object["signal"]?.intValue == Journal.plausibleCode(object["signal"]?.intValue)
        else { return nil }
        var outputs: [(key: String, value: String)] = []
        if case .object(let members)? = object["outputs"] {
            outputs = members.compactMap { key, value in value.stringValue.map { (key: key, value: $0) } }
                .sorted { $0.key < $1.key }
        }
        return TransitionRecord(seq: seq, path: path, from: from, to: to, attempt: attempt, time: time,
                                reason: object["reason"]?.stringValue, exitCode: object["exit_code"]?.intValue,
                                signal: object["signal"]?.intValue,
                                allowedFailure: object["allowed_failure"] == .bool(true), outputs: outputs)
    }
}
