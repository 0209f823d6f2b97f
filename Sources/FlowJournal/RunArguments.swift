import FlowKit

/// The command-line choices that shape a plan, stored (as JSON) so `resume` and `undo`
/// plan the same tree; and the options that decide how the run runs and fails, which they
/// carry on (`options`).
public struct RunArguments: Sendable, Equatable {
    public var action: String?
    public var vars: [[String]] = []
    public var with: [[String]] = []
    public var tags: [String] = []
    public var skipTags: [String] = []
    public var only: String?
    /// `--no-rollback`, `--max-parallel`, `--grace`: none in runs recorded before flow kept
    /// them, which are resumed and undone as they were then.
    public var options = RecordedOptions()

    public init(_ options: PlanOptions) {
        action = options.action
        vars = options.vars.map { [$0.name, $0.value] }
        with = options.with.map { [$0.name, $0.value] }
        tags = options.tags
        skipTags = options.skipTags
        only = options.only
    }

    public var planOptions: PlanOptions {
        var options = PlanOptions()
        options.action = action
        options.vars = vars.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        options.with = with.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        options.tags = tags
        options.skipTags = skipTags
        options.only = only
        return options
    }

    /// The arguments as they were given after the file on `flow run`'s command line
    /// (`release --with version=1.2.3 --var target=prod`), each word quoted for a POSIX
    /// shell when it needs it; empty when there were none. What `flow show` says a run was
    /// run with: its vars, params and selection change what ran.
    public var commandLine: String {
        var words: [String] = []
        if let action { words.append(action) }
        for pair in vars where pair.count == 2 { words += ["--var", pair[0] + "=" + pair[1]] }
        for pair in with where pair.count == 2 { words += ["--with", pair[0] + "=" + pair[1]] }
        if !tags.isEmpty { words += ["--tags", tags.joined(separator: ",")] }
        if !skipTags.isEmpty { words += ["--skip-tags", skipTags.joined(separator: ",")] }
        if let only { words += ["--only", only] }
        return words.map(Self.shellQuoted).joined(separator: " ")
    }

    /// `word` as a POSIX shell reads it back: as it is when it holds only characters no
    /// shell treats specially, else in single quotes.
    public static func shellQuoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./:=@,+%".unicodeScalars.contains(scalar)
        }
        if plain { return word }
        var quoted = "'"
        for character in word { quoted += character == "'" ? #"'\''"# : String(character) }
        return quoted + "'"
    }

    /// The arguments as a JSON object with sorted keys; absent choices are left out.
    var json: String {
        func strings(_ list: [String]) -> JSONValue { .array(list.map { .string($0) }) }
        var members: [(String, JSONValue)] = []
        if let action { members.append(("action", .string(action))) }
        if let only { members.append(("only", .string(only))) }
        // Only when one was given: a run without them is recorded as flow recorded every run
        // before it kept them (and an older flow, which ignores members it does not know,
        // resumes it as it resumes any run).
        if !options.isEmpty { members.append(("options", .object(options.jsonMembers))) }
        members.append(("skip_tags", strings(skipTags)))
        members.append(("tags", strings(tags)))
        members.append(("vars", .array(vars.map(strings))))
        members.append(("with", .array(with.map(strings))))
        return JSONValue.object(members).rendered()
    }

    /// The arguments `json` wrote; nil if it is not such an object.
    static func decode(_ json: String) -> RunArguments? {
        guard let object = JSONParser.parse(json.utf8), case .object = object else { return nil }
        func strings(_ value: JSONValue?) -> [String]? {
            guard let value else { return [] }  // absent: none
            guard let items = value.arrayValue else { return nil }
            let texts = items.compactMap(\.stringValue)
            return texts.count == items.count ? texts : nil
        }
        func pairs(_ value: JSONValue?) -> [[String]]? {
            guard let value else { return [] }
            guard let items = value.arrayValue else { return nil }
            let lists = items.compactMap(strings)
            return lists.count == items.count ? lists : nil
        }
        var arguments = RunArguments(PlanOptions())
        arguments.action = object["action"]?.stringValue
        arguments.only = object["only"]?.stringValue
        if let options = object["options"] {
            guard case .object = options, let decoded = RecordedOptions.decode(options) else { return nil }
            arguments.options = decoded
        }
        guard let tags = strings(object["tags"]), let skipTags = strings(object["skip_tags"]),
              let vars = pairs(object["vars"]), let with = pairs(object["with"])
        else { return nil }
        arguments.tags = tags
        arguments.skipTags = skipTags
        arguments.vars = vars
        arguments.with = with
        return arguments
    }
}
