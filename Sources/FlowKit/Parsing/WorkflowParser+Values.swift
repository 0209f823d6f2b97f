/// Typed reading of scalar values, each reporting a `wrong-type` or value diagnostic.
extension WorkflowParser {
    /// A mapping key as a located string; non-scalar keys are reported.
    mutating func keyName(_ id: Int32) -> Located<String>? {
        let node = document[id]
        guard node.kind == .scalar else {
            bag.error(.wrongType, "keys must be strings, found \(node.typeDescription)", at: node.span)
            return nil
        }
        return Located(node.value, keySpan(node))
    }

    /// The span of a key's text (libyaml's end mark for plain keys is exact).
    func keySpan(_ node: YAMLNode) -> SourceSpan {
        if node.span.start.line == node.span.end.line { return node.span }
        return firstLineSpan(node, length: node.value.unicodeScalars.count)
    }

    /// The span to underline for a scalar value: its first line.
    func valueSpan(_ node: YAMLNode) -> SourceSpan {
        if node.span.start.line == node.span.end.line, node.span.end.column > node.span.start.column { return node.span }
        return firstLineSpan(node, length: max(1, min(node.value.unicodeScalars.count, 80)))
    }

    /// `length` scalars from the node's start, cut at the end of its first line. The value's
    /// length is not its length in the source once it spans lines (`name: ${{` and the
    /// rest below, a block scalar's `|` header): uncut, the end pointed past the line's
    /// end, at text that is not there, in `--format json` and `github`.
    private func firstLineSpan(_ node: YAMLNode, length: Int) -> SourceSpan {
        let start = node.span.start
        let room = file.lineText(start.line).unicodeScalars.count + 1 - start.column
        return SourceSpan(line: start.line, column: start.column, length: min(length, max(room, 1)))
    }

    mutating func wrongType(_ id: Int32, expected: String, what: String, help: String? = nil) {
        let node = document[id]
        bag.error(.wrongType, "\(what) must be \(expected), found \(node.typeDescription)", at: valueSpan(node), help: help)
    }

    mutating func mapping(_ id: Int32, _ what: String) -> Bool {
        guard document[id].kind == .mapping else {
            wrongType(id, expected: "a mapping", what: what)
            return false
        }
        return true
    }

    /// A string in the YAML 1.2 core schema, for code and names (commands, conditions,
    /// step and action names, paths, tags, output keys, shells): there a number or a
    /// boolean (`shell: 5`, `tags: [1]`) is more likely a slip than meant, and is
    /// `wrong-type`, as `flow schema` says; quoting says it is meant.
    mutating func string(_ id: Int32, _ what: String, expected: String = "a string") -> Located<String>? {
        let node = document[id]
        guard node.isString else {
            let typed = node.kind == .scalar && !node.isNull
            wrongType(id, expected: expected, what: what, help: typed ? "quote it if it is meant as text: `\"\(node.value)\"`" : nil)
            return nil
        }
        return Located(node.value, valueSpan(node))
    }

    /// Any non-null scalar, as text as written, for values that are data (messages,
    /// descriptions, `stdin`, `env`, `vars`, `with`, a param's `default` and `allowed`):
    /// `PORT: 8080` or `print: 42` means the text, as in GitHub Actions.
    mutating func text(_ id: Int32, _ what: String) -> Located<String>? {
        let node = document[id]
        guard node.kind == .scalar, !node.isNull else {
            wrongType(id, expected: "a string", what: what)
            return nil
        }
        return Located(node.value, valueSpan(node))
    }

    /// A `description` (of the workflow, a step, an action or a param): text as written.
    /// GitHub Actions evaluates `${{ }}` in a step's `name`, Ansible templates a task's, so
    /// `description: "Deploy ${{ params.env }}"` is a likely habit; flow shows it as
    /// written, and a param read only there was called unused with the help to write
    /// exactly that. A warning says so.
    mutating func description(_ id: Int32) -> Located<String>? {
        guard let text = text(id, "`description`") else { return nil }
        if text.value.contains("${{") {
            bag.warning(.unexpandedExpression, "a `description` is literal: its `${{ … }}` is not expanded", at: text.span,
                        help: "it is shown as written; `flow plan` shows each step's command and message with the values resolved")
        }
        return text
    }

