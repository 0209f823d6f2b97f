/// Turns a YAML document into a `Workflow`, reporting every shape problem it meets.
///
/// The parser never stops at the first problem: a bad value is reported and left out,
/// and parsing goes on with the rest of the file.
public struct WorkflowParser {
    let document: YAMLDocument
    let file: SourceFile
    var bag: DiagnosticBag
    /// The innermost alias through which the node being parsed was reached (nil when the
    /// node is written where it is): a step met there carries it, so a duplicate step
    /// name can point at this use of the alias rather than twice at the anchored text.
    var aliasContext: SourceSpan?
    /// Every merge entered so far (see `enterMerges`), in parse order: a step keeps those met
    /// while it was parsed (its own, its `env`'s, its `with`'s…), for the validator.
    var enteredMerges: [MergedText] = []
    /// The key that owns the list whose item is about to be parsed (`steps`, `sequential`,
    /// `concurrent`), for `step` to take: an option of that group written under its last
    /// item instead (one indentation level too deep) is misplaced there, and the help says
    /// where it belongs. Nil for lists where no such slip has a better place (`finally`,
    /// `undo`, an action's `steps`).
    var listOwner: (kind: String, keySpan: SourceSpan)?
    /// See `Workflow.namesInUnreadExpressions`.
    var namesInUnreadExpressions: Set<String> = []
    /// The names of the steps of the scope being parsed (the workflow, or one action) that
    /// could not be read: see `Workflow.unreadStepNames`.
    var unreadStepNames: [Located<String>] = []
    /// See `Workflow.unreadVarNames`.
    var unreadVarNames: Set<String> = []
    /// See `Workflow.unreadActionNames`.
    var unreadActionNames: Set<String> = []
    /// The nodes `noteUnread` has walked: an alias brings a node in many times (a
    /// "billion laughs" file would otherwise be walked exponentially).
    /// Each is keyed by the node and whether it was walked as a step (see `noteUnread`).
    var unreadWalked: Set<Int64> = []
    /// How many `undo` lists enclose the step being parsed: an `undo` met inside one never
    /// runs (see `undoSteps`).
    var undoDepth = 0

    /// The top-level keys of a workflow.
    public static let topLevelKeys = [
        "version", "name", "description", "shell", "env", "vars", "defaults", "rollback", "actions", "steps", "finally",
    ]

    init(document: YAMLDocument, file: SourceFile, bag: DiagnosticBag) {
        self.document = document
        self.file = file
        self.bag = bag
    }

    /// Reads and parses `file`; the workflow is nil when the YAML could not be read at all.
    public static func parse(_ file: SourceFile) -> (Workflow?, DiagnosticBag) {
        let (workflow, bag, _) = parseKeepingDocument(file)
        return (workflow, bag)
    }

    /// Also returns the YAML document, so a caller can keep it alive until exit.
    static func parseKeepingDocument(_ file: SourceFile) -> (Workflow?, DiagnosticBag, YAMLDocument) {
        var bag = DiagnosticBag(file: file)
        let document = YAMLReader().read(file, into: &bag)
        guard let root = document.root else {
            if !bag.hasErrors {
                bag.error(.emptyWorkflow, "the workflow is empty", at: SourceSpan(line: 1, column: 1, length: 0),
                          help: "a workflow is a mapping with at least `steps:`")
            }
            return (nil, bag, document)
        }
        var parser = WorkflowParser(document: document, file: file, bag: bag)
        let workflow = parser.parseWorkflow(root)
        return (workflow, parser.bag, document)
    }

    // MARK: Top level

