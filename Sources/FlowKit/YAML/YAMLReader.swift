import CYAML

/// Reads YAML text into a `YAMLDocument` through libyaml's event API.
///
/// Owning the reader (rather than using a YAML library's decoder) is what lets flow report
/// every duplicate key at its second occurrence, explain tabs, bound alias expansion
/// ("billion laughs") and nesting depth, and keep an exact span on every node.
public struct YAMLReader {
    /// Bounds that keep hostile input from exhausting memory or the stack.
    public struct Limits: Sendable {
        /// Deepest nesting of collections accepted.
        public var maxDepth = 200
        /// Most nodes that aliases may add by repetition.
        public var maxAliasExpansion = 1_000_000
        /// Most bytes of scalar text (keys and values) that aliases may add by repetition:
        /// as much as the largest file flow reads. Every later phase reads each use of an
        /// alias again, so the node count alone let a 500 KB file of nested aliases of one
        /// long scalar take a minute to validate (55 GB of text).
        public var maxAliasText = FileReader.maxSize

        public init() {}
    }

    public var limits = Limits()

    public init() {}

    /// Parses `file`. Problems go to `bag`; the document holds whatever was read before a
    /// fatal YAML error (its root is nil then).
    public func read(_ file: SourceFile, into bag: inout DiagnosticBag) -> YAMLDocument {
        if let encoding = Self.wideEncodingWithoutByteOrderMark(file.bytes) {
            // Valid UTF-8 (ASCII and NUL bytes), so the check below passes it, and libyaml
            // said only "control characters are not allowed" at the first NUL.
            bag.error(
                .invalidUTF8, "file is not valid UTF-8: it reads as \(encoding) (a NUL byte beside each character)",
                at: SourceSpan(line: 1, column: 1, length: 1),
                help: "flow reads workflows as UTF-8: convert it with `iconv -f \(encoding) -t UTF-8`")
            return YAMLDocument()
        }
        if let (offset, byte) = Self.firstInvalidUTF8(file.bytes) {
            let location = file.location(ofByte: offset)
            // `iconv -t UTF-8` alone (the help this was) reads the file as the locale's
            // encoding, UTF-8 nowadays, and fails on the same byte: name a source encoding.
            // A UTF-16 byte order mark (Windows PowerShell's `>`) says which one it is; a
            // UTF-32 one starts like UTF-16 LE's, so it is looked for first.
            let utf32 = file.bytes.starts(with: [0xFF, 0xFE, 0, 0]) || file.bytes.starts(with: [0, 0, 0xFE, 0xFF])
            let utf16 = !utf32 && (file.bytes.starts(with: [0xFF, 0xFE]) || file.bytes.starts(with: [0xFE, 0xFF]))
            let wide = utf32 ? "UTF-32" : "UTF-16"
            bag.error(
                .invalidUTF8, "file is not valid UTF-8 (byte 0x\(String(byte, radix: 16, uppercase: true)))",
                at: SourceSpan(start: location, end: SourceLocation(line: location.line, column: location.column + 1)),
                help: utf16 || utf32
                    ? "the file is \(wide) (it starts with a \(wide) byte order mark); flow reads workflows as UTF-8: "
                        + "convert it with `iconv -f \(wide) -t UTF-8`"
                    : "flow reads workflows as UTF-8; convert the file from its encoding, e.g. with "
                        + "`iconv -f LATIN1 -t UTF-8`")
            return YAMLDocument()
        }
        var builder = Builder(file: file, limits: limits)
        file.bytes.withUnsafeBufferPointer { buffer in
            builder.run(buffer, bag: &bag)
        }
        return builder.document
    }

    /// UTF-16 or UTF-32 without a byte order mark, told by where the NUL bytes of the
    /// first character are (YAML 1.2, 5.2 "Character Encodings"); nil for anything else. A
    /// NUL byte is never part of a workflow, so no UTF-8 file is taken for one.
    static func wideEncodingWithoutByteOrderMark(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 2 else { return nil }
        let b = bytes.prefix(4) + Array(repeating: 0xFF, count: max(0, 4 - bytes.count))
        let first = b[0] != 0 && b[0] < 0x80
        if b[0] == 0, b[1] == 0, b[2] == 0, b[3] != 0, b[3] < 0x80 { return "UTF-32BE" }
        if first, b[1] == 0, b[2] == 0, b[3] == 0 { return "UTF-32LE" }
        if b[0] == 0, b[1] != 0, b[1] < 0x80 { return "UTF-16BE" }
        if first, b[1] == 0 { return "UTF-16LE" }
        return nil
    }