    /// YAML 1.1's words for booleans that a reader may mean as one: strings in YAML 1.2, so
    /// where flow wants a boolean (or an `if`) they get a help that says so; the schema
    /// rejects them there too.
    static let yaml11Booleans = ["yes", "no", "on", "off", "Yes", "No", "On", "Off"]

    mutating func bool(_ id: Int32, _ what: String) -> Located<Bool>? {
        let node = document[id]
        guard let value = node.boolValue else {
            if node.kind == .scalar, Self.yaml11Booleans.contains(node.value) {
                bag.error(.wrongType, "\(what) must be `true` or `false`, found `\(node.value)`", at: valueSpan(node),
                          help: "YAML 1.2 spells booleans `true` and `false`")
            } else if node.isString, node.value.hasExpressionMarker {
                // GitHub Actions takes `continue-on-error: ${{ … }}`; "found a string"
                // would not say why this one is refused.
                expressionNotAllowed(id, what, expected: "`true` or `false`")
            } else {
                wrongType(id, expected: "`true` or `false`", what: what)
            }
            return nil
        }
        return Located(value, valueSpan(node))
    }

    /// A whole number: an integer, or a float with a whole value (`3.0`, `1e3`), as JSON
    /// Schema's `integer` (and so `flow schema`) takes it.
    mutating func int(_ id: Int32, _ what: String) -> Located<Int>? {
        let node = document[id]
        guard let value = node.intValue ?? node.doubleValue.flatMap({ Int(exactly: $0) }) else {
            // A number, but not one that fits: say which way (not "found a number").
            if let number = node.doubleValue {
                if number.isFinite, number == number.rounded() {
                    bag.error(.invalidValue, "\(what) is too large, found \(node.value)", at: valueSpan(node))
                } else {
                    bag.error(.wrongType, "\(what) must be a whole number, found \(node.value)", at: valueSpan(node))
                }
                return nil
            }
            if node.isString, node.value.hasExpressionMarker {
                expressionNotAllowed(id, what, expected: "a whole number")
                return nil
            }
            wrongType(id, expected: "a whole number", what: what)
            return nil
        }
        return Located(value, valueSpan(node))
    }

    /// An option flow reads before anything runs (a boolean, a count), written as an
    /// expression: as `timeout` does, say that expressions are not taken there rather than
    /// that a string was found.
    mutating func expressionNotAllowed(_ id: Int32, _ what: String, expected: String) {
        bag.error(.wrongType, "\(what) must be \(expected); expressions are not allowed here", at: valueSpan(document[id]),
                  help: "flow reads it before the run starts: write the value itself")
        // The vars it names are meant as used: "never used, use it as `${{ vars.x }}`"
        // beside this error would contradict what the user wrote.
        noteNames(inUnread: document[id].value)
    }

    /// A duration: `250ms`, `1.5s`, `1h30m`, or a number of seconds.
    mutating func duration(_ id: Int32, _ what: String) -> Located<Duration>? {
        let node = document[id]
        // A number is seconds; a boolean is no duration at all (not a bad one).
        guard node.kind == .scalar, !node.isNull, node.boolValue == nil, node.tag != YAMLNode.boolTag else {
            wrongType(id, expected: "a duration", what: what)
            return nil
        }
        if node.value.hasExpressionMarker {
            bag.error(.invalidDuration, "\(what) must be a fixed duration; expressions are not allowed here", at: valueSpan(node),
                      help: "write e.g. `30s`, `1m30s`, `250ms`")
            noteNames(inUnread: node.value)
            return nil
        }
        switch Duration.parseChecked(node.value) {
        case .success(let duration):
            return Located(duration, valueSpan(node))
        case .failure(.empty):
            bag.error(.invalidDuration, "\(what) is empty; expected a duration such as `5s`", at: valueSpan(node),
                      help: "write e.g. `30s`, `1m30s`, `250ms` or a number of seconds")
        case .failure(.tooLong):
            bag.error(.invalidDuration, "duration `\(node.value)` for \(what) is longer than the maximum, \(Duration.maximumText)",
                      at: valueSpan(node), help: "the longest duration is \(Duration.maximumText), about 114 years")
        case .failure(.negative):
            bag.error(.invalidDuration, "invalid duration `\(node.value)` for \(what)", at: valueSpan(node), help: "durations cannot be negative")
        case .failure(.malformed):
            bag.error(.invalidDuration, "invalid duration `\(node.value)` for \(what)", at: valueSpan(node),
                      help: Duration.suggestion(for: node.value).map { "did you mean `\($0)`?" }
                          ?? "write e.g. `30s`, `1m30s`, `250ms` or a number of seconds")
        }
        return nil
    }

