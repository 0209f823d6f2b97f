/// Shell completion scripts generated from a command tree (bash, zsh, fish).
///
/// `flow --generate-completion-script SHELL` prints one of these. Everything in a script
/// comes from the `CommandSpec` tree, plus the conventions every command follows without
/// listing them (`-h`/`--help` and `--version` everywhere, the root's
/// `--generate-completion-script` and `help SUBCOMMAND`), so that a new option, choice or
/// subcommand completes without a change here. The scripts are plain text built in a fixed
/// order: the same tree always gives the same script.
public enum CompletionScript {
    public static let shells = ["bash", "zsh", "fish"]

    /// The script for `shell` (one of `shells`), or nil for another shell.
    public static func script(for shell: String, root: CommandSpec) -> String? {
        let tree = CompletionTree(root)
        switch shell {
        case "bash": return bash(tree)
        case "zsh": return zsh(tree)
        case "fish": return fish(tree)
        default: return nil
        }
    }
}

// MARK: - bash

extension CompletionScript {
    /// One function, `_flow`, walks the words before the cursor through the subcommands
    /// (skipping option values, counting positional arguments) and then offers what fits at
    /// the cursor. What each command accepts comes from one function per command (`describe`
    /// sets the walker's variables, `complete KEY` offers the values of an option or of the
    /// positional argument `@N`), so that the walker itself is the same for every tree.
    private static func bash(_ tree: CompletionTree) -> String {
        let p = tree.prefix
        var script = #"""
            # bash completion for \#(oneLine(tree.name)), generated from its command tree by
            # `\#(oneLine(tree.name)) --generate-completion-script bash`. Load it with
            # `source <(\#(oneLine(tree.name)) --generate-completion-script bash)`.

            # Offers the words given that start with the word under the cursor.
            \#(p)_offer() {
                local word
                for word in "$@"; do
                    [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
                done
                return 0
            }

            # Offers file names that end in one of the extensions given (any file when none is
            # given), and directories, which may hold such files.
            \#(p)_files() {
                local file extension
                compopt -o filenames 2>/dev/null
                while IFS= read -r file; do
                    if (( $# == 0 )) || [[ -d $file ]]; then
                        COMPREPLY+=("$file")
                        continue
                    fi
                    for extension in "$@"; do
                        if [[ $file == *."$extension" ]]; then
                            COMPREPLY+=("$file")
                            break
                        fi
                    done
                done < <(compgen -f -- "$cur")
                return 0
            }

            # Offers directory names.
            \#(p)_directories() {
                local directory
                compopt -o filenames 2>/dev/null
                while IFS= read -r directory; do
                    COMPREPLY+=("$directory")
                done < <(compgen -d -- "$cur")
                return 0
            }

            # Sets REPLY to word $1 as the shell will pass it: bash gives the words before the
            # cursor as typed, with their quotes, backslashes, `~` and `$NAME` (only read, never
            # run: a `$(…)` stays as it is).
            \#(p)_dequote() {
                local word=$1 out= quote= c i name re='^(\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))'
                if [[ $word == "~" || $word == "~/"* ]]; then
                    out=$HOME
                    word=${word:1}
                fi
                for (( i = 0; i < ${#word}; i++ )); do
                    c=${word:i:1}
                    if [[ $quote == "'" ]]; then
                        if [[ $c == "'" ]]; then quote=; else out+=$c; fi
                    elif [[ $c == '\' ]]; then
                        i=$((i + 1))
                        c=${word:i:1}
                        # Inside double quotes a backslash quotes only $ ` " and itself.
                        if [[ -n $quote && $c != [\$\`\"\\] ]]; then out+='\'; fi
                        out+=$c
                    elif [[ $c == '"' ]]; then
                        if [[ -n $quote ]]; then quote=; else quote='"'; fi
                    elif [[ $c == "'" && -z $quote ]]; then
                        quote="'"
                    elif [[ $c == '$' && ${word:i+1} =~ $re ]]; then
                        name=${BASH_REMATCH[2]}${BASH_REMATCH[3]}
                        out+=${!name-}
                        i=$((i + ${#BASH_REMATCH[0]}))
                    else
                        out+=$c
                    fi
                done
                REPLY=$out
            }

            # Offers the values the program lists for the kind $1 (`--complete-values`) given
            # the words before the cursor, in its order; bash shows no descriptions (after a tab).
            \#(p)_values() {
                local value word program current REPLY
                local -a typed=()
                for word in "${COMP_WORDS[0]}" "${words[@]:0:${#words[@]}-1}"; do
                    \#(p)_dequote "$word"
                    typed+=("$REPLY")
                done
                program=${typed[0]}
                \#(p)_dequote "$cur"
                current=$REPLY
                compopt -o nosort 2>/dev/null
                while IFS= read -r value; do
                    value=${value%%$'\t'*}
                    [[ -n $value && $value == "$current"* ]] || continue
                    # A value with a space or quote goes in as one word.
                    [[ $value == *[^[:alnum:]_.,:/@+=-]* ]] && printf -v value %q "$value"
                    COMPREPLY+=("$value")
                done < <("$program" \#(CommandLineParser.completionValuesOption) "$1" "$current" "${typed[@]:1}" 2>/dev/null)
                return 0
            }

            # Makes subcommand $1 of the current command the current one, if there is one.
            \#(p)_enter() {
                local j
                for (( j = 0; j < ${#subcommands[@]}; j++ )); do
                    if [[ ${subcommands[j]} == "$1" ]]; then
                        command=${subcommand_functions[j]}
                        "$command" describe
                        return 0
                    fi
                done
                return 1
            }

            # Completes the word under the cursor.
            \#(p)() {
                local cur word head i k command=\#(p)_cmd pending= n=0 dashdash=0 helping=0 glue=0
                local -a words=() subcommands=() subcommand_functions=() options=()
                local value_options= short_values= positionals=0 repeating=0 help_command=0
                COMPREPLY=()
                (( COMP_CWORD > 0 )) || return 0
                # bash splits `--output=json` and `key=value` at the `=` (COMP_WORDBREAKS):
                # join the pieces again, so that a value is not taken for a positional argument.
                for (( i = 1; i <= COMP_CWORD; i++ )); do
                    word=${COMP_WORDS[i]-}
                    if (( glue )); then
                        words[${#words[@]}-1]+=$word
                        glue=0
                    elif [[ $word == = || $word == : ]] && (( ${#words[@]} > 0 )); then
                        words[${#words[@]}-1]+=$word
                        glue=1
                    else
                        words+=("$word")
                    fi
                done
                cur=${words[${#words[@]}-1]}
                # bash replaces only the word under the cursor, not the part of a joined word
                # before the `=`: the candidates lose that head at the end.
                word=${COMP_WORDS[COMP_CWORD]-}
                if [[ $word == = || $word == : ]]; then
                    word=
                fi
                head=${cur%"$word"}

                "$command" describe
                for (( i = 0; i < ${#words[@]} - 1; i++ )); do
                    word=${words[i]}
                    if [[ -n $pending ]]; then
                        pending=
                    elif (( helping )); then
                        \#(p)_enter "$word"
                    elif (( ! dashdash )) && [[ $word == -?* ]]; then
                        if [[ $word == -- ]]; then
                            dashdash=1
                        elif [[ $word == --* ]]; then
                            if [[ $word != *=* && $value_options == *" $word "* ]]; then
                                pending=$word
                            fi
                        else
                            # Grouped short options (-fn): a letter that takes a value takes
                            # the rest of the word, or the next word when it is the last.
                            for (( k = 1; k < ${#word}; k++ )); do
                                if [[ $short_values == *"${word:k:1}"* ]]; then
                                    if (( k == ${#word} - 1 )); then
                                        pending=-${word:k:1}
                                    fi
                                    break
                                fi
                            done
                        fi
                    elif (( n == 0 && ! dashdash && help_command )) && [[ $word == help ]]; then
                        helping=1
                    elif (( n == 0 && ! dashdash )) && \#(p)_enter "$word"; then
                        :
                    else
                        n=$((n + 1))
                    fi
                done

                if [[ -n $pending ]]; then
                    "$command" complete "$pending"
                elif (( helping )); then
                    \#(p)_offer "${subcommands[@]}"
                elif (( ! dashdash )) && [[ $cur == --*=* && $value_options == *" ${cur%%=*} "* ]]; then
                    word=${cur%%=*}
                    cur=${cur#*=}
                    "$command" complete "$word"
                    for (( k = 0; k < ${#COMPREPLY[@]}; k++ )); do
                        COMPREPLY[k]=$word=${COMPREPLY[k]}
                    done
                elif (( ! dashdash )) && [[ $cur == -* ]]; then
                    \#(p)_offer "${options[@]}"
                elif (( n == 0 && ! dashdash && ${#subcommands[@]} > 0 )); then
                    if (( help_command )); then
                        \#(p)_offer help
                    fi
                    \#(p)_offer "${subcommands[@]}"
                elif (( n < positionals )); then
                    "$command" complete "@$n"
                elif (( repeating )); then
                    "$command" complete "@$((positionals - 1))"
                elif (( ! dashdash )); then
                    # Every positional argument is there: only options are left.
                    \#(p)_offer "${options[@]}"
                fi

                if [[ -n $head ]]; then
                    for (( k = 0; k < ${#COMPREPLY[@]}; k++ )); do
                        COMPREPLY[k]=${COMPREPLY[k]#"$head"}
                    done
                fi
                return 0
            }

            """#
        for node in tree.nodes {
            script += "\n" + bashCommandFunction(node, tree: tree)
        }
        script += "\ncomplete -F \(p) \(bashWord(tree.name))\n"
        return script
    }

    /// The function that describes one command to the walker and completes its values.
    private static func bashCommandFunction(_ node: CompletionTree.Node, tree: CompletionTree) -> String {
        let p = tree.prefix
        let children = node.children.map { tree.nodes[$0] }
        let optionWords = node.options.flatMap(names)
        let valueOptions = node.options.filter { !$0.isFlag }
        let valueWords = valueOptions.flatMap(names)
        let shortValues = String(valueOptions.compactMap(\.short))
        let arguments = node.command.arguments
        let repeating = arguments.last?.repeats ?? false
        let isRoot = node.path.count == 1

        var cases: [String] = []
        for option in valueOptions {
            guard let call = bashCompletionCall(option.completion, prefix: p) else { continue }
            let patterns = names(option).map(bashQuote)
            cases.append("    \(patterns.joined(separator: "|"))) \(call) ;;")
        }
        for (index, argument) in arguments.enumerated() {
            guard let call = bashCompletionCall(argument.completion, prefix: p) else { continue }
            cases.append("    \(bashQuote("@\(index)"))) \(call) ;;")
        }
        cases.append("    *) \(p)_files ;;")

        return """
            # \(oneLine(node.path.joined(separator: " "))): \(oneLine(node.command.abstract))
            \(node.function)() {
                if [[ $1 == describe ]]; then
                    subcommands=(\(children.map { bashQuote($0.command.name) }.joined(separator: " ")))
                    subcommand_functions=(\(children.map(\.function).joined(separator: " ")))
                    options=(\(optionWords.map(bashQuote).joined(separator: " ")))
                    value_options=\(bashQuote(" " + valueWords.map { $0 + " " }.joined()))
                    short_values=\(bashQuote(shortValues))
                    positionals=\(arguments.count)
                    repeating=\(repeating ? 1 : 0)
                    help_command=\(isRoot && tree.hasHelpCommand ? 1 : 0)
                    return 0
                fi
                case $2 in
            \(cases.joined(separator: "\n"))
                esac
            }

            """
    }

    /// The call that offers values of this kind; nil for the default (any file).
    private static func bashCompletionCall(_ kind: CompletionKind, prefix p: String) -> String? {
        switch kind {
        case .none, .file(extensions: []):
            return nil
        case .file(let extensions):
            return "\(p)_files " + extensions.map(bashQuote).joined(separator: " ")
        case .directory:
            return "\(p)_directories"
        case .choices(let choices):
            return (["\(p)_offer"] + choices.map(bashQuote)).joined(separator: " ")
        case .dynamic(let query):
            return "\(p)_values " + bashQuote(query)
        }
    }
}

// MARK: - zsh

extension CompletionScript {
    /// One function per command, each an `_arguments` call: options with their help in
    /// brackets, values by kind, positional arguments in order. A command with subcommands
    /// completes their names (with abstracts) through a `->subcommand` state and hands the
    /// rest of the line to the subcommand's function through `->argument`. The file works
    /// both from `$fpath` (autoloaded as `_flow`) and with `source`.
    private static func zsh(_ tree: CompletionTree) -> String {
        let name = oneLine(tree.name)
        var script = """
            #compdef \(tree.name)
            # zsh completion for \(name), generated from its command tree by
            # `\(name) --generate-completion-script zsh`. Put it in a directory of $fpath as
            # _\(name), or load it with `source <(\(name) --generate-completion-script zsh)`.

            """
        for node in tree.nodes {
            script += "\n" + zshCommandFunction(node, tree: tree)
        }
        if tree.hasHelpCommand {
            script += """

                # \(name) help: the subcommand to show help for.
                \(tree.prefix)_help() {
                    (( CURRENT == 2 )) || return 1
                    local -a subcommands
                    subcommands=(
                \(zshSubcommandItems(tree.nodes[0], tree: tree, withHelp: false, indent: 8))
                    )
                    _describe -t subcommands \(zshQuote("\(name) subcommand")) subcommands
                }

                """
        }
        if tree.usesDynamicValues {
            script += """

            # Offers the values \(name) lists for the kind $1 (`\(CommandLineParser.completionValuesOption)`) given
            # the words before the cursor, in its order; after a tab in a line comes its description.
            \(tree.prefix)_values() {
                local program=$\(tree.prefix)_program line
                local -a values displays
                [[ $program == '~/'* ]] && program=$HOME/${program#'~/'}
                for line in "${(@f)$("$program" \(CommandLineParser.completionValuesOption) "$1" "${(Q)PREFIX}" "${\(tree.prefix)_typed[@]}" 2>/dev/null)}"; do
                    [[ -n $line ]] || continue
                    values+=("${line%%$'\\t'*}")
                    if [[ $line == *$'\\t'* ]]; then
                        displays+=("${line%%$'\\t'*}  -- ${line#*$'\\t'}")
                    else
                        displays+=("$line")
                    fi
                done
                (( ${#values} )) || return 1
                compadd -l -V "$1" -d displays -a values
            }

            """
        }
        script += """

            # Autoloaded from $fpath, this file is the body of \(tree.prefix): complete now. Sourced,
            # it registers the function.
            if [[ ${funcstack[1]} == \(tree.prefix) ]]; then
                \(tree.prefix) "$@"
            else
                compdef \(tree.prefix) \(bashWord(tree.name))
            fi

            """
        return script
    }

    private static func zshCommandFunction(_ node: CompletionTree.Node, tree: CompletionTree) -> String {
        let isRoot = node.path.count == 1
        let function = isRoot ? tree.prefix : node.function
        var specs = node.options.flatMap { zshOptionSpecs($0, prefix: tree.prefix) }
        let header = "# \(oneLine(node.path.joined(separator: " "))): \(oneLine(node.command.abstract))"
        // The root keeps the line before the cursor as typed for `prefix_values`:
        // `_arguments` shifts `words` on its way to a subcommand.
        let typed = !isRoot || !tree.usesDynamicValues ? "" : """
                local \(tree.prefix)_program=${(Q)words[1]} \(tree.prefix)_word
                local -a \(tree.prefix)_typed
                # As the shell will pass them: unquoted, and a leading `~` the home directory.
                for \(tree.prefix)_word in "${(@)words[2,CURRENT-1]}"; do
                    if [[ $\(tree.prefix)_word == '~' || $\(tree.prefix)_word == '~/'* ]]; then
                        \(tree.prefix)_typed+=("$HOME${(Q)${\(tree.prefix)_word#?}}")
                    else
                        \(tree.prefix)_typed+=("${(Q)\(tree.prefix)_word}")
                    fi
                done

            """
        if node.children.isEmpty {
            let arguments = node.command.arguments
            for (index, argument) in arguments.enumerated() {
                let kind = argument.repeats && index == arguments.count - 1
                    ? "*:" : argument.isOptional ? "::" : ":"
                specs.append(zshQuote(kind + zshSpecEscape(argument.name) + ":" + zshAction(argument.completion, prefix: tree.prefix)))
            }
            return """
                \(header)
                \(function)() {
                \(typed)    local -a specs
                    specs=(
                \(specs.map { "        " + $0 }.joined(separator: "\n"))
                    )
                    _arguments -s -S : $specs
                }

                """
        }
        specs.append("'(-): :->subcommand'")
        specs.append("'(-)*:: :->argument'")
        let children = node.children.map { tree.nodes[$0] }
        var dispatch = children.map { child in
            "        (\(zshQuote(child.command.name))) \(child.function) && ret=0 ;;"
        }
        if isRoot && tree.hasHelpCommand {
            dispatch.append("        (help) \(tree.prefix)_help && ret=0 ;;")
        }
        let context = node.path.map(zshContextWord).joined(separator: "-")
        return """
            \(header)
            \(function)() {
            \(typed)    local curcontext=$curcontext state state_descr line
                local -A opt_args
                local -i ret=1
                local -a specs
                specs=(
            \(specs.map { "        " + $0 }.joined(separator: "\n"))
                )
                _arguments -s -S -C : $specs && ret=0
                case $state in
                (subcommand)
                    local -a subcommands
                    subcommands=(
            \(zshSubcommandItems(node, tree: tree, withHelp: isRoot && tree.hasHelpCommand, indent: 12))
                    )
                    _describe -t subcommands \(zshQuote(oneLine(node.path.joined(separator: " ")) + " subcommand")) subcommands && ret=0
                    ;;
                (argument)
                    curcontext="${curcontext%:*:*}:\(context)-${words[1]}:"
                    case ${words[1]} in
            \(dispatch.joined(separator: "\n"))
                    esac
                    ;;
                esac
                return $ret
            }

            """
    }

    /// `'name:abstract'` lines for `_describe`, one per subcommand.
    private static func zshSubcommandItems(
        _ node: CompletionTree.Node, tree: CompletionTree, withHelp: Bool, indent: Int
    ) -> String {
        var items = node.children.map { index in
            let child = tree.nodes[index].command
            return zshQuote(zshDescribeEscape(child.name) + ":" + oneLine(child.abstract))
        }
        if withHelp {
            items.append(zshQuote("help:" + CompletionTree.helpAbstract))
        }
        let margin = String(repeating: " ", count: indent)
        return items.map { margin + $0 }.joined(separator: "\n")
    }

    /// The `_arguments` specs of one option: one per name, excluding each other (unless
    /// the option repeats); `--help` and `--version` exclude everything else.
    private static func zshOptionSpecs(_ option: OptionSpec, prefix: String) -> [String] {
        let optionNames = names(option)
        let exclusion: String
        if option.long == "help" || option.long == "version" {
            exclusion = "(- : *)"
        } else if option.repeats {
            exclusion = "*"
        } else if optionNames.count > 1 {
            exclusion = "(" + optionNames.map(zshSpecEscape).joined(separator: " ") + ")"
        } else {
            exclusion = ""
        }
        let help = oneLine(option.help)
        let description = help.isEmpty ? "" : "[" + zshSpecEscape(help) + "]"
        let value = option.valueName.map { ":" + zshSpecEscape($0) + ":" + zshAction(option.completion, prefix: prefix) } ?? ""
        return optionNames.map { name in
            // `--name=`: the value follows an `=` or comes as the next word; `-n+`: it follows
            // in the same word or comes as the next one, as the parser accepts.
            let form = option.isFlag ? "" : name.hasPrefix("--") ? "=" : "+"
            return zshQuote(exclusion + zshSpecEscape(name) + form + description + value)
        }
    }

    /// The `_arguments` action for a kind of value.
    private static func zshAction(_ kind: CompletionKind, prefix: String) -> String {
        switch kind {
        case .none:
            return "_default"
        case .file(extensions: []):
            return "_files"
        case .file(let extensions):
            let escaped = extensions.map { escape($0, where: { !isPlain($0) }, with: "\\") }
            let pattern = escaped.count == 1 ? "*.\(escaped[0])" : "*.(\(escaped.joined(separator: "|")))"
            return "_files -g \"\(pattern)\""
        case .directory:
            return "_files -/"
        case .choices(let choices):
            return "(" + choices.map { escape($0, where: { !isPlain($0) }, with: "\\") }.joined(separator: " ") + ")"
        case .dynamic(let query):
            return "{" + prefix + "_values " + bashWord(query) + "}"
        }
    }

    /// Escapes what `_arguments` reads in a spec: `\`, `:` (ends a field), `[` and `]`
    /// (delimit the description).
    private static func zshSpecEscape(_ text: String) -> String {
        escape(text, where: { "\\:[]".contains($0) }, with: "\\")
    }

    /// Escapes what `_describe` reads in a name: `\` and `:` (ends the name).
    private static func zshDescribeEscape(_ text: String) -> String {
        escape(text, where: { "\\:".contains($0) }, with: "\\")
    }

    /// A word of a completion context (`:completion:*:*:flow-run:*`), which is `:`-delimited.
    private static func zshContextWord(_ text: String) -> String {
        String(text.map { $0 == ":" || $0 == "\"" || $0 == "$" || $0 == "`" || $0 == "\\" ? "_" : $0 })
    }

    private static func zshQuote(_ text: String) -> String {
        bashQuote(text)
    }
}

// MARK: - fish

extension CompletionScript {
    /// `complete` lines, grouped by command. Before a subcommand is given
    /// (`__fish_use_subcommand`) fish offers the subcommands and the root's options; after
    /// one (`__fish_seen_subcommand_from run`), that command's options and what its
    /// positional arguments take, each at its own position (`_flow_position`): fish has no
    /// notion of positions, and without it `flow logs RUN <tab>` offered run ids again
    /// beside the run's steps, and `flow run FILE <tab>` file names beside the actions.
    private static func fish(_ tree: CompletionTree) -> String {
        let name = oneLine(tree.name)
        let command = "complete -c " + fishWord(tree.name)
        var lines = [
            "# fish completion for \(name), generated from its command tree by",
            "# `\(name) --generate-completion-script fish`. Put it in",
            "# ~/.config/fish/completions/\(name).fish, or load it with",
            "# `\(name) --generate-completion-script fish | source`.",
        ]
        if tree.usesDynamicValues {
            lines += [
                "",
                "# Lists the values \(name) gives for the kind $argv[1] (`\(CommandLineParser.completionValuesOption)`) given the",
                "# words before the cursor; after a tab in a line comes its description.",
                "function \(tree.prefix)_values",
                "    set -l typed",
                "    # As the program will get them: fish gives the words unquoted, with their `~`.",
                "    for word in (commandline -opc)",
                "        string match -q -- '~' $word; or string match -q -- '~/*' $word; and set word $HOME(string sub -s 2 -- $word)",
                "        set -a typed $word",
                "    end",
                "    # The value alone: fish completes `--tags=a,` as `a,` and puts the `--tags=` back.",
                "    set -l current (commandline -ct | string replace -r -- '^--[^=]*=' '')",
                "    $typed[1] \(CommandLineParser.completionValuesOption) $argv[1] \"$current\" $typed[2..-1] 2>/dev/null",
                "end",
            ]
        }
        if tree.nodes.contains(where: { $0.children.isEmpty && !$0.command.arguments.isEmpty }) {
            lines += [
                "",
                "# Whether the word under the cursor is positional argument $argv[1] (from 0) of the",
                "# command $argv[2] words deep (`+`: or a later one): counts the words after the",
                "# command that are not options or the values of the options listed after them.",
                "function \(tree.prefix)_position",
                "    set -l words (commandline -opc)",
                "    set -l n 0",
                "    set -l value 0",
                "    set -l dashdash 0",
                "    for word in $words[(math $argv[2] + 1)..-1]",
                "        if test $value = 1",
                "            set value 0",
                "        else if test $dashdash = 0; and test \"$word\" = --",
                "            set dashdash 1",
                "        else if test $dashdash = 0; and string match -q -- '-?*' $word",
                "            contains -- $word $argv[4..-1]; and set value 1",
                "        else",
                "            set n (math $n + 1)",
                "        end",
                "    end",
                "    test $n -eq $argv[1]; or begin; test $argv[3] = +; and test $n -gt $argv[1]; end",
                "end",
            ]
        }
        for node in tree.nodes {
            let isRoot = node.path.count == 1
            let children = node.children.map { tree.nodes[$0] }
            let condition = fishCondition(node, tree: tree)
            let prefix = command + (condition.map { " -n " + fishQuote($0) } ?? "")
            lines.append("")
            lines.append("# \(oneLine(node.path.joined(separator: " "))): \(oneLine(node.command.abstract))")
            for child in children {
                lines.append(prefix + " -f -a " + fishWord(child.command.name) + fishDescription(child.command.abstract))
            }
            if isRoot && tree.hasHelpCommand {
                lines.append(prefix + " -f -a help" + fishDescription(CompletionTree.helpAbstract))
            }
            for option in node.options {
                var line = prefix
                if let short = option.short {
                    line += " -s " + fishWord(String(short))
                }
                line += " -l " + fishWord(option.long)
                if !option.isFlag {
                    line += fishValue(option.completion, required: true, prefix: tree.prefix)
                }
                lines.append(line + fishDescription(option.help))
            }
            guard children.isEmpty else { continue }
            if node.command.arguments.isEmpty {
                // No positional argument: no file names either.
                lines.append(prefix + " -f")
            }
            // The words that are an option's value, not an argument (`--state-dir DIR`).
            let valueOptions = node.options.filter { !$0.isFlag }.flatMap { option in
                ["--" + option.long] + (option.short.map { ["-" + String($0)] } ?? [])
            }
            func at(_ index: Int, orLater: Bool) -> String {
                let test = ([tree.prefix + "_position", String(index), String(node.path.count), orLater ? "+" : "="]
                    + valueOptions.map(fishWord)).joined(separator: " ")
                return command + " -n " + fishQuote((condition.map { $0 + "; and " } ?? "") + test)
            }
            for (index, argument) in node.command.arguments.enumerated() {
                let value = fishValue(argument.completion, required: false, prefix: tree.prefix)
                guard !value.isEmpty else { continue }
                // File names keep fish's descriptions; the argument's help describes choices.
                let isChoice = if case .choices = argument.completion { true } else { false }
                lines.append(at(index, orLater: argument.repeats) + value + (isChoice ? fishDescription(argument.help) : ""))
            }
            if let last = node.command.arguments.last, !last.repeats {
                // Every argument is there: no file names (fish's default) either.
                lines.append(at(node.command.arguments.count, orLater: true) + " -f")
            }
        }
        if tree.hasHelpCommand {
            let prefix = command + " -n " + fishQuote("__fish_seen_subcommand_from help")
            lines.append("")
            lines.append("# \(name) help: the subcommand to show help for.")
            for index in tree.nodes[0].children {
                let child = tree.nodes[index].command
                lines.append(prefix + " -f -a " + fishWord(child.name) + fishDescription(child.abstract))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The condition under which fish is completing `node`'s options and arguments: its
    /// subcommand path was seen (and none of its own subcommands yet); nil for a root
    /// without subcommands, which is always the one being completed.
    private static func fishCondition(_ node: CompletionTree.Node, tree: CompletionTree) -> String? {
        var parts = node.path.dropFirst().map { "__fish_seen_subcommand_from " + fishWord($0) }
        if parts.isEmpty {
            return node.children.isEmpty ? nil : "__fish_use_subcommand"
        }
        if !node.children.isEmpty {
            let names = node.children.map { fishWord(tree.nodes[$0].command.name) }
            parts.append("not __fish_seen_subcommand_from " + names.joined(separator: " "))
        }
        return parts.joined(separator: "; and ")
    }

    /// The flags and `-a` list that complete a value of this kind (`-r`: the option needs
    /// one; `-f`: no other file names; `-F`: file names).
    private static func fishValue(_ kind: CompletionKind, required: Bool, prefix: String) -> String {
        let r = required ? " -r" : ""
        switch kind {
        case .none:
            return r
        case .file(extensions: []):
            return r + " -F"
        case .file(let extensions):
            // `__fish_complete_suffix` lists the matching files first, then the others: `-k`
            // keeps that order.
            let calls = extensions.map { "(__fish_complete_suffix " + fishWord("." + $0) + ")" }
            return r + " -k -f -a " + fishQuote(calls.joined(separator: " "))
        case .directory:
            return r + " -f -a " + fishQuote("(__fish_complete_directories)")
        case .choices(let choices):
            return r + " -f -a " + fishQuote(choices.map(fishWord).joined(separator: " "))
        case .dynamic(let query):
            return r + " -k -f -a " + fishQuote("(" + prefix + "_values " + fishWord(query) + ")")
        }
    }

    private static func fishDescription(_ text: String) -> String {
        let line = oneLine(text)
        return line.isEmpty ? "" : " -d " + fishQuote(line)
    }

    /// `text` as one fish word: as it is when it has nothing fish would read, else in single
    /// quotes (where only `\` and `'` are escaped).
    private static func fishWord(_ text: String) -> String {
        !text.isEmpty && text.allSatisfy(isPlain) ? text : fishQuote(text)
    }

    private static func fishQuote(_ text: String) -> String {
        "'" + escape(text, where: { $0 == "\\" || $0 == "'" }, with: "\\") + "'"
    }
}

// MARK: - Shared

extension CompletionScript {
    /// `-n` and `--name`, as typed.
    private static func names(_ option: OptionSpec) -> [String] {
        (option.short.map { ["-\($0)"] } ?? []) + ["--\(option.long)"]
    }

    /// `text` in single quotes for bash or zsh (a quote inside closes, escapes and reopens).
    private static func bashQuote(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }

    /// `text` as one bash word: as it is when it has nothing the shell would read.
    private static func bashWord(_ text: String) -> String {
        !text.isEmpty && text.allSatisfy(isPlain) ? text : bashQuote(text)
    }

    /// Characters no shell reads specially, also at the start of a word.
    private static func isPlain(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "_-.,+=@/".contains(character))
    }

    /// `text` with `mark` before every character `needsEscape` picks.
    private static func escape(_ text: String, where needsEscape: (Character) -> Bool, with mark: Character) -> String {
        var result = ""
        for character in text {
            if needsEscape(character) {
                result.append(mark)
            }
            result.append(character)
        }
        return result
    }

    /// `text` on one line: help and abstracts go into comments, `[...]` and quoted
    /// arguments, which a line break would end or break.
    private static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 })
    }
}

/// The command tree as the generators walk it: every command in a fixed order (the root
/// first, each command before its subcommands), with the options it accepts without
/// listing them and a shell function name of its own.
private struct CompletionTree {
    struct Node {
        var command: CommandSpec
        /// The names from the root's down to this command's.
        var path: [String]
        /// The spec's options, then the implicit ones.
        var options: [OptionSpec]
        /// The function that completes this command (bash and zsh).
        var function: String
        /// Indices of the subcommands in `nodes`.
        var children: [Int] = []
    }

    static let helpAbstract = "Show subcommand help information."

    /// The tool's name, as typed.
    let name: String
    /// The main function's name (`_flow`); the other functions start with it.
    let prefix: String
    /// Whether the root takes `help SUBCOMMAND` (it has subcommands, none named `help`).
    let hasHelpCommand: Bool
    /// Whether some value completes with `CompletionKind.dynamic` (the zsh and fish scripts
    /// then define the function that asks the program).
    private(set) var usesDynamicValues = false
    private(set) var nodes: [Node] = []
    private var usedFunctions: Set<String> = []

    init(_ root: CommandSpec) {
        name = root.name
        prefix = "_" + Self.identifier(root.name)
        hasHelpCommand = !root.subcommands.isEmpty && root.subcommand("help") == nil
        // The walker's helpers and the help function keep their names.
        usedFunctions = [prefix, prefix + "_offer", prefix + "_files", prefix + "_directories",
                         prefix + "_enter", prefix + "_help", prefix + "_values", prefix + "_dequote", prefix + "_program", prefix + "_typed", prefix + "_word"]
        add(root, path: [root.name])
        usesDynamicValues = nodes.contains { node in
            (node.options.map(\.completion) + node.command.arguments.map(\.completion)).contains {
                if case .dynamic = $0 { true } else { false }
            }
        }
    }

    @discardableResult
    private mutating func add(_ command: CommandSpec, path: [String]) -> Int {
        let index = nodes.count
        nodes.append(Node(command: command, path: path, options: Self.options(of: command, isRoot: path.count == 1),
                          function: function(for: path)))
        for subcommand in command.subcommands {
            let child = add(subcommand, path: path + [subcommand.name])
            nodes[index].children.append(child)
        }
        return index
    }

    /// `_flow_cmd_run`: a name made of identifier characters; a name two paths share
    /// (`a-b` and `a_b`) gets a number.
    private mutating func function(for path: [String]) -> String {
        let base = prefix + "_cmd" + path.dropFirst().map { "_" + Self.identifier($0) }.joined()
        var name = base
        var number = 2
        while usedFunctions.contains(name) {
            name = base + "_\(number)"
            number += 1
        }
        usedFunctions.insert(name)
        return name
    }

    /// The options `command` accepts: its own, then `--generate-completion-script` on the
    /// root, `--version` and `-h`/`--help`, unless the spec lists them already.
    private static func options(of command: CommandSpec, isRoot: Bool) -> [OptionSpec] {
        var options = command.options
        if isRoot && command.option("generate-completion-script") == nil {
            options.append(.value("generate-completion-script", valueName: "shell",
                                  help: "Generate a completion script for a shell.", choices: CompletionScript.shells))
        }
        if command.option("version") == nil {
            options.append(.flag("version", help: "Show the version."))
        }
        if command.option("help") == nil {
            let hTaken = command.options.contains { $0.short == "h" }
            options.append(.flag("help", short: hTaken ? nil : "h", help: "Show help information."))
        }
        return options
    }

    /// `text` with every character other than an ASCII letter, digit or `_` replaced by `_`.
    private static func identifier(_ text: String) -> String {
        let mapped = String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") ? $0 : "_" })
        return mapped.isEmpty ? "_" : mapped
    }
}