    /// The offset and value of the first byte that is not part of well-formed UTF-8.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> (Int, UInt8)? {
        bytes.withUnsafeBufferPointer { b -> (Int, UInt8)? in
            var i = 0
            let n = b.count
            while i < n {
                // ASCII fast path: eight bytes at a time.
                if i + 8 <= n, UnsafeRawPointer(b.baseAddress! + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                    continue
                }
                let c = b[i]
                if c < 0x80 { i += 1; continue }
                let length: Int
                var minimum: UInt32
                var value: UInt32
                switch c {
                case 0xC2...0xDF: length = 2; minimum = 0x80; value = UInt32(c & 0x1F)
                case 0xE0...0xEF: length = 3; minimum = 0x800; value = UInt32(c & 0x0F)
                case 0xF0...0xF4: length = 4; minimum = 0x10000; value = UInt32(c & 0x07)
                default: return (i, c)
                }
                if i + length > n { return (i, c) }
                for k in 1..<length {
                    let cc = b[i + k]
                    if cc & 0xC0 != 0x80 { return (i, c) }
                    value = (value << 6) | UInt32(cc & 0x3F)
                }
                if value < minimum || value > 0x10FFFF || (0xD800...0xDFFF).contains(value) { return (i, c) }
                i += length
            }
            return nil
        }
    }
}

extension YAMLReader {
    /// Turns the event stream into nodes, one open collection per stack frame.
    struct Builder {
        struct Frame {
            var node: Int32
            /// Where this collection's children start in `pending`.
            var pendingStart: Int
            var anchor: String?
            var weight: Int
            /// The bytes of scalar text in the collection, as its aliases would repeat them.
            var text: Int
        }

        let file: SourceFile
        let limits: Limits
        var document = YAMLDocument()
        /// libyaml's index (in characters) of the end of the input, once its scanner has
        /// reached it (-1 before): what `span` tells the end of the input by.
        var endIndex = -1
        var stack: [Frame] = []
        /// Children of the open collections, innermost last (one buffer for all of them).
        var pending: [Int32] = []
        var anchors: [String: (node: Int32, weight: Int, text: Int)] = [:]
        var openAnchors: Set<String> = []
        var aliasExpansion = 0
        var aliasText = 0
        var documentCount = 0
        var weights: [Int32: Int] = [:]

        init(file: SourceFile, limits: Limits) {
            self.file = file
            self.limits = limits
            document.nodes.reserveCapacity(file.bytes.count / 8)
        }

        @inline(__always)
        func location(_ mark: yaml_mark_t) -> SourceLocation {
            SourceLocation(line: Int(mark.line) + 1, column: Int(mark.column) + 1)
        }

        /// An event's span. The empty value of a `? key` with no `:` at the very end of
        /// the input starts where libyaml ends its stream: past the last line (libyaml
        /// counts a line break at the end of the input, written or not), so what was said of
        /// it (`print` must be a string, found null) pointed at a line the file does not
        /// have, with no excerpt (found by the fuzzer). It is placed where the value is
        /// missing, just past the last thing written, as a syntax error at the end of the
        /// input is. Only that empty value starts at the input's end. Told by libyaml's own
        /// end-of-input index (`endIndex`), in characters as the event's: not by the file's
        /// length in bytes (after a `U+2028`, three bytes and one character, the end of the
        /// input was not recognised: the fuzzer again), nor by the file's line count, which
        /// took counting the lines of every file (1.5 M instructions of 206 M in a
        /// 10,000-step `flow validate`) for the end events of its collections.
        @inline(__always)
        func span(_ event: yaml_event_t) -> SourceSpan {
            if event.start_mark.index == event.end_mark.index, Int(event.start_mark.index) == endIndex {
                return SourceSpan.point(endOfText())
            }
            return SourceSpan(start: location(event.start_mark), end: location(event.end_mark))
        }

        /// The place just past the last character that is not a blank or a line break (1:1
        /// in a file of none). Out of line: `span`, inlined into every event's handling,
        /// needs it only at the very end of the input.
        @inline(never)
        func endOfText() -> SourceLocation {
            var end = file.bytes.count
            while end > 0, [0x20, 0x09, 0x0A, 0x0D].contains(file.bytes[end - 1]) { end -= 1 }
            return end > 0 ? file.location(ofByte: end) : SourceLocation(line: 1, column: 1)
        }