    mutating func positiveDuration(_ id: Int32, _ what: String) -> Located<Duration>? {
        guard let duration = duration(id, what) else { return nil }
        if duration.value <= .zero {
            bag.error(.invalidDuration, "\(what) must be longer than zero", at: duration.span)
            return nil
        }
        return duration
    }

    /// Whether `text`, the value of node `id`, is free of NUL characters; reports the first.
    /// A command, a working directory, an environment value or a shell's path reaches the
    /// kernel as a C string, which ends at the first NUL: `"echo kept\0; echo dropped"`
    /// would run `echo kept` and drop the rest without a word.
    mutating func isFreeOfNUL(_ id: Int32, _ text: Located<String>, _ what: String) -> Bool {
        // A byte scan first: almost every value has no NUL.
        guard text.value.containsNUL else { return true }
        let offset = text.value.unicodeScalars.prefix { $0 != "\0" }.count
        let locator = ScalarLocator(node: document[id], file: file)
        let start = locator.location(ofValueOffset: offset)
        let end = locator.location(ofValueOffset: offset + 1)
        let span = end.line == start.line && end.column > start.column
            ? SourceSpan(start: start, end: end) : SourceSpan(line: start.line, column: start.column, length: 1)
        bag.error(.invalidValue, "\(what) contains a NUL character", at: span,
                  help: "the system reads it as a C string, which ends at a NUL: the rest would be lost")
        return false
    }

    /// A working directory (`dir`, `defaults.dir`): a non-empty string without NUL. An empty
    /// one names no directory, and every run of the step would fail on it.
    mutating func directory(_ id: Int32) -> Template? {
        guard let text = string(id, "`dir`"), isFreeOfNUL(id, text, "`dir`") else { return nil }
        if text.value.isEmpty {
            bag.error(.invalidValue, "`dir` is empty", at: text.span,
                      help: "name a directory, or remove `dir` to run in the current one")
            return nil
        }
        warnIfShellExpansion(id, text, of: "`dir`")
        return template(id, text)
    }

    /// The `$NAME`s that the program reading an `env` variable of this name expands itself,
    /// so that they are meant as written: the dynamic linker's `$ORIGIN`, `$LIB` and
    /// `$PLATFORM` in `LD_LIBRARY_PATH` (ld.so(8)), which `LD_LIBRARY_PATH: $ORIGIN/../lib`
    /// relies on.
    static func expandedByItsReader(_ name: String) -> Set<String> {
        name == "LD_LIBRARY_PATH" ? ["ORIGIN", "LIB", "PLATFORM"] : []
    }

    /// Whether an `env` variable of this name holds a path or a list of them (`PATH`,
    /// `PYTHONPATH`, `JAVA_HOME`, `BUILD_DIR`): where `$HOME/bin` is meant as a path, and
    /// never as the text. Other variables may hold a command another program runs through
    /// a shell (`GIT_SSH_COMMAND: ssh -i $HOME/.ssh/key`), whose `$` is meant as written.
    static func holdsPaths(_ name: String) -> Bool {
        name == "PATH" || name == "HOME" || name.hasSuffix("PATH") || name.hasSuffix("_HOME")
            || name.hasSuffix("_DIR") || name.hasSuffix("_ROOT")
    }

