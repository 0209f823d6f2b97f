/// Reading a command line that is still being typed, for the completion scripts.
extension CommandLineParser {
    /// The root's unlisted option the completion scripts call for `CompletionKind.dynamic`
    /// values: `--complete-values QUERY CURRENT [WORD…]`.
    static let completionValuesOption = "--complete-values"

    /// `--complete-values QUERY CURRENT [WORD…]`: WORDs are the words before the cursor
    /// (after the program's name), as the shell split them.
    static func completionValuesRequest(_ words: [String], root: CommandSpec) throws(UsageError) -> CommandLineRequest {
        guard words.count >= 2 else {
            throw UsageError("\(completionValuesOption) takes a value kind, the word being completed and the words before it",
                             path: [root])
        }
        return .completionValues(query: words[0], current: words[1], typed: partial(Array(words.dropFirst(2)), root: root))
    }

    /// The command and the options and arguments `words` give it, read as far as they go:
    /// unlike `parse`, nothing is an error (an unknown option is passed over, a value may be
    /// missing or not among the choices, arguments may be missing or too many), because a
    /// line being completed is unfinished by nature.
    public static func partial(_ words: [String], root: CommandSpec) -> ParsedArguments {
        var path = [root]
        var index = 0
        while index < words.count, let sub = path[path.count - 1].subcommand(words[index]) {
            path.append(sub)
            index += 1
        }
        let command = path[path.count - 1]
        var parsed = ParsedArguments(path: path)
        var positionals: [String] = []
        var optionsEnded = false

        func store(_ option: OptionSpec, _ value: String?) {
            guard let value else { return }
            // Every value is kept, repeatable or not: `value` takes the last (as most tools do),
            // and a command can still see that a single-value option was given twice.
            parsed.optionValues[option.long, default: []].append(value)
        }
        /// The next word as an option's value, when there is one that is not an option.
        func nextValue() -> String? {
            guard index < words.count, !looksLikeOption(words[index]) else { return nil }
            index += 1
            return words[index - 1]
        }

        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                positionals.append(word)
            } else if word == "--" {
                optionsEnded = true
            } else if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let equals = body.firstIndex(of: "=")
                guard let option = command.option(String(body[..<(equals ?? body.endIndex)])) else { continue }
                if option.isFlag {
                    parsed.flags.insert(option.long)
                } else {
                    store(option, equals.map { String(body[body.index(after: $0)...]) } ?? nextValue())
                }
            } else {
                var letters = Substring(word.dropFirst())
                while let letter = letters.first, let option = command.options.first(where: { $0.short == letter }) {
                    letters = letters.dropFirst()
                    if option.isFlag {
                        parsed.flags.insert(option.long)
                        continue
                    }
                    store(option, letters.isEmpty ? nextValue() : String(letters))
                    break
                }
            }
        }

        var next = 0
        for argument in command.arguments where next < positionals.count {
            if argument.repeats {
                parsed.positionalValues[argument.name] = Array(positionals[next...])
                next = positionals.count
            } else {
                parsed.positionalValues[argument.name] = [positionals[next]]
                next += 1
            }
        }
        return parsed
    }
}
