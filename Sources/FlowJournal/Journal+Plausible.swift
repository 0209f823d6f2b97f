extension Journal {
    /// A time read from the journal, or nil when no run could have recorded it: not finite,
    /// or more than 3,000 years from 1970 either way. A row edited by hand or another tool
    /// (`started_at = 9223372036854775807`) trapped `flow runs` and `show` with a backtrace
    /// where the time was turned into a date or a duration; it now reads as unknown.
    static func plausibleTime(_ time: Double?) -> Double? {
        guard let time, time.isFinite, abs(time) < plausibleTimeLimit else { return nil }
        return time
    }

    /// Seconds in about 3,000 years.
    static let plausibleTimeLimit = 1e11

    /// An exit code, exit status or signal read from the journal, or nil when it does not fit
    /// the 32 bits of one: `resume` and `undo` trapped converting such a value.
    static func plausibleCode(_ code: Int?) -> Int? {
        guard let code, code >= Int(Int32.min), code <= Int(Int32.max) else { return nil }
        return code
    }

    /// `records` with each step's depth within what a tree of that many steps can have: a
    /// negative depth trapped `flow show` (a negative indentation), a huge one made it build
    /// an indentation until it was killed.
    static func plausibleDepths(_ records: [StepRecord]) -> [StepRecord] {
        var records = records
        for i in records.indices { records[i].depth = min(max(records[i].depth, 0), records.count) }
        return records
    }
}
