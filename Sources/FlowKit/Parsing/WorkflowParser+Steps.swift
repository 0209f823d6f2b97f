/// Parsing of step lists and steps.
extension WorkflowParser {
    /// A non-empty list of steps; `owner` names the list in messages, `whole` what to remove
    /// instead of filling it (nil where nothing can go: a workflow needs its `steps`), `kind`
    /// the key that owns it when its items may carry that key's options by mistake (see
    /// `listOwner`).
    mutating func stepList(_ id: Int32, owner: String, ownerSpan: SourceSpan, whole: String? = "the group",
                           kind: String? = nil) -> [Step] {
        let node = document[id]
        if node.isNull || (node.kind == .sequence && document.children(of: id).isEmpty) {
            bag.error(.emptyGroup, "\(owner) is empty", at: node.isNull ? ownerSpan : valueSpan(node),
                      help: whole.map { "add at least one step, or remove \($0)" } ?? "add at least one step")
            return []
        }
        guard node.kind == .sequence else {
            wrongType(id, expected: "a list of steps", what: owner, help: node.kind == .mapping ? stepMappingHelp(id) : nil)
            return []
        }
        let outerAlias = aliasContext
        defer { aliasContext = outerAlias }
        if let site = document.aliasSites[id] { aliasContext = site }
        var steps: [Step] = []
        steps.reserveCapacity(document.children(of: id).count)
        for item in document.children(of: id) {
            listOwner = kind.map { ($0, ownerSpan) }
            if let step = step(item) { steps.append(step) }
        }
        return steps
    }

    /// What a mapping where a list of steps belongs was probably meant as: `-print: hi`
    /// (no space after the dash reads as the key `-print`), or go-task's map of named tasks
    /// (`build:` with the step's keys under it).
    func stepMappingHelp(_ id: Int32) -> String {
        if let first = document.pairs(id).first, document[first.key].kind == .scalar {
            let key = document[first.key].value
            if key.hasPrefix("-") { return "a list item needs a space after its `-`: `- \(key.dropFirst()): …`" }
            if StepKind.isKeyword(key) { return "write each step as a list item: `- \(key): …`" }
        }
        return "write each step as a list item starting with `- `; a step's name goes in its `name:`"
    }

    /// `- print:hi` or `- delay:5s` is YAML for the string `print:hi` (a key needs a space
    /// after its colon), so a bare command that no one has, which runs and fails with 127.
    /// A warning, since the format says a bare string is a command; quoting it says so.
    mutating func warnIfKindKeyLostItsSpace(_ text: Located<String>) {
        guard let colon = text.value.firstIndex(of: ":") else { return }
        let key = String(text.value[..<colon])
        let rest = text.value[text.value.index(after: colon)...]
        guard StepKind.isKeyword(key), !rest.isEmpty, !rest.hasPrefix(" ") else { return }
        bag.warning(.colonWithoutSpace, "this step is the command `\(text.value)`: `\(key):` is a key only with a space after it",
                    at: text.span, help: "write `\(key): \(rest)`, or quote the command if it is one")
    }

    /// A command whose first line is another language's `#!` line (a just recipe's
    /// `#!/usr/bin/env python3`, a script pasted whole): flow runs every command with the
    /// step's shell, to which that line is a comment, so the script's lines run as shell
    /// commands. A shell's own `#!` (`#!/bin/bash`) is left alone: its lines are shell.
    /// Returns the shell a `#!` first line names, when it is one flow supports (`bash`),
    /// with the line's span: `ShellStep.shebang`, which the validator compares with the
    /// step's shell.
    mutating func warnIfForeignShebang(_ id: Int32, _ text: Located<String>) -> Located<String>? {
        guard text.value.hasPrefix("#!") else { return nil }
        // `isNewline`: a `\r\n` is one Character, neither `\r` nor `\n`.
        let line = text.value.prefix { !$0.isNewline }
        // `#!/usr/bin/env -S python3 -u`: the program is the first word after env's options.
        var words = line.dropFirst(2).split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if let first = words.first, first.split(separator: "/").last == "env" {
            words = Array(words.dropFirst().drop { $0.hasPrefix("-") })
        }
        guard let program = words.first.flatMap({ $0.split(separator: "/").last.map(String.init) }) else { return nil }
        let locator = ScalarLocator(node: document[id], file: file)
        let start = locator.location(ofValueOffset: 0)
        let end = locator.location(ofValueOffset: line.unicodeScalars.count)
        let span = end.line == start.line && end.column > start.column ? SourceSpan(start: start, end: end) : text.span
        if ShellProgram.supportedNames.contains(program) { return Located(program, span) }
        bag.warning(.foreignShebang, "`\(line)` is a comment here: flow runs the command with the step's shell, not `\(program)`",
                    at: span, help: "feed the script to it: `\(program) - <<'EOF'` before it and `EOF` after it (or save it as a file and run that)")
        return nil
    }