    mutating func parseWorkflow(_ root: Int32) -> Workflow? {
        let node = document[root]
        guard node.kind == .mapping else {
            if node.isNull {
                bag.error(.emptyWorkflow, "the workflow is empty", at: node.span, help: "a workflow is a mapping with at least `steps:`")
            } else {
                bag.error(.wrongType, "a workflow must be a mapping, found \(node.typeDescription)", at: node.span,
                          help: "start with `steps:`")
            }
            return nil
        }
        let merges = enterMerges(root)
        defer { leaveMerges(merges) }
        var workflow = Workflow(file: file, stepsSpan: SourceSpan(line: node.span.start.line, column: node.span.start.column, length: 0))
        var sawSteps = false
        /// A misspelt `steps` (`stepz:`, GitHub's `jobs:`) holding a list: read in its place
        /// if there is no `steps`, so that the errors inside it show now, not after the fix.
        var standIn: (name: Located<String>, value: Int32)?
        for (key, value) in document.pairs(root) {
            guard let name = keyName(key) else { continue }
            switch name.value {
            case "version":
                // A quoted version is another format's (go-task's `version: '3'`, Docker
                // Compose's `"3.8"`): "found a string" alone would not say this is not a
                // flow workflow.
                if document[value].isString, !document[value].value.hasExpressionMarker {
                    let written = String(document[value].value.filter { $0 != " " && $0 != "\t" })
                    wrongType(value, expected: "a whole number", what: "`version`",
                              help: ["1", "1.0"].contains(written) ? "write it unquoted: `version: 1`"
                                  : "flow's only version is `1`; this looks like another tool's file (a go-task Taskfile "
                                  + "has `version: '3'`): see \"Coming from another tool\" in docs/workflow-format.md")
                } else if let version = int(value, "`version`") {
                    if version.value != 1 {
                        bag.error(.unsupportedVersion, "unsupported workflow version \(version.value)", at: version.span,
                                  help: "the only version is 1")
                    }
                    workflow.version = version
                }
            case "name":
                workflow.name = string(value, "the workflow `name`")
                if let name = workflow.name, !Self.isIdentifier(name.value) {
                    bag.error(.invalidName, "invalid workflow name `\(name.value)`", at: name.span,
                              help: "names match [A-Za-z_][A-Za-z0-9_-]*; say more under `description`")
                }
            case "description": workflow.description = description(value)
            case "shell": workflow.shell = shellProgram(value)
            case "env": workflow.env = envVars(value)
            case "vars": workflow.vars = variables(value)
            case "defaults": workflow.defaults = defaults(value)
            case "rollback": workflow.rollback = bool(value, "`rollback`")
            case "actions": workflow.actions = actions(value)
            case "steps":
                sawSteps = true
                workflow.stepsSpan = name.span
                workflow.steps = stepList(value, owner: "`steps`", ownerSpan: name.span, whole: nil, kind: "steps")
            case "finally":
                workflow.finally = stepList(value, owner: "`finally`", ownerSpan: name.span, whole: "`finally`")
            default:
                unknownKey(name, in: "the workflow", candidates: Self.topLevelKeys, foreign: .workflow)
                if standIn == nil, document[value].kind == .sequence,
                   ForeignKey.workflowKeys[name.value] == "steps" || Suggestion.closest(to: name.value, in: ["steps"]) != nil {
                    standIn = (name, value)
                }
            }
        }
        if !sawSteps, let standIn {
            // Its unknown-key error says what to rename; "the workflow has no `steps`" as well
            // would say the same thing twice.
            workflow.stepsSpan = standIn.name.span
            workflow.steps = stepList(standIn.value, owner: "`\(standIn.name.value)`", ownerSpan: standIn.name.span, whole: nil)
        } else if !sawSteps {
            bag.error(.missingKey, "the workflow has no `steps`", at: SourceSpan(line: node.span.start.line, column: node.span.start.column, length: 1),
                      help: "add `steps:` with a list of steps")
        }
        // `if: !vars.skip` (a negation YAML took for a tag): the tag's error is reported, and
        // the var was meant, so it is not unused as well.
        for tag in document.unsupportedTags { noteNames(inUnread: tag) }
        workflow.namesInUnreadExpressions = namesInUnreadExpressions
        workflow.unreadStepNames = unreadStepNames
        workflow.unreadVarNames = unreadVarNames
        workflow.unreadActionNames = unreadActionNames
        return workflow
    }

