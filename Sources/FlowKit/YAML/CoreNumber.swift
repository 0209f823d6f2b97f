/// Which number a scalar's text spells in the YAML 1.2 core schema (YAML 1.2.2, 10.3.2), if
/// any: integers `[-+]?[0-9]+`, `0o[0-7]+`, `0x[0-9a-fA-F]+`; floats
/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, `[-+]?\.(inf|Inf|INF)` and
/// `\.(nan|NaN|NAN)`. Anything else is a string, as yaml-language-server reads it.
enum CoreNumber: Equatable {
    case integer
    case float

    init?(_ text: String) {
        var bytes = Substring(text).utf8[...]
        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        func isHex(_ b: UInt8) -> Bool {
            isDigit(b) || (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "f")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "F"))
        }
        // Most scalars asked are words: out at the first byte.
        guard let start = bytes.first,
              isDigit(start) || start == UInt8(ascii: "-") || start == UInt8(ascii: "+") || start == UInt8(ascii: ".") else { return nil }
        switch text {
        case ".nan", ".NaN", ".NAN": self = .float; return
        default: break
        }
        if bytes.starts(with: "0o".utf8) || bytes.starts(with: "0x".utf8) {
            let octal = bytes.starts(with: "0o".utf8)
            let digits = bytes.dropFirst(2)
            guard !digits.isEmpty,
                  digits.allSatisfy({ octal ? ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "7")) : isHex($0) }) else { return nil }
            self = .integer
            return
        }
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        switch Substring(bytes) {
        case ".inf", ".Inf", ".INF": self = .float; return
        default: break
        }
        let whole = bytes.prefix(while: isDigit)
        bytes = bytes.dropFirst(whole.count)
        var isFloat = false
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            let fraction = bytes.prefix(while: isDigit)
            bytes = bytes.dropFirst(fraction.count)
            // `1.` is a float; `.` alone or `.e3` is not.
            guard !whole.isEmpty || !fraction.isEmpty else { return nil }
            isFloat = true
        } else if whole.isEmpty {
            return nil
        }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            let exponent = bytes.prefix(while: isDigit)
            guard !exponent.isEmpty else { return nil }
            bytes = bytes.dropFirst(exponent.count)
            isFloat = true
        }
        guard bytes.isEmpty else { return nil }
        self = isFloat ? .float : .integer
    }
}