    /// A step's `tags`, each one that `--tags` and `--skip-tags` can name: they split their
    /// value on commas and drop the spaces around each name, so a tag with a comma
    /// (`tags: lint, unit` is the one tag `lint, unit`), with spaces around it, or empty
    /// could never be selected, and `--tags lint` was refused as an unknown tag.
    mutating func tags(_ id: Int32) -> [Located<String>] {
        let tags = stringList(id, "`tags`")
        // As `--tags` trims: spaces only.
        func trimmed(_ text: Substring) -> Substring {
            var text = text
            while text.first == " " { text.removeFirst() }
            while text.last == " " { text.removeLast() }
            return text
        }
        for tag in tags {
            if tag.value.contains(",") {
                let names = tag.value.split(separator: ",").map(trimmed).filter { !$0.isEmpty }
                bag.error(.invalidValue, "the tag `\(tag.value)` holds a comma, which `--tags` splits on", at: tag.span,
                          help: "give one tag per item of a list: `tags: [\(names.joined(separator: ", "))]`")
            } else if tag.value.allSatisfy({ $0 == " " }) {
                bag.error(.invalidValue, "a tag is empty", at: tag.span, help: "remove it, or name the tag")
            } else if tag.value.hasPrefix(" ") || tag.value.hasSuffix(" ") {
                bag.error(.invalidValue, "the tag `\(tag.value)` has spaces around it, which `--tags` drops", at: tag.span,
                          help: "write `\(trimmed(tag.value[...]))`")
            }
        }
        return tags
    }

    /// One step: a mapping, or a bare string as shorthand for a shell step.
    mutating func step(_ id: Int32) -> Step? {
        let node = document[id]
        // Only this step is the item of that list: lists and single steps inside it set
        // their own (or none).
        let owner = listOwner
        listOwner = nil
        let outerAlias = aliasContext
        defer { aliasContext = outerAlias }
        if let site = document.aliasSites[id] { aliasContext = site }
        if node.kind == .scalar {
            // An empty item (a `!!null`-tagged one is no slip: it falls to the next check).
            guard !node.isNull || node.tag != nil else {
                bag.error(.wrongType, "a step must be a mapping or a command string, found null", at: valueSpan(node),
                          help: "remove the empty `-` item")
                return nil
            }
            // Only a string is shorthand for a shell step (as the schema says): `- 5` or
            // `- true` is more likely a slip than a command named `5`; quoting says it is not.
            guard node.isString else {
                bag.error(.wrongType, "a step must be a mapping or a command string, found \(node.typeDescription)", at: valueSpan(node),
                          help: "quote it if it is a command: `- \"\(node.value)\"`")
                return nil
            }
            let text = Located(node.value, valueSpan(node))
            if text.value.isBlank {
                bag.error(.invalidValue, "a step has an empty command", at: text.span, help: "remove the item, or write the command")
                return nil
            }
            guard isFreeOfNUL(id, text, "the command") else { return nil }
            if node.isPlainScalar { warnIfKindKeyLostItsSpace(text) }
            var shell = ShellStep(command: template(id, text, shellCommand: true))
            if let shebang = warnIfForeignShebang(id, text) { shell.shebang = shebang }
            return Step(kind: .shell(shell), kindSpan: text.span, span: node.span)
        }
        guard node.kind == .mapping else {
            wrongType(id, expected: "a mapping or a command string", what: "a step")
            noteUnread(id)
            return nil
        }
        let pairs = document.pairs(id)
        let firstEntered = enteredMerges.count
        let merges = enterMerges(id)
        defer { leaveMerges(merges) }
        // Find the kind key first: which options are valid depends on it. `shell` is also a
        // group option (the shell program), so on a group it is not a second kind key.
        var kindKey: (name: Located<String>, value: Int32)?
        var unknownLooksLikeKind = false
        // Two passes over the pairs rather than a filtered copy of them: this runs once per
        // step, and the copy's allocation and release were a tenth of it.
        let hasGroupKind = pairs.contains { document[$0.key].kind == .scalar && StepKind.isGroup(document[$0.key].value) }
        for (key, value) in pairs {
            let keyNode = document[key]
            guard keyNode.kind == .scalar, StepKind.isKeyword(keyNode.value) else { continue }
            let name = Located(keyNode.value, keySpan(keyNode))
            if name.value == "shell", hasGroupKind { continue }
            if let first = kindKey {
                bag.error(.multipleKinds, "a step has one kind, but this one has `\(first.name.value)` and `\(name.value)`",
                          at: name.span, help: "split it into two steps",
                          notes: [.init("`\(first.name.value)` is here", at: first.name.span)])
            } else {
                kindKey = (name, value)
            }
        }
        for (key, _) in pairs {
            let keyNode = document[key]
            if keyNode.kind == .scalar, !StepKind.isKeyword(keyNode.value), !Self.isKnownStepOption(keyNode.value),
               Suggestion.closest(to: keyNode.value, in: StepKind.keywords) != nil || ForeignKey.isKind(keyNode.value) {
                unknownLooksLikeKind = true
            }
        }
        guard let kindKey else {
            for (key, _) in pairs {
                guard let name = keyName(key), !Self.isKnownStepOption(name.value) else { continue }
                unknownKey(name, in: "a step", candidates: StepKind.keywords + StepKind.commonOptions, foreign: .step)
            }
            if !unknownLooksLikeKind {
                bag.error(.missingKind, "this step has no kind", at: SourceSpan(line: node.span.start.line, column: node.span.start.column, length: 1),
                          help: "add one of `print`, `delay`, `shell`, `sequential`, `concurrent` or `use`")
            }
            noteUnread(id)
            return nil
        }
        let kindName = kindKey.name.value
        guard let kind = stepKind(kindName, kindKey.value, keySpan: kindKey.name.span) else {
            // The kind's value was wrong (already reported); still check the other keys.
            let placeholder = Step(kind: .delay(Located(.zero, kindKey.name.span)), kindSpan: kindKey.name.span, span: node.span)
            commonOptions(pairs, into: placeholder, kindName: kindName, listOwner: owner)
            noteUnread(id)
            return nil
        }
        let step = Step(kind: kind, kindSpan: kindKey.name.span, span: node.span)
        commonOptions(pairs, into: step, kindName: kindName, listOwner: owner)
        // The validator checks the step with the same merges entered (those of steps inside
        // it come along; they are their own steps' too, so nothing is moved twice).
        if enteredMerges.count > firstEntered { step.merges = Array(enteredMerges[firstEntered...]) }
        return step
    }

