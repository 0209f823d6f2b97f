#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock and monotonic time, without Foundation.
public struct Timestamp: Sendable, Comparable {
    /// Seconds since the Unix epoch.
    public var unix: Double

    public init(unix: Double) {
        self.unix = unix
    }

    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(unix: Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9)
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.unix < b.unix }

    /// Monotonic seconds, for elapsed times.
    public static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// ISO 8601 in UTC with milliseconds: `2026-11-21T22:31:47.123Z`.
    public var iso8601: String {
        var seconds = time_t(unix.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let millis = Int((unix - unix.rounded(.down)) * 1000)
        func pad(_ v: Int32, _ width: Int = 2) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T"
            + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(Int32(millis), 3))Z"
    }
}

/// Formats elapsed seconds for people: `0.4s`, `12.3s`, `2m05s`.
public func formatElapsed(_ seconds: Double) -> String {
    // Rounded first: 59.97 s is "1m00s", not "60.0s".
    let tenths = (seconds * 10).rounded() / 10
    if tenths < 60 { return "\(tenths)s" }
    let total = Int(seconds.rounded())
    let s = total % 60
    return "\(total / 60)m\(s < 10 ? "0" : "")\(s)s"
}
