/// Parsing of `actions:` and their `params:`.
extension WorkflowParser {
    static let actionKeys = ["description", "params", "steps"]
    static let paramKeys = ["description", "required", "default", "allowed"]

    mutating func actions(_ id: Int32) -> [Action] {
        guard mapping(id, "`actions`") else { return [] }
        let merges = enterMerges(id)
        defer { leaveMerges(merges) }
        var result: [Action] = []
        for (key, value) in document.pairs(id) {
            guard let name = keyName(key) else { continue }
            guard Self.isIdentifier(name.value) else {
                bag.error(.invalidName, "invalid action name `\(name.value)`", at: name.span,
                          help: "names start with a letter or `_` and hold letters, digits, `_` and `-`")
                unreadActionNames.insert(name.value)
                continue
            }
            var action = Action(name: name, span: document[value].span)
            // go-task's short forms, `build: go build` and `build: [go build, go vet]`:
            // what the action is missing is its `steps:` key.
            if document[value].kind == .sequence || (document[value].kind == .scalar && document[value].isString) {
                wrongType(value, expected: "a mapping", what: "action `\(name.value)`",
                          help: "put its steps under `steps:` (`\(name.value):` then `steps: [\(document[value].kind == .sequence ? "…" : document[value].value)]` indented under it)")
                unreadActionNames.insert(name.value)
                continue
            }
            guard mapping(value, "action `\(name.value)`") else {
                unreadActionNames.insert(name.value)
                continue
            }
            let actionMerges = enterMerges(value)
            defer { leaveMerges(actionMerges) }
            var sawSteps = false
            for (k, v) in document.pairs(value) {
                guard let option = keyName(k) else { continue }
                switch option.value {
                case "description": action.description = description(v)
                case "params":
                    action.params = params(v)
                    let node = document[v]
                    // Not a mapping (reported): unless a list of valid names, read as such,
                    // or empty (`params: []`, as `params: ~`, says there are none), which
                    // parameters the action takes is unknown.
                    let empty = node.isNull || (node.kind == .sequence && document.children(of: v).isEmpty)
                    if !empty, node.kind != .mapping, action.params.isEmpty { action.paramsUnread = true }
                case "steps":
                    sawSteps = true
                    // The action is a scope of its own: its unread step names are its own.
                    let outerUnread = unreadStepNames
                    unreadStepNames = []
                    action.steps = stepList(v, owner: "`steps` of action `\(name.value)`", ownerSpan: option.span,
                                            whole: "the action")
                    action.unreadStepNames = unreadStepNames
                    unreadStepNames = outerUnread
                default:
                    unknownKey(option, in: "action `\(name.value)`", candidates: Self.actionKeys, foreign: .action)
                    // `cmds:` was meant as the steps, and was said to be: not also "no steps".
                    if ForeignKey.actionKeys[option.value] == "steps" { sawSteps = true }
                }
            }
            if !sawSteps {
                bag.error(.missingKey, "action `\(name.value)` has no `steps`", at: name.span, help: "add `steps:` with a list of steps")
            }
            result.append(action)
        }
        return result
    }

    mutating func params(_ id: Int32) -> [Param] {
        // A list of names (`params: [env, region]`, as go-task's `requires: vars:` lists
        // them): the help shows the mapping, and the names are taken as declared, so each
        // `params.env` and `with: {env: …}` is not reported again as unknown ("it takes no
        // parameters") on top of this one error.
        if document[id].kind == .sequence {
            let items = document.children(of: id).map { document[$0] }
            let names = items.compactMap { $0.kind == .scalar && $0.isString && Self.isIdentifier($0.value) ? $0.value : nil }
            let example = names.isEmpty ? "`env: { required: true }`" : names.prefix(3).map { "`\($0):`" }.joined(separator: ", ")
            wrongType(id, expected: "a mapping", what: "`params`",
                      help: "declare each parameter as a key of `params`, on a line of its own: \(example)")
            guard names.count == items.count else { return [] }
            return document.children(of: id).map { Param(name: Located(document[$0].value, valueSpan(document[$0]))) }
        }
        guard mapping(id, "`params`") else { return [] }
        let merges = enterMerges(id)
        defer { leaveMerges(merges) }
        var result: [Param] = []
        for (key, value) in document.pairs(id) {
            guard let name = keyName(key) else { continue }
            guard Self.isIdentifier(name.value) else {
                bag.error(.invalidName, "invalid parameter name `\(name.value)`", at: name.span,
                          help: "names start with a letter or `_` and hold letters, digits, `_` and `-`")
                continue
            }
            var param = Param(name: name)
            let node = document[value]
            if node.isNull {
                result.append(param)
                continue
            }
            // A definition that is not a mapping (reported) still declares the parameter, with
            // no options: its uses are not also "has no parameter".
            guard mapping(value, "parameter `\(name.value)`") else {
                result.append(param)
                continue
            }
            let paramMerges = enterMerges(value)
            defer { leaveMerges(paramMerges) }
            for (k, v) in document.pairs(value) {
                guard let option = keyName(k) else { continue }
                switch option.value {
                case "description": param.description = description(v)
                case "required": param.required = bool(v, "`required`")?.value ?? false
                case "default": param.defaultValue = text(v, "`default`")
                case "allowed":
                    let list = document[v]
                    guard list.kind == .sequence else {
                        wrongType(v, expected: "a non-empty list of values", what: "`allowed`")
                        continue
                    }
                    // The type is right but nothing could ever be passed: say so rather
                    // than "found a list", which reads as if a list were wrong.
                    guard !document.children(of: v).isEmpty else {
                        bag.error(.wrongType, "`allowed` must be a non-empty list of values, found an empty list", at: valueSpan(list),
                                  help: "list the values the parameter accepts, or drop `allowed`")
                        continue
                    }
                    param.allowed = document.children(of: v).compactMap { text($0, "an allowed value") }
                default: unknownKey(option, in: "parameter `\(name.value)`", candidates: Self.paramKeys, foreign: .param)
                }
            }
            // GitHub Actions evaluates `${{ }}` in an input's default (`${{ github.token }}`);
            // flow's defaults are literal, so such a default would reach the steps as the
            // text `${{ … }}`, without a word.
            if let defaultValue = param.defaultValue, defaultValue.value.contains("${{") {
                bag.warning(.unexpandedExpression, "the default of `\(name.value)` is literal: its `${{ … }}` is not expanded",
                            at: defaultValue.span, help: "give the value at the `use` site instead: `with: {\(name.value): \"${{ … }}\"}`")
            }
            if param.required, let defaultValue = param.defaultValue {
                bag.error(.conflictingOptions, "parameter `\(name.value)` is required and has a default", at: defaultValue.span,
                          help: "drop `required: true` or the default")
            }
            if let allowed = param.allowed, let defaultValue = param.defaultValue,
               !allowed.contains(where: { $0.value.isIdentical(to: defaultValue.value) }) {
                bag.error(.disallowedParam, (defaultValue.value.isEmpty ? "the empty default" : "the default `\(defaultValue.value)`")
                          + " of `\(name.value)` is not an allowed value",
                          at: defaultValue.span, help: Param.allowedHelp(for: defaultValue.value, allowed: allowed.map(\.value), quoted: true))
            }
            result.append(param)
        }
        return result
    }
}
