#if canImport(Glibc)
import Glibc
#endif
import FlowKit

/// The command line as bytes: an argument that is not valid UTF-8 (a file name in another
/// encoding) cannot be a Swift `String` without losing bytes, and a lossy name opens no
/// file. Such an argument reaches the parser as its display name (`caf\xE9.yaml`), and
/// the files are opened by the bytes that name stands for.
enum RawArguments {
    /// The arguments as the parser sees them (without the program name).
    nonisolated(unsafe) static var strings: [String] = []
    /// Display name → bytes, for arguments that are not valid UTF-8. A name that is also
    /// given literally (valid UTF-8 spelling `caf\xE9.yaml`) is left out: which one was
    /// meant cannot be told, and the literal spelling wins.
    nonisolated(unsafe) private static var bytesByName: [String: [UInt8]] = [:]

    /// Reads `argv` once, at start-up.
    static func load() {
        var strings: [String] = []
        var raw: [String: [UInt8]] = [:]
        var literal: Set<String> = []
        for index in 1..<max(ProgramArguments.count, 1) {
            guard let pointer = ProgramArguments.argument(index) else { continue }
            let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
                                                  count: strlen(pointer)))
            if let text = String(validating: bytes, as: UTF8.self) {
                strings.append(text)
                literal.insert(text)
            } else {
                let name = ControlEscaping.displayName(ofPathBytes: bytes)
                strings.append(name)
                raw[name] = bytes
            }
        }
        for name in literal { raw[name] = nil }
        Self.strings = strings
        bytesByName = raw
    }

    /// The bytes of the file argument shown as `name`, or nil when it was valid UTF-8 (then
    /// its UTF-8 is its bytes).
    static func bytes(of name: String) -> [UInt8]? {
        bytesByName[name]
    }
}