    /// The top-level keys that no step has (`env`, `shell`, `name`, `description` and
    /// `finally` are step options too; `steps` in a step is more likely a group, which
    /// `ForeignKey` suggests).
    static let workflowOnlyKeys = ["version", "vars", "defaults", "rollback", "actions"]

    static func isKnownStepOption(_ key: String) -> Bool {
        StepKind.commonOptions.contains(key) || StepKind.groupOptions.contains(key)
            || StepKind.kindOptions.values.contains { $0.contains(key) }
    }

    /// The kind value itself (the command, message, children…).
    mutating func stepKind(_ kind: String, _ value: Int32, keySpan: SourceSpan) -> StepKind? {
        switch kind {
        // The most common kind first: a string switch tries its cases in order.
        case "shell":
            guard let text = string(value, "`shell`") else { return nil }
            if text.value.isBlank {
                bag.error(.invalidValue, "`shell` has an empty command", at: text.span)
                return nil
            }
            guard isFreeOfNUL(value, text, "the command") else { return nil }
            var shell = ShellStep(command: template(value, text, shellCommand: true))
            if let shebang = warnIfForeignShebang(value, text) { shell.shebang = shebang }
            return .shell(shell)
        case "print":
            guard let text = self.text(value, "`print`") else { return nil }
            return .print(PrintStep(message: template(value, text)))
        case "delay":
            guard let duration = duration(value, "`delay`") else { return nil }
            return .delay(duration)
        case "sequential", "concurrent":
            let steps = stepList(value, owner: "`\(kind)`", ownerSpan: keySpan, kind: kind)
            guard !steps.isEmpty else { return nil }
            return kind == "sequential" ? .sequential(GroupStep(steps: steps)) : .concurrent(GroupStep(steps: steps))
        case "use":
            guard let name = string(value, "`use`") else { return nil }
            return .use(UseStep(action: name))
        default:
            return nil
        }
    }