    /// Notes the `vars.NAME` and `params.NAME` written in `text`, an expression (or
    /// template) that could not be read: see `Workflow.namesInUnreadExpressions`. Also
    /// GitHub Actions' index form, `vars['NAME']` (or `"NAME"`), which flow's expressions do
    /// not have: the parse error says so, and the name was meant, so it is not unused too.
    mutating func noteNames(inUnread text: String) {
        let scalars = Array(text.unicodeScalars)
        func isNameScalar(_ c: Unicode.Scalar) -> Bool {
            (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c == "_" || c == "-"
        }
        for root in ["vars", "params"] {
            let prefix = Array(root.unicodeScalars)
            var i = 0
            while i + prefix.count + 1 < scalars.count {
                defer { i += 1 }
                guard scalars[i..<(i + prefix.count)].elementsEqual(prefix), i == 0 || !isNameScalar(scalars[i - 1]) else { continue }
                var start = i + prefix.count + 1
                var quote: Unicode.Scalar?
                switch scalars[i + prefix.count] {
                case ".": break
                case "[":
                    while start < scalars.count, scalars[start] == " " { start += 1 }
                    guard start < scalars.count, scalars[start] == "'" || scalars[start] == "\"" else { continue }
                    quote = scalars[start]
                    start += 1
                default: continue
                }
                var end = start
                while end < scalars.count, isNameScalar(scalars[end]) { end += 1 }
                guard end > start, quote == nil || (end < scalars.count && scalars[end] == quote) else { continue }
                namesInUnreadExpressions.insert(root + "." + String(String.UnicodeScalarView(scalars[start..<end])))
            }
        }
    }

    /// Notes what a step that could not be read (left out of the model, its problem
    /// already reported) declares and uses: its `name` and those of the steps inside it
    /// (in the lists its keys hold) as steps of the current scope, and the `vars.NAME`
    /// and `params.NAME` its text mentions. As a compiler still declares a declaration it
    /// could not type, so that its uses are not further errors: without this, `shel:`
    /// also gave "no step named `build`" at each reference to the step, and "parameter
    /// `env` is never used" for the parameter its command used.
    ///
    /// Only steps declare: the `name` in a `with:` or `env:` (`uses: greet` with
    /// `with: {name: deploy}`) names a parameter's value or a variable, and taking it for a
    /// step hid a real "no step named `deploy`" elsewhere in the scope.
    mutating func noteUnread(_ id: Int32) {
        // A list where a step belongs holds steps, as does the step itself.
        var pending: [(node: Int32, isStep: Bool)] = [(id, true)]
        while let (next, isStep) = pending.popLast() {
            guard unreadWalked.insert(Int64(next) << 1 | (isStep ? 1 : 0)).inserted else { continue }
            let node = document[next]
            switch node.kind {
            case .scalar:
                if node.value.contains("vars.") || node.value.contains("params.") { noteNames(inUnread: node.value) }
            case .sequence:
                for child in document.children(of: next) { pending.append((child, isStep)) }
            case .mapping:
                for (key, value) in document.pairs(next) {
                    let keyNode = document[key], valueNode = document[value]
                    var holdsSteps = false
                    if isStep, keyNode.kind == .scalar {
                        if keyNode.value == "name", valueNode.kind == .scalar, valueNode.isString {
                            unreadStepNames.append(Located(valueNode.value, valueNode.span))
                        }
                        holdsSteps = valueNode.kind == .sequence && !Self.holdsNoSteps(keyNode.value)
                    }
                    pending.append((key, false))
                    pending.append((value, holdsSteps))
                }
            }
        }
    }

    /// Whether a step's `key` is one whose value holds no steps: every option of flow's
    /// but `sequential`, `concurrent`, `finally` and `undo`, and another tool's name for
    /// one (`environment`). A key flow does not know (`sequentail:`, Ansible's `block:`)
    /// may hold the steps it was meant to.
    static func holdsNoSteps(_ key: String) -> Bool {
        let key = ForeignKey.stepKeys[key] ?? key
        switch key {
        case "sequential", "concurrent", "finally", "undo": return false
        default: return StepKind.isKeyword(key) || StepKind.commonOptions.contains(key) || StepKind.groupOptions.contains(key)
            || StepKind.kindOptions.values.contains { $0.contains(key) }
        }
    }

    // MARK: Sections

    mutating func envVars(_ id: Int32) -> [EnvVar] {
        guard mapping(id, "`env`") else { return [] }
        let merges = enterMerges(id)
        defer { leaveMerges(merges) }
        var result: [EnvVar] = []
        for (key, value) in document.pairs(id) {
            guard let name = keyName(key) else { continue }
            if !Self.isEnvName(name.value) {
                bag.error(.invalidName, "invalid environment variable name `\(name.value)`", at: name.span,
                          help: "names are letters, digits and `_`, not starting with a digit")
                continue
            }
            guard let text = self.text(value, "the value of `\(name.value)`"),
                  isFreeOfNUL(value, text, "the value of `\(name.value)`") else { continue }
            if Self.holdsPaths(name.value) {
                warnIfShellExpansion(value, text, of: "the value of `\(name.value)`", ignoring: Self.expandedByItsReader(name.value))
            }
            result.append(EnvVar(name: name, value: template(value, text)))
        }
        return result
    }

    mutating func variables(_ id: Int32) -> [Variable] {
        guard mapping(id, "`vars`") else { return [] }
        let merges = enterMerges(id)
        defer { leaveMerges(merges) }
        var result: [Variable] = []
        // Values with another tool's placeholder, checked once every var is known.
        var templatedVars: [(String, Int32, Located<String>)] = []
        for (key, value) in document.pairs(id) {
            guard let name = keyName(key) else { continue }
            if !Self.isIdentifier(name.value) {
                bag.error(.invalidName, "invalid variable name `\(name.value)`", at: name.span,
                          help: "names match [A-Za-z_][A-Za-z0-9_-]*")
                continue
            }
            let node = document[value]
            if node.isNull {
                result.append(Variable(name: name, value: Located("", node.span)))
            } else if let text = self.text(value, "the value of `\(name.value)`") {
                // go-task evaluates templates in vars (`B: "{{.A}}-y"`); flow's vars are
                // literal, so such a value would reach the steps as the text `${{ … }}`
                // without a word, as a param default would (which gets the same warning).
                if text.value.contains("${{") {
                    bag.warning(.unexpandedExpression, "the value of variable `\(name.value)` is literal: its `${{ … }}` is not expanded",
                                at: text.span,
                                help: "write the value out, or build it in `env:`, whose values are expanded, and use `${{ env.NAME }}`")
                }
                result.append(Variable(name: name, value: text))
                if text.value.templateMarkers.placeholders || text.value.templateMarkers.makeReferences {
                    templatedVars.append((name.value, value, text))
                }
            } else {
                unreadVarNames.insert(name.value)
            }
        }
        // go-task's `IMAGE: "{{.REGISTRY}}/app"` (make's `$(REGISTRY)/app`), naming another
        // var: as literal as a `${{ … }}` there. Names of other programs' templates that are
        // no var (`FORMAT: "{{.Names}}"` for `docker ps`) are values meant as they are.
        let names = DeclaredNames(result.map(\.name.value))
        for (name, id, text) in templatedVars {
            let locator = ScalarLocator(node: document[id], file: file)
            for placeholder in ForeignPlaceholder.find(in: text.value, locate: { locator.location(ofValueOffset: $0) })
            {
                // A value naming its own var (`version: "{{ version }}"`) builds nothing from
                // another: the text of a template some program fills in.
                guard let variable = names.match(placeholder.name), variable != name else { continue }
                let envName = String(name.uppercased().map { $0 == "-" ? "_" : $0 })
                let value = text.value.replacing(placeholder.written, with: "${{ vars.\(variable) }}")
                bag.warning(.unexpandedExpression, "the value of variable `\(name)` is literal: its `\(placeholder.written)` is not expanded",
                            at: placeholder.span,
                            help: "build it in `env:`, whose values are expanded (`\(envName): \"\(value)\"`), and use `${{ env.\(envName) }}`")
            }
        }
        return result
    }

    mutating func defaults(_ id: Int32) -> StepDefaults {
        var result = StepDefaults()
        guard mapping(id, "`defaults`") else { return result }
        let merges = enterMerges(id)
        defer { leaveMerges(merges) }
        for (key, value) in document.pairs(id) {
            guard let name = keyName(key) else { continue }
            switch name.value {
            case "timeout": result.timeout = positiveDuration(value, "`timeout`")
            case "retry": result.retry = retry(value)
            case "continue_on_error": result.continueOnError = bool(value, "`continue_on_error`")
            case "dir": result.dir = directory(value)
            case "shell": result.shell = shellProgram(value)
            default: unknownKey(name, in: "`defaults`", candidates: StepDefaults.keys)
            }
        }
        return result
    }

    mutating func shellProgram(_ id: Int32) -> Located<ShellProgram>? {
        guard let text = string(id, "`shell`"), isFreeOfNUL(id, text, "the shell path") else { return nil }
        guard let program = ShellProgram(text.value) else {
            bag.error(.invalidValue, "unsupported shell `\(text.value)`", at: text.span,
                      help: Suggestion.help(for: text.value, in: ShellProgram.supportedNames)
                        ?? "use one of sh, bash, zsh, dash, ksh, or a path to one of them; a script in another "
                            + "language goes in a command: `\(text.value.split(separator: "/").last.map(String.init) ?? text.value) - <<'EOF'` … `EOF`")
            return nil
        }
        return Located(program, text.span)
    }

    // MARK: Names

    /// `[A-Za-z_][A-Za-z0-9_-]*`.
    public static func isIdentifier(_ s: String) -> Bool {
        var first = true
        for c in s.unicodeScalars {
            if first {
                guard ExpressionLexer.isIdentifierStart(c) else { return false }
                first = false
            } else if !ExpressionLexer.isIdentifierPart(c) {
                return false
            }
        }
        return !first
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`.
    public static func isEnvName(_ s: String) -> Bool {
        isIdentifier(s) && !s.contains("-")
    }

    mutating func identifier(_ id: Int32, _ what: String) -> Located<String>? {
        guard let text = string(id, what) else { return nil }
        guard Self.isIdentifier(text.value) else {
            var help = "names start with a letter or `_` and hold letters, digits, `_` and `-`"
            // GitHub Actions' step `name` is free text (`name: Build app`): flow's is an id.
            if text.value.contains(where: \.isWhitespace) { help += "; free text goes in `description`" }
            bag.error(.invalidName, "invalid \(what) `\(text.value)`", at: text.span, help: help)
            return nil
        }
        return text
    }
}