    /// Warns at the first shell variable (`$HOME`, `${HOME}`) or leading `~` in a value flow
    /// passes as written (`dir`, an `env` value of a variable that `holdsPaths`), outside
    /// `${{ … }}`: no shell expands it there (docs/workflow-format.md), so `dir: $HOME/src`
    /// named a directory called `$HOME`, and `PATH: "$HOME/bin:$PATH"` left the step
    /// finding no program. `what` names the value in the message.
    /// `ignoring`: names that another program expands in this value (see `expandedByItsReader`).
    mutating func warnIfShellExpansion(_ id: Int32, _ text: Located<String>, of what: String, ignoring: Set<String> = []) {
        guard text.value.utf8.contains(where: { $0 == UInt8(ascii: "$") || $0 == UInt8(ascii: "~") }),
              let found = Self.shellExpansion(in: text.value, ignoring: ignoring) else { return }
        let locator = ScalarLocator(node: document[id], file: file)
        let start = locator.location(ofValueOffset: found.offset)
        let end = locator.location(ofValueOffset: found.offset + found.written.unicodeScalars.count)
        let span = end.line == start.line && end.column > start.column ? SourceSpan(start: start, end: end) : text.span
        var flows = found.variable.map { "${{ env.\($0) }}" } ?? "${{ env.HOME }}"
        if let name = found.variable, let fallback = Self.shellDefault(found.written, name: name) {
            // `${WORKSPACE:-/tmp}`: the default goes with it, as `||` gives it (for a variable
            // unset or empty, as `:-` does).
            flows = "${{ env.\(name) || '\(fallback)' }}"
        }
        bag.warning(.unexpandedVariable, "`\(found.written)` in \(what) is passed as written: no shell expands it there",
                    at: span, help: "write `\(flows)`: outside a shell command flow expands only `${{ … }}`")
    }

    /// The default of `${NAME:-default}` as written, when it is plain text a quoted string
    /// of an expression can hold (no `$`, `'`, `}` or line break); nil otherwise.
    static func shellDefault(_ written: String, name: String) -> String? {
        let prefix = "${" + name + ":-"
        guard written.hasPrefix(prefix), written.hasSuffix("}") else { return nil }
        let fallback = written.dropFirst(prefix.count).dropLast()
        guard !fallback.contains(where: { "$'}\n\r".contains($0) }) else { return nil }
        return String(fallback)
    }