    /// Common options, group options and the kind's own options; `listOwner` is the key
    /// that owns the list the step is an item of (see `WorkflowParser.listOwner`).
    mutating func commonOptions(_ pairs: [(key: Int32, value: Int32)], into step: Step, kindName: String,
                                listOwner: (kind: String, keySpan: SourceSpan)? = nil) {
        let kindOptions = StepKind.options(of: kindName)
        let isGroup = StepKind.isGroup(kindName)
        for (key, value) in pairs {
            guard let name = keyName(key) else { continue }
            // Kind keys were handled above (a second one was reported there); on a group,
            // `shell` is the group option.
            if StepKind.isKeyword(name.value), !(isGroup && name.value == "shell") { continue }
            switch name.value {
            case "name":
                step.name = identifier(value, "step name")
                // Merged in by `<<: *x`, or in a step reached through an alias.
                if step.name != nil, let site = document.aliasSites[key] ?? aliasContext { step.aliasSite = site }
            case "description": step.description = description(value)
            case "if": step.condition = condition(value)
            case "timeout": step.timeout = positiveDuration(value, "`timeout`")
            case "retry": step.retry = retry(value)
            case "continue_on_error": step.continueOnError = bool(value, "`continue_on_error`")
            case "undo": step.undo = undoSteps(value, keySpan: name.span)
            case "tags": step.tags = tags(value)
            case "env": step.env = envVars(value)
            case "outputs":
                var keys = stringList(value, "`outputs`")
                for key in keys where !Self.isIdentifier(key.value) {
                    bag.error(.invalidName, "invalid output key `\(key.value)`", at: key.span,
                              help: "keys match [A-Za-z_][A-Za-z0-9_-]*")
                }
                // A key listed twice, as a mapping key written twice: at the second.
                var first: [String: SourceSpan] = [:]
                keys.removeAll { key in
                    guard let earlier = first[key.value] else {
                        first[key.value] = key.span
                        return false
                    }
                    bag.error(.duplicateKey, "duplicate output key `\(key.value)`", at: key.span, help: "remove one of the two",
                              notes: [.init("first `\(key.value)` is here", at: earlier)])
                    return true
                }
                if kindName != "shell" {
                    bag.error(.misplacedOption, "only `shell` steps write outputs", at: name.span,
                              help: "declare `outputs` on the shell step that writes them")
                }
                step.outputs = keys.filter { Self.isIdentifier($0.value) }
            default:
                if kindOptions.contains(name.value) {
                    kindOption(name, value, into: step)
                } else if isGroup, StepKind.groupOptions.contains(name.value) {
                    step.shell = shellProgram(value)
                } else if let owner = StepKind.keywords.first(where: { StepKind.kindOptions[$0]!.contains(name.value) })
                            ?? (StepKind.groupOptions.contains(name.value) ? "sequential`, `concurrent` and `use" : nil) {
                    let owners = StepKind.keywords.filter { StepKind.kindOptions[$0]!.contains(name.value) }
                    let list = owners.count > 1 ? owners.map { "`\($0)`" }.joined(separator: " and ") : "`\(owner)`"
                    var help: String? = nil
                    if name.value == "shell", kindName == "shell" {
                        help = "a shell step's key is its command; choose the shell with `shell:` on the workflow, `defaults` or an enclosing group"
                    } else if let listOwner {
                        help = ownerOptionHelp(name, key: key, listOwner: listOwner)
                    }
                    bag.error(.misplacedOption, "`\(name.value)` is an option of \(list) steps, not of `\(kindName)` steps",
                              at: name.span, help: help)
                } else if case .use(let use) = step.kind, parameterNames(of: use.action.value).contains(name.value) {
                    // `use: notify` with `channel: ops` beside it, as go-task passes `vars`.
                    bag.error(.unknownKey, "unknown key `\(name.value)` in a `use` step", at: name.span,
                              help: "`\(name.value)` is a parameter of action `\(use.action.value)`: pass it under `with:` (`with: { \(name.value): … }`)")
                } else if case .use = step.kind, name.value == "vars" {
                    // go-task passes a called task's variables as `vars:` beside `task:`.
                    bag.error(.unknownKey, "unknown key `vars` in a `use` step", at: name.span,
                              help: "pass the action's parameters under `with:` (`with: { NAME: … }`); `vars` is a key of the workflow")
                } else if Self.workflowOnlyKeys.contains(name.value) {
                    // Not a near miss of a step option (`vars` is not a typo of `tags`):
                    // a workflow key indented into the step above it.
                    bag.error(.unknownKey, "unknown key `\(name.value)` in a `\(kindName)` step", at: name.span,
                              help: "`\(name.value)` is a key of the workflow: write it at the top level, in the column of `steps:`")
                } else {
                    unknownKey(name, in: "a `\(kindName)` step",
                               candidates: StepKind.commonOptions + kindOptions + (isGroup ? StepKind.groupOptions : []),
                               foreign: .step, stepKind: kindName)
                }
            }
        }
    }