        static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            guard let pointer else { return nil }
            return String(cString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))
        }

        mutating func run(_ buffer: UnsafeBufferPointer<UInt8>, bag: inout DiagnosticBag) {
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else { return }
            defer { yaml_parser_delete(&parser) }
            // A UTF-8 byte order mark is skipped before libyaml sees the text; SourceFile
            // leaves it out of line 1 too, so columns agree.
            var input = buffer
            if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF {
                input = UnsafeBufferPointer(rebasing: buffer[3...])
            }
            yaml_parser_set_input_string(&parser, input.baseAddress ?? UnsafePointer(bitPattern: 1)!, input.count)
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            var event = yaml_event_t()
            while true {
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    reportSyntaxError(parser, bag: &bag)
                    document.root = nil
                    return
                }
                defer { yaml_event_delete(&event) }
                // libyaml's scanner has read to the end of the input (its last token, queued
                // or handed on, is the stream's end): its mark is there.
                if endIndex < 0, let tail = parser.tokens.tail, tail != parser.tokens.start,
                   parser.stream_end_produced != 0 || (tail - 1).pointee.type == YAML_STREAM_END_TOKEN {
                    endIndex = Int(parser.mark.index)
                }
                let type = event.type
                if type == YAML_STREAM_END_EVENT { return }
                guard handle(event, bag: &bag) else {
                    document.root = nil
                    return
                }
            }
        }

        /// Handles one event; false stops reading (a fatal problem was reported).
        mutating func handle(_ event: yaml_event_t, bag: inout DiagnosticBag) -> Bool {
            switch event.type {
            case YAML_DOCUMENT_START_EVENT:
                documentCount += 1
                if documentCount > 1 {
                    bag.error(.multipleDocuments, "a workflow file holds one YAML document",
                              at: SourceSpan(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1, length: 3),
                              help: "put each workflow in its own file")
                    return false
                }
            case YAML_SCALAR_EVENT:
                let data = event.data.scalar
                let value: String
                if let pointer = data.value, data.length > 0 {
                    value = String(decoding: UnsafeBufferPointer(start: pointer, count: data.length), as: UTF8.self)
                } else {
                    value = ""
                }
                let style: YAMLNode.Style
                switch data.style {
                case YAML_SINGLE_QUOTED_SCALAR_STYLE: style = .singleQuoted
                case YAML_DOUBLE_QUOTED_SCALAR_STYLE: style = .doubleQuoted
                case YAML_LITERAL_SCALAR_STYLE: style = .literal
                case YAML_FOLDED_SCALAR_STYLE: style = .folded
                default: style = .plain
                }
                // Most scalars have no tag: a tagged one is read out of line (inline, it made
                // every scalar's handling 4 % dearer, `validate` of 10,000 steps in callgrind).
                let id: Int32
                if data.tag == nil {
                    id = append(YAMLNode(kind: .scalar, style: style, span: span(event), value: value, tag: nil))
                } else {
                    id = append(taggedScalar(data.tag, value: value, style: style, event: event, bag: &bag))
                }
                if let anchor = Self.string(data.anchor) { anchors[anchor] = (id, 1, data.length) }
                return attach(id, weight: 1, text: data.length, event: event, bag: &bag)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                let isSequence = event.type == YAML_SEQUENCE_START_EVENT
                if stack.count >= limits.maxDepth {
                    bag.error(.nestingTooDeep, "nesting deeper than \(limits.maxDepth) levels",
                              at: SourceSpan.point(location(event.start_mark)),
                              help: "split the workflow into actions or flatter groups")
                    return false
                }
                let flow: Bool
                let anchor: String?
                let rawTag: String?
                if isSequence {
                    flow = event.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
                    anchor = Self.string(event.data.sequence_start.anchor)
                    rawTag = Self.string(event.data.sequence_start.tag)
                } else {
                    flow = event.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                    anchor = Self.string(event.data.mapping_start.anchor)
                    rawTag = Self.string(event.data.mapping_start.tag)
                }
                let tag = checkedTag(rawTag, event: event, bag: &bag)
                let id = append(YAMLNode(kind: isSequence ? .sequence : .mapping, style: flow ? .flow : .block,
                                         span: span(event), value: "", tag: tag))
                if let anchor { openAnchors.insert(anchor) }
                stack.append(Frame(node: id, pendingStart: pending.count, anchor: anchor, weight: 1, text: 0))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let frame = stack.popLast() else { return true }
                let id = frame.node
                let start = document.children.count
                // A sequence's items, and a mapping's pairs when no key repeats and none is a
                // `<<` merge (nearly always), go from `pending` to the document as they are:
                // no array per collection (two allocations each, 200,000 collections in
                // 100,000 steps).
                if event.type == YAML_MAPPING_END_EVENT, needsRewrite(pending[frame.pendingStart...]) {
                    document.children.append(contentsOf: mergedAndChecked(Array(pending[frame.pendingStart...]), bag: &bag))
                } else {
                    document.children.append(contentsOf: pending[frame.pendingStart...])
                }
                pending.removeSubrange(frame.pendingStart...)
                document.nodes[Int(id)].childStart = Int32(start)
                document.nodes[Int(id)].childCount = Int32(document.children.count - start)
                document.nodes[Int(id)].span.end = location(event.end_mark)
                if let anchor = frame.anchor {
                    openAnchors.remove(anchor)
                    anchors[anchor] = (id, frame.weight, frame.text)
                }
                return attach(id, weight: frame.weight, text: frame.text, event: event, bag: &bag)
            case YAML_ALIAS_EVENT:
                let name = Self.string(event.data.alias.anchor) ?? ""
                if openAnchors.contains(name) {
                    bag.error(.aliasLimit, "alias `*\(name)` refers to a node that contains it",
                              at: span(event), help: "a recursive alias would expand forever")
                    return false
                }
                guard let target = anchors[name] else {
                    // The alias spelt right, `*base` (replacing backticks in the help gave
                    // "did you mean `&base`&?"). The anchors in file order (node ids grow
                    // with it): the first on a tie, as for every suggestion; a dictionary's
                    // key order changes from run to run, and so did the help.
                    let known = anchors.sorted { $0.value.node < $1.value.node }.map(\.key)
                    bag.error(.yamlSyntax, "unknown alias `*\(name)`", at: span(event),
                              help: Suggestion.closest(to: name, in: known).map { "did you mean `*\($0)`?" })
                    return false
                }
                aliasExpansion += target.weight
                if aliasExpansion > limits.maxAliasExpansion {
                    bag.error(.aliasLimit, "aliases expand to more than \(limits.maxAliasExpansion) nodes",
                              at: span(event), help: "this looks like an alias bomb (\"billion laughs\")")
                    return false
                }
                aliasText += target.text
                if aliasText > limits.maxAliasText {
                    let limit = limits.maxAliasText
                    let shown = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
                    bag.error(.aliasLimit, "aliases expand to more than \(shown) of text",
                              at: span(event), help: "this looks like an alias bomb (\"billion laughs\")")
                    return false
                }
                // A copy of the node (one node, not its subtree) marks the use site.
                let copy = append(document[target.node])
                document.aliasSites[copy] = span(event)
                return attach(copy, weight: target.weight, text: target.text, event: event, bag: &bag)
            default:
                break
            }
            return true
        }

        mutating func append(_ node: YAMLNode) -> Int32 {
            document.nodes.append(node)
            return Int32(document.nodes.count - 1)
        }

        /// Adds a finished node to the open collection, or makes it the root.
        mutating func attach(_ id: Int32, weight: Int, text: Int, event: yaml_event_t, bag: inout DiagnosticBag) -> Bool {
            if stack.isEmpty {
                if document.root == nil { document.root = id }
                return true
            }
            pending.append(id)
            stack[stack.count - 1].weight += weight
            stack[stack.count - 1].text += text
            return true
        }

        /// A tagged scalar's value, style and tag as the document keeps them: the core
        /// schema's tags are kept (`checkedTag` reports the others), and a plain value that
        /// is an unquoted negation (`if: !vars.deploy`, `if: !cancelled()`), which YAML
        /// reads as a tag on an empty value, is said so, with the quoting that means it,
        /// and read as that text: the `found null` such a value also got (its key's type
        /// check) said nothing of the cause.
        @inline(never)
        mutating func taggedScalar(_ rawTag: UnsafeMutablePointer<yaml_char_t>?, value: String, style: YAMLNode.Style,
                                   event: yaml_event_t, bag: inout DiagnosticBag) -> YAMLNode {
            let tag = Self.string(rawTag)
            let span = span(event)
            if style == .plain, let tag, let meant = Self.textMeant(tag: tag, value: value) {
                document.unsupportedTags.append(tag)
                bag.error(.unsupportedTag, "unsupported YAML tag `\(tag)`: a plain value starting with `!` is a YAML tag",
                          at: span, help: "quote it to mean the text: `\"\(meant)\"`")
                return YAMLNode(kind: .scalar, style: .doubleQuoted, span: span, value: meant, tag: nil)
            }
            return YAMLNode(kind: .scalar, style: style, span: span, value: value, tag: checkedTag(tag, event: event, bag: &bag))
        }

        /// The text a plain scalar with a local tag was most likely meant to be, if it looks
        /// like an expression that starts with `!` rather than a tag put on a value: the
        /// tag alone (`!vars.deploy`, `!cancelled()`), or one that holds a `.` or `(`
        /// (`!vars.a && vars.b`). A tag such as `!env NAME` (another tool's) is left to
        /// `checkedTag`, whose help says to remove it.
        static func textMeant(tag: String, value: String) -> String? {
            guard tag.hasPrefix("!"), !tag.hasPrefix("!!"), tag.count > 1 else { return nil }
            let name = tag.dropFirst()
            guard value.isEmpty || name.contains(".") || name.contains("(") else { return nil }
            return value.isEmpty ? tag : tag + " " + value
        }

        /// Accepts the core schema's tags; anything else is reported (and kept in
        /// `document.unsupportedTags`).
        mutating func checkedTag(_ tag: String?, event: yaml_event_t, bag: inout DiagnosticBag) -> String? {
            guard let tag, tag != "!" else { return nil }
            let core = ["str", "int", "float", "bool", "null", "seq", "map"].map { "tag:yaml.org,2002:" + $0 }
            if core.contains(tag) { return tag }
            document.unsupportedTags.append(tag)
            bag.error(.unsupportedTag, "unsupported YAML tag `\(tag)`",
                      at: SourceSpan.point(location(event.start_mark)), help: "flow reads plain YAML; remove the tag")
            return nil
        }

        /// Applies `<<` merge keys and reports duplicate keys at their second occurrence.
        /// Whether a mapping's keys and values need `mergedAndChecked`: a key that repeats
        /// (reported there) or a `<<` merge. Checked in place, without copying a node.
        func needsRewrite(_ children: ArraySlice<Int32>) -> Bool {
            // Big mappings: `mergedAndChecked` indexes their keys instead of this scan.
            if children.count > 64 { return true }
            let nodes = document.nodes
            var i = children.startIndex
            while i + 1 < children.endIndex {
                let key = Int(children[i])
                if nodes[key].kind == .scalar {
                    if nodes[key].style == .plain, nodes[key].value == "<<" { return true }
                    var j = children.startIndex
                    while j < i {
                        let other = Int(children[j])
                        if nodes[other].kind == .scalar, nodes[other].value == nodes[key].value { return true }
                        j += 2
                    }
                }
                i += 2
            }
            return false
        }

        mutating func mergedAndChecked(_ children: [Int32], bag: inout DiagnosticBag) -> [Int32] {
            var result: [Int32] = []
            result.reserveCapacity(children.count)
            // Most mappings have a handful of keys: scan linearly; index only big ones.
            if children.count <= 32, !children.enumerated().contains(where: { $0.offset % 2 == 0 && document[$0.element].kind == .scalar && document[$0.element].style == .plain && document[$0.element].value == "<<" }) {
                var i = 0
                while i + 1 < children.count {
                    let key = children[i]
                    let keyNode = document[key]
                    var duplicateOf: Int32?
                    if keyNode.kind == .scalar {
                        var j = 0
                        while j < i {
                            let other = document[children[j]]
                            if other.kind == .scalar, other.value == keyNode.value { duplicateOf = children[j]; break }
                            j += 2
                        }
                    }
                    if let first = duplicateOf {
                        bag.error(.duplicateKey, "duplicate key `\(keyNode.value)`", at: keyNode.span,
                                  help: "remove one of the two",
                                  notes: [.init("first `\(keyNode.value)` is here", at: document[first].span)])
                    } else {
                        result.append(key); result.append(children[i + 1])
                    }
                    i += 2
                }
                return result
            }
            var seen: [String: Int32] = [:]
            var merges: [Int32] = []
            var firstMerge: Int32?
            var i = 0
            while i + 1 < children.count {
                let key = children[i], value = children[i + 1]
                i += 2
                let keyNode = document[key]
                guard keyNode.kind == .scalar else {
                    result.append(key); result.append(value)
                    continue
                }
                if keyNode.style == .plain, keyNode.value == "<<" {
                    // `<<` is a key like any other: twice in one mapping is a duplicate (merge
                    // several mappings with `<<: [*a, *b]`).
                    if let firstMerge {
                        bag.error(.duplicateKey, "duplicate key `<<`", at: keyNode.span,
                                  help: "merge several mappings with one `<<: [*a, *b]`",
                                  notes: [.init("first `<<` is here", at: document[firstMerge].span)])
                        continue
                    }
                    firstMerge = key
                    merges.append(value)
                    continue
                }
                if let first = seen[keyNode.value] {
                    bag.error(.duplicateKey, "duplicate key `\(keyNode.value)`", at: keyNode.span,
                              help: "remove one of the two",
                              notes: [.init("first `\(keyNode.value)` is here", at: document[first].span)])
                    continue
                }
                seen[keyNode.value] = key
                result.append(key); result.append(value)
            }
            // Merged entries never override keys written in the mapping itself (YAML merge rules).
            for merge in merges {
                let sources = document[merge].kind == .sequence ? Array(document.children(of: merge)) : [merge]
                for source in sources {
                    let node = document[source]
                    guard node.kind == .mapping else {
                        bag.error(.wrongType, "a `<<` merge takes a mapping or a list of mappings, found \(node.typeDescription)",
                                  at: node.span)
                        continue
                    }
                    // Keys merged from an alias are copies marked with it, so a problem with
                    // one (a duplicate step name) can point at this use of the alias.
                    let site = document.aliasSites[source]
                    var j = 0
                    let items = Array(document.children(of: source))
                    while j + 1 < items.count {
                        var key = items[j]
                        let value = items[j + 1]
                        j += 2
                        let name = document[key].value
                        if seen[name] == nil {
                            seen[name] = key
                            if let site {
                                key = append(document[key])
                                document.aliasSites[key] = site
                                document.mergeSites[key] = site
                            }
                            result.append(key); result.append(value)
                        }
                    }
                }
            }
            return result
        }

        func reportSyntaxError(_ parser: yaml_parser_t, bag: inout DiagnosticBag) {
            let problem = Self.string(parser.problem.map { UnsafeMutablePointer(mutating: UnsafeRawPointer($0).assumingMemoryBound(to: yaml_char_t.self)) }) ?? "invalid YAML"
            let context = Self.string(parser.context.map { UnsafeMutablePointer(mutating: UnsafeRawPointer($0).assumingMemoryBound(to: yaml_char_t.self)) })
            var location = location(parser.problem_mark)
            // libyaml's reader (bad bytes, control characters) gives a byte offset, not a
            // mark: without this the error showed at 1:1.
            if parser.error == YAML_READER_ERROR {
                // Its offset does not count a byte order mark.
                let bom = file.bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
                location = file.location(ofByte: Int(parser.problem_offset) + bom)
            }
            // At the end of the input libyaml points past the last line; the construct left
            // open (the `[`, the quote) is the useful place.
            var endsEarly = false
            if location.line > max(file.lineCount, 1) {
                location = self.location(parser.context_mark)
                if location.line > max(file.lineCount, 1) {
                    // Nothing left open to point at (`- shell: [` as the last line): the
                    // place just past the last thing written is where more was expected,
                    // not column 1 of the last line.
                    location = endOfText()
                    endsEarly = true
                }
            }
            // Tabs are the most common cause; say so plainly at the tab itself.
            let lineBytes = file.lineBytes(location.line)
            if let tabIndex = Self.leadingTab(lineBytes) {
                location.column = tabIndex + 1
                bag.error(.tabIndentation, "tab character in indentation",
                          at: SourceSpan(line: location.line, column: location.column, length: 1),
                          help: "YAML indentation must use spaces")
                return
            }
            var message = "invalid YAML: \(problem)"
            if let context { message += " \(context)" }
            var help: String? = endsEarly ? "the file ends here: something before it is left unfinished" : nil
            var length = 1
            let indent = Self.indentation(lineBytes)
            let above = Self.indentationAbove(location.line, in: file)
            if problem.contains("mapping values are not allowed"),
               let key = Self.keyBeforeColon(lineBytes, column: location.column), let above, indent > above {
                // `key: value` indented deeper than the line above: YAML reads the line as more
                // of that line's plain value, and only stumbles at the colon. The libyaml
                // message (and the quoting hint) would send the user after the wrong thing.
                location.column = indent + 1
                length = key.count
                help = "`\(key)` is indented \(Self.spaces(indent)), the line above \(above): YAML reads it as more of "
                    + "that line's value; start the keys of one mapping in the same column"
            } else if problem.contains("mapping values are not allowed") {
                help = "quote the value if it contains `: `"
            } else if let context, context.hasSuffix("scanning an anchor") || context.hasSuffix("scanning an alias") {
                // `if: !vars.a && vars.b`: the `!` makes `!vars.a` a tag, and the value after it
                // then starts with `&`, an anchor (`&&` names none). libyaml says only that it
                // found no anchor name.
                let tagged = Self.contains(lineBytes, Array(": !".utf8)) || Self.contains(lineBytes, Array("- !".utf8))
                help = tagged ? "`!` at the start of a value makes a YAML tag, and `&` or `*` after it an anchor or alias: "
                    + "quote the whole value" : "`&` and `*` at the start of a value make a YAML anchor or alias: quote the value"
            } else if problem.hasPrefix("did not find expected"), let above, indent != above, location.column == indent + 1 {
                // A line that lines up with no enclosing mapping or list (libyaml says only
                // what token it missed).
                help = "this line is indented \(Self.spaces(indent)), the line above \(above): the keys of one mapping, "
                    + "and the items of one list, start in the same column"
            } else if problem.contains("found character that cannot start any token"),
                      let offset = Self.byteOffset(ofColumn: location.column, in: lineBytes) {
                // YAML reserves `@` and `` ` `` (and `%` outside directives) at the start of a
                // plain value; libyaml's message does not say which character, nor what to do.
                switch lineBytes[offset] {
                case UInt8(ascii: "`"): help = "quote values that start with a backtick"
                case UInt8(ascii: "@"):
                    // make's and just's habit (`@echo hi`): quoting alone would run `@echo`.
                    help = "quote values that start with `@`; in a command, drop make's and just's `@`: "
                        + "it is not shell syntax"
                case UInt8(ascii: "%"): help = "quote values that start with `%`"
                default: break
                }
            }
            // `with: { env: ${{ vars.target }} }`: inside `{ … }` or `[ … ]` the `{` of an
            // unquoted `${{` ends the plain value, and libyaml then says "did not find
            // expected ',' or '}'" (or, after a `"` in the command, "end of stream while
            // scanning a quoted scalar") a few columns on, with a note that the `{` is not
            // closed, though it is. Point at the `${{` and say what to do.
            var inFlowExpression = false
            let opened = self.location(parser.context_mark)
            for line in Set([location.line, opened.line]).sorted() where line >= 1 && line <= file.lineCount {
                let bytes = file.lineBytes(line)
                if let offset = Self.unquotedExpressionInFlow(bytes) {
                    location = file.location(ofByte: bytes.startIndex + offset)
                    length = 3
                    help = "inside `{ … }` or `[ … ]`, a `{` ends an unquoted value: quote the value "
                        + "(`key: \"${{ … }}\"`, or single quotes around a command holding `\"`) or write the mapping in block style"
                    inFlowExpression = true
                    break
                }
            }
            // libyaml often notices an unclosed `[`, `{` or quote lines later, at whatever
            // came next: point at where it was opened too.
            var notes: [Diagnostic.Note] = []
            if let context, !inFlowExpression, opened != location, opened.line <= file.lineCount {
                let what: String? = context.hasSuffix("flow sequence") ? "the `[` opened here is not closed"
                    : context.hasSuffix("flow mapping") ? "the `{` opened here is not closed"
                    : context.hasSuffix("quoted scalar") ? "the quote opened here is not closed" : nil
                if let what { notes.append(.init(what, at: SourceSpan(line: opened.line, column: opened.column, length: 1))) }
            }
            bag.error(.yamlSyntax, message, at: SourceSpan(line: location.line, column: location.column, length: length), help: help,
                      notes: notes)
        }

        /// Whether `bytes` holds `needle` anywhere.
        static func contains(_ bytes: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
            guard !needle.isEmpty, bytes.count >= needle.count else { return false }
            var i = bytes.startIndex
            while i + needle.count <= bytes.endIndex {
                if bytes[i..<(i + needle.count)].elementsEqual(needle) { return true }
                i += 1
            }
            return false
        }

        /// The offset in `line` of the first `${{` that stands unquoted inside a flow
        /// collection (`{ … }`, `[ … ]`) opened on the same line, where YAML ends a plain
        /// value at its `{`; nil when there is none. A quote starts a quoted value only at
        /// the start of a value (`echo "x ${{ a }}"` is a plain value holding a `"`), as in YAML.
        static func unquotedExpressionInFlow(_ line: ArraySlice<UInt8>) -> Int? {
            let bytes = Array(line)
            var depth = 0
            var quote: UInt8? = nil
            var atValueStart = true
            var i = 0
            while i < bytes.count {
                let c = bytes[i]
                let next: UInt8? = i + 1 < bytes.count ? bytes[i + 1] : nil
                if let q = quote {
                    if q == UInt8(ascii: "\"") && c == UInt8(ascii: "\\") { i += 2; continue }
                    if c == q {
                        if q == UInt8(ascii: "'") && next == q { i += 2; continue }
                        quote = nil
                    }
                    i += 1
                    continue
                }
                switch c {
                case UInt8(ascii: " "), UInt8(ascii: "\t"):
                    break
                case UInt8(ascii: "#") where i == 0 || bytes[i - 1] == UInt8(ascii: " "):
                    return nil
                case UInt8(ascii: "\"") where atValueStart, UInt8(ascii: "'") where atValueStart:
                    quote = c
                    atValueStart = false
                case UInt8(ascii: "$") where depth > 0 && next == UInt8(ascii: "{") && i + 2 < bytes.count && bytes[i + 2] == UInt8(ascii: "{"):
                    return i
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    atValueStart = true
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth = max(depth - 1, 0)
                    atValueStart = false
                case UInt8(ascii: ","):
                    atValueStart = depth > 0
                case UInt8(ascii: ":") where next == nil || next == UInt8(ascii: " "):
                    atValueStart = true
                case UInt8(ascii: "-") where atValueStart && (next == nil || next == UInt8(ascii: " ")):
                    break
                default:
                    atValueStart = false
                }
                i += 1
            }
            return nil
        }

        /// The index in `line` of the first byte of the character at `column` (1-based, in
        /// Unicode scalars as libyaml counts columns), or nil past the line's end: a column is
        /// a byte offset only on an ASCII line.
        static func byteOffset(ofColumn column: Int, in line: ArraySlice<UInt8>) -> Int? {
            var scalars = 0
            for index in line.indices where line[index] & 0xC0 != 0x80 {
                scalars += 1
                if scalars == column { return index }
            }
            return nil
        }

        /// `1 space`, `4 spaces`.
        static func spaces(_ count: Int) -> String {
            count == 1 ? "1 space" : "\(count) spaces"
        }

        /// How many spaces a line starts with.
        static func indentation(_ line: ArraySlice<UInt8>) -> Int {
            line.prefix { $0 == UInt8(ascii: " ") }.count
        }

        /// The indentation of the nearest line above `line` that holds more than spaces and
        /// a comment (counting a list item's `- ` as indentation: its keys start after it),
        /// or nil at the top of the file.
        static func indentationAbove(_ line: Int, in file: SourceFile) -> Int? {
            var number = line - 1
            while number >= 1 {
                let bytes = file.lineBytes(number)
                var indent = indentation(bytes)
                let rest = bytes.dropFirst(indent)
                if let first = rest.first, first != UInt8(ascii: "#"), first != UInt8(ascii: "\r") {
                    // `  - name: a`: the keys of that item's mapping start after the `- `.
                    var items = rest[...]
                    while items.starts(with: [UInt8(ascii: "-"), UInt8(ascii: " ")]) {
                        let spaces = indentation(items.dropFirst())
                        indent += 1 + spaces
                        items = items.dropFirst(1 + spaces)
                    }
                    return indent
                }
                number -= 1
            }
            return nil
        }

        /// The key a line starts with when the colon at `column` ends it: the line's text
        /// from its indentation to that colon, a plain word without spaces (`timeout`).
        static func keyBeforeColon(_ line: ArraySlice<UInt8>, column: Int) -> String? {
            let start = line.startIndex + indentation(line)
            guard let colon = byteOffset(ofColumn: column, in: line), colon > start,
                  line[colon] == UInt8(ascii: ":") else { return nil }
            let key = line[start..<colon]
            let plain = key.allSatisfy { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != UInt8(ascii: "#") }
            guard plain, key.first != UInt8(ascii: "-") else { return nil }
            return String(decoding: key, as: UTF8.self)
        }

        /// The column index of a tab in the line's leading whitespace, if any.
        static func leadingTab(_ line: ArraySlice<UInt8>) -> Int? {
            var index = 0
            for byte in line {
                if byte == UInt8(ascii: "\t") { return index }
                if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "-") { return nil }
                index += 1
            }
            return nil
        }
    }
}