    /// The first `$NAME`, `${NAME}` (or `${NAME:-default}`) or `~` (at the start, or after
    /// a `:` of a path list, followed by `/`, `:` or the end) in `text` outside `${{ … }}`,
    /// not escaped as `$$` or `\$`: what was written, its offset in Unicode scalars, and the
    /// variable it names (nil for `~`). A variable named in `ignoring` is passed over.
    static func shellExpansion(in text: String, ignoring: Set<String> = []) -> (written: String, offset: Int, variable: String?)? {
        let scalars = Array(text.unicodeScalars)
        func isNameStart(_ c: Unicode.Scalar) -> Bool { c == "_" || (c.isASCII && c.properties.isAlphabetic) }
        func isName(_ c: Unicode.Scalar) -> Bool { isNameStart(c) || (c.isASCII && c.properties.numericType != nil) }
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c == "$" || c == "\\", i + 1 < scalars.count, scalars[i + 1] == "$" {
                // `$$HOME` (Make's and Compose's escape) or `\$HOME` (a shell's): whoever wrote
                // it meant a `$` as written, which is what flow passes.
                i += 2
                continue
            }
            if c == "$", i + 2 < scalars.count, scalars[i + 1] == "{", scalars[i + 2] == "{" {
                // flow's own `${{ … }}`: skipped to its end.
                var j = i + 3
                while j + 1 < scalars.count, !(scalars[j] == "}" && scalars[j + 1] == "}") { j += 1 }
                i = j + 2
                continue
            }
            if c == "$", i + 1 < scalars.count {
                if isNameStart(scalars[i + 1]) {
                    var j = i + 1
                    while j < scalars.count, isName(scalars[j]) { j += 1 }
                    let name = String(String.UnicodeScalarView(scalars[(i + 1)..<j]))
                    if ignoring.contains(name) { i = j; continue }
                    return ("$" + name, i, name)
                }
                if scalars[i + 1] == "{", i + 2 < scalars.count, isNameStart(scalars[i + 2]) {
                    var j = i + 2
                    while j < scalars.count, isName(scalars[j]) { j += 1 }
                    // `${HOME}`, or with an operator after the name (`${HOME:-/tmp}`,
                    // `${DIR%/}`): a shell's too, written up to its `}`.
                    if j < scalars.count, scalars[j] == "}" || ":-=?+#%/".unicodeScalars.contains(scalars[j]),
                       let close = scalars[j...].firstIndex(of: "}") {
                        let name = String(String.UnicodeScalarView(scalars[(i + 2)..<j]))
                        if ignoring.contains(name) { i = close + 1; continue }
                        return (String(String.UnicodeScalarView(scalars[i...close])), i, name)
                    }
                }
            }
            if c == "~", i == 0 || scalars[i - 1] == ":",
               i + 1 == scalars.count || scalars[i + 1] == "/" || scalars[i + 1] == ":" {
                return ("~", i, nil)
            }
            i += 1
        }
        return nil
    }

    /// A template from a scalar; expression syntax errors are reported here. `shellCommand`:
    /// the scalar is a shell step's command (see `ForeignPlaceholder.find`).
    mutating func template(_ id: Int32, _ text: Located<String>, shellCommand: Bool = false) -> Template {
        let node = document[id]
        // One byte scan for both. Most `{{` outside `${{` are the templates of programs a
        // command runs (`{{.State.Running}}`), not a single name: ruled out before the scalar
        // is located, which cost more than the rest of such a step's parse (validate of 100k
        // of them took twice as long as before placeholders were looked for).
        let (expressions, braces, makeReferences) = text.value.templateMarkers
        let placeholders = braces || makeReferences
        guard expressions || placeholders else { return Template(literal: text.value, span: text.span) }
        let locator = ScalarLocator(node: node, file: file)
        let locate = { locator.location(ofValueOffset: $0) }
        var template = Template(literal: text.value, span: text.span)
        if expressions {
            let failures: [ExpressionParser.Failure]
            (template, failures) = Template.parse(text.value, span: text.span, locate: locate)
            if !failures.isEmpty { noteNames(inUnread: text.value) }
            for failure in failures {
                bag.error(.expressionSyntax, failure.message, at: failure.span, help: failure.help)
            }
        }
        if placeholders {
            template.placeholders = ForeignPlaceholder.find(in: text.value, inShellCommand: shellCommand, locate: locate)
        }
        return template
    }

    /// A list of strings (a single string is accepted as a list of one).
    mutating func stringList(_ id: Int32, _ what: String) -> [Located<String>] {
        let node = document[id]
        if node.kind == .scalar, !node.isNull {
            return string(id, what, expected: "a string or a list of strings").map { [$0] } ?? []
        }
        guard node.kind == .sequence else {
            wrongType(id, expected: "a list of strings", what: what)
            return []
        }
        return document.children(of: id).compactMap { string($0, "an item of \(what)") }
    }

    /// Enters the merged text of mapping `id` (`<<: *x`) into the bag while the mapping is
    /// checked (see `DiagnosticBag.merges`); returns the mark `leaveMerges` takes. Costs
    /// nothing in the many files without merges.
    mutating func enterMerges(_ id: Int32) -> Int {
        let mark = bag.merges.count
        guard !document.mergeSites.isEmpty, document[id].kind == .mapping else { return mark }
        for (key, value) in document.pairs(id) {
            guard let site = document.mergeSites[key] else { continue }
            let merged = MergedText(region: SourceSpan(start: document[key].span.start, end: document[value].span.end), site: site)
            bag.merges.append(merged)
            enteredMerges.append(merged)
        }
        return mark
    }

    mutating func leaveMerges(_ mark: Int) {
        bag.merges.removeSubrange(mark...)
    }

    /// Reports an unknown key with a "did you mean" help: flow's name for another tool's
    /// key (`run` → `shell`) when `foreign` says where to look, else a close spelling. The
    /// foreign name first: it is the key exactly, where a spelling is a guess that may be
    /// a different key (`steps` on a `print` step is `sequential`, not `stream`).
    mutating func unknownKey(_ name: Located<String>, in place: String, candidates: [String],
                             foreign: ForeignKey.Place? = nil, stepKind: String? = nil) {
        let help = foreign.flatMap { ForeignKey.help(for: name.value, in: $0, stepKind: stepKind) }
            ?? Suggestion.help(for: name.value, in: candidates)
        bag.error(.unknownKey, "unknown key `\(name.value)` in \(place)", at: name.span, help: help)
    }

    /// `retry: 3` or `retry: {limit, delay, backoff, max_delay, exit_codes}`.
    mutating func retry(_ id: Int32) -> Located<RetryPolicy>? {
        let node = document[id]
        if node.kind == .scalar {
            guard let limit = int(id, "`retry`") else { return nil }
            guard limit.value >= 0 else {
                bag.error(.invalidValue, "`retry` must be 0 or more, found \(limit.value)", at: limit.span)
                return nil
            }
            return Located(RetryPolicy(limit: limit.value), limit.span)
        }
        guard mapping(id, "`retry`") else { return nil }
        let merges = enterMerges(id)
        defer { leaveMerges(merges) }
        var policy = RetryPolicy(limit: 0)
        var sawLimit = false
        let keys = ["limit", "delay", "backoff", "max_delay", "exit_codes"]
        for (key, value) in document.pairs(id) {
            guard let name = keyName(key) else { continue }
            switch name.value {
            case "limit":
                sawLimit = true
                if let limit = int(value, "`limit`") {
                    if limit.value < 0 {
                        bag.error(.invalidValue, "`limit` must be 0 or more, found \(limit.value)", at: limit.span)
                    } else {
                        policy.limit = limit.value
                    }
                }
            case "delay": if let d = duration(value, "`delay`") { policy.delay = d.value }
            case "max_delay": if let d = duration(value, "`max_delay`") { policy.maxDelay = d.value }
            case "backoff":
                let v = document[value]
                if let b = v.doubleValue, b.isFinite {
                    if b < 1 {
                        bag.error(.invalidValue, "`backoff` must be 1 or more, found \(v.value)", at: valueSpan(v))
                    } else {
                        policy.backoff = b
                    }
                } else if v.doubleValue != nil {
                    bag.error(.invalidValue, "`backoff` must be a finite number, found \(v.value)", at: valueSpan(v))
                } else if v.isString, v.value.hasExpressionMarker {
                    expressionNotAllowed(value, "`backoff`", expected: "a number")
                } else {
                    wrongType(value, expected: "a number", what: "`backoff`")
                }
            case "exit_codes":
                let v = document[value]
                guard v.kind == .sequence else {
                    // One code, or several in a string (`75, 76`), as a list reads them.
                    let words = v.kind == .scalar
                        ? v.value.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init) : []
                    let help = words.isEmpty ? nil : "write it as a list, even for one code: `exit_codes: [\(words.joined(separator: ", "))]`"
                    wrongType(value, expected: "a list of exit codes", what: "`exit_codes`", help: help)
                    continue
                }
                var codes: [Int32] = []
                for item in document.children(of: value) {
                    guard let code = int(item, "an exit code") else { continue }
                    guard (1...255).contains(code.value) else {
                        bag.error(.invalidValue, "exit code \(code.value) is out of range", at: code.span, help: "retryable exit codes are 1 to 255")
                        continue
                    }
                    codes.append(Int32(code.value))
                }
                policy.exitCodes = codes
            default:
                unknownKey(name, in: "`retry`", candidates: keys)
            }
        }
        if !sawLimit {
            bag.error(.missingKey, "`retry` needs a `limit`", at: SourceSpan(line: node.span.start.line, column: node.span.start.column, length: 1),
                      help: "e.g. `retry: {limit: 3, delay: 1s}`")
        }
        return Located(policy, SourceSpan(line: node.span.start.line, column: node.span.start.column, length: 1))
    }
}