    /// The help for an option of the group (or workflow) whose list holds this step,
    /// written among the step's own keys: indented one level too deep, it became the last
    /// item's (`max_parallel` under a `concurrent` group's last child, the workflow's
    /// `finally` under its last step). Nil when the group does not take it either, or when
    /// the key is not written where it stands (merged in, reached through an alias, or
    /// not first on its line, as in a flow mapping), where indentation is not the slip.
    func ownerOptionHelp(_ name: Located<String>, key: Int32, listOwner: (kind: String, keySpan: SourceSpan)) -> String? {
        let ownerTakesIt = listOwner.kind == "steps" ? name.value == "finally" : StepKind.options(of: listOwner.kind).contains(name.value)
        guard ownerTakesIt, document.aliasSites[key] == nil, aliasContext == nil else { return nil }
        let line = file.lineText(name.span.start.line)
        guard line.unicodeScalars.prefix(name.span.start.column - 1).allSatisfy({ $0 == " " }) else { return nil }
        let column = listOwner.keySpan.start.column
        if listOwner.kind == "steps" {
            return "here it is this step's option; the workflow's `finally` starts in the column of `steps:` (column \(column))"
        }
        return "here it is this step's option; for the `\(listOwner.kind)` group, start it in the column of `\(listOwner.kind):` (column \(column))"
    }

    /// The parameter names action `action` declares, read from the document (the actions
    /// may be written after the steps, so they are not parsed yet); none when there is no
    /// such action or its `params` is not a mapping.
    func parameterNames(of action: String) -> [String] {
        guard let root = document.root, document[root].kind == .mapping else { return [] }
        func value(of key: String, in id: Int32) -> Int32? {
            document.pairs(id).first { document[$0.key].kind == .scalar && document[$0.key].value == key }?.value
        }
        guard let actions = value(of: "actions", in: root), document[actions].kind == .mapping,
              let body = value(of: action, in: actions), document[body].kind == .mapping,
              let params = value(of: "params", in: body), document[params].kind == .mapping else { return [] }
        return document.pairs(params).compactMap { document[$0.key].kind == .scalar ? document[$0.key].value : nil }
    }

    mutating func kindOption(_ name: Located<String>, _ value: Int32, into step: Step) {
        switch (name.value, step.kind) {
        case ("stream", .print(var p)):
            guard let text = string(value, "`stream`") else { return }
            guard let stream = PrintStep.Stream(rawValue: text.value) else {
                bag.error(.invalidValue, "`stream` must be `stdout` or `stderr`, found `\(text.value)`", at: text.span,
                          help: Suggestion.help(for: text.value, in: ["stdout", "stderr"]))
                return
            }
            p.stream = stream
            step.kind = .print(p)
        case ("dir", .shell(var s)):
            guard let dir = directory(value) else { return }
            s.dir = dir
            step.kind = .shell(s)
        case ("stdin", .shell(var s)):
            guard let text = self.text(value, "`stdin`") else { return }
            s.stdin = template(value, text)
            step.kind = .shell(s)
        case ("interactive", .shell(var s)):
            s.interactive = bool(value, "`interactive`")
            step.kind = .shell(s)
        case ("finally", .sequential(var g)):
            g.finally = stepList(value, owner: "`finally`", ownerSpan: name.span, whole: "`finally`")
            step.kind = .sequential(g)
        case ("finally", .concurrent(var g)):
            g.finally = stepList(value, owner: "`finally`", ownerSpan: name.span, whole: "`finally`")
            step.kind = .concurrent(g)
        case ("max_parallel", .concurrent(var g)):
            guard let n = int(value, "`max_parallel`") else { return }
            guard n.value >= 1 else {
                bag.error(.invalidValue, "`max_parallel` must be 1 or more, found \(n.value)", at: n.span)
                return
            }
            g.maxParallel = n
            step.kind = .concurrent(g)
        case ("fail_fast", .concurrent(var g)):
            g.failFast = bool(value, "`fail_fast`")
            step.kind = .concurrent(g)
        case ("with", .use(var u)):
            guard mapping(value, "`with`") else { return }
            let merges = enterMerges(value)
            defer { leaveMerges(merges) }
            u.withSpan = name.span
            for (k, v) in document.pairs(value) {
                guard let param = keyName(k) else { continue }
                let node = document[v]
                if node.isNull {
                    u.with.append((param, Template(literal: "", span: valueSpan(node))))
                } else if let text = self.text(v, "the value of `\(param.value)`") {
                    u.with.append((param, template(v, text)))
                } else {
                    u.withoutValue.append(param)
                }
            }
            step.kind = .use(u)
        default:
            break
        }
    }

    /// `if:` — a boolean, or an expression with or without `${{ }}`.
    mutating func condition(_ id: Int32) -> Located<Expression>? {
        let node = document[id]
        if let b = node.boolValue { return Located(.literal(.bool(b), valueSpan(node)), valueSpan(node)) }
        if node.isPlainScalar, Self.yaml11Booleans.contains(node.value) {
            _ = bool(id, "`if`")
            return nil
        }
        guard let text = string(id, "`if`", expected: "an expression or `true` or `false`") else { return nil }
        let locator = ScalarLocator(node: node, file: file)
        var source = text.value
        var offset = 0
        if source.hasExpressionMarker {
            // `${{ expr }}` written around the whole condition is the same as `expr`. Around
            // it may be spaces, tabs and line breaks (a block scalar `if: |` ends with one);
            // its `}}` is the first outside a string literal, as in any template.
            let scalars = Array(source.unicodeScalars)
            let first = scalars.firstIndex { !ExpressionLexer.isSpace($0) } ?? scalars.count
            let opens = first + 2 < scalars.count && scalars[first] == "$" && scalars[first + 1] == "{" && scalars[first + 2] == "{"
            let close = opens ? Template.closingBraces(in: scalars, from: first + 3) : nil
            if let close, scalars[(close + 2)...].allSatisfy(ExpressionLexer.isSpace) {
                offset = first + 3
                source = String(scalars: scalars[offset..<close])
            } else if opens, close == nil {
                noteNames(inUnread: text.value)
                bag.error(.expressionSyntax, "unterminated `${{`",
                          at: SourceSpan(start: locator.location(ofValueOffset: first), end: locator.location(ofValueOffset: first + 3)),
                          help: "close the expression with `}}`")
                return nil
            } else if ExpressionLexer.containsMarkerOutsideStrings(scalars) {
                noteNames(inUnread: text.value)
                bag.error(.expressionSyntax, "an `if` condition is one expression", at: text.span,
                          help: "write the condition without `${{ }}`, or wrap all of it in one `${{ }}`")
                return nil
            }
        }
        // A blank bare condition has no `${{ }}` to write an expression in, which the
        // parser's help for an empty expression would ask for.
        if offset == 0, source.unicodeScalars.allSatisfy(ExpressionLexer.isSpace) {
            bag.error(.expressionSyntax, "`if` is empty", at: text.span,
                      help: "write a condition, such as `vars.target == 'prod'`, or remove `if`")
            return nil
        }
        switch ExpressionParser.parse(source, locate: { locator.location(ofValueOffset: offset + $0) }) {
        case .success(let expression): return Located(expression, text.span)
        case .failure(let failure):
            noteNames(inUnread: text.value)
            bag.error(.expressionSyntax, failure.message, at: failure.span, help: failure.help)
            return nil
        }
    }

    /// `undo:` — one step or a list of steps. One inside another step's `undo` is valid but
    /// never runs (a rollback does not reverse the steps it runs, and `flow undo` neither),
    /// so it is a warning: written, it reads as a promise of a second rollback. Only the
    /// outermost such `undo` is flagged; those inside it are part of the same mistake.
    mutating func undoSteps(_ id: Int32, keySpan: SourceSpan) -> [Step]? {
        if undoDepth == 1 {
            bag.warning(.nestedUndo, "this `undo` never runs: it is inside another step's `undo`, and a rollback does not reverse its own steps",
                        at: keySpan, help: "remove it; to run more steps in the rollback, list them in the outer `undo`")
        }
        undoDepth += 1
        defer { undoDepth -= 1 }
        let node = document[id]
        if node.kind == .sequence {
            let steps = stepList(id, owner: "`undo`", ownerSpan: keySpan)
            return steps.isEmpty ? nil : steps
        }
        if node.isNull {
            bag.error(.emptyGroup, "`undo` is empty", at: keySpan, help: "give a step, or remove `undo`")
            return nil
        }
        return step(id).map { [$0] }
    }
}
