#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import FlowCommandLine

/// A small tree of its own (not flow's commands): positional arguments of every completion
/// kind, value options with and without short names, a repeating option, values the tool
/// lists itself (`pick`), a nested subcommand, and help text that zsh and fish must escape.
private let completionRoot = CommandSpec(
    name: "tool", abstract: "A sample tool.",
    subcommands: [
        CommandSpec(
            name: "run", abstract: "Run a file.",
            arguments: [
                ArgumentSpec("file", help: "The file.", completion: .file(extensions: ["yaml", "yml"])),
                ArgumentSpec("action", help: "An action.", isOptional: true, completion: .choices(["build", "test"])),
            ],
            options: [
                .value("output", help: "Show it: [fast] or 'slow'.", choices: ["auto", "json"]),
                .value("var", valueName: "key=value", help: "A variable.", repeats: true),
                .value("dir", short: "d", help: "A directory.", completion: .directory),
                .value("name", short: "n", help: "A name."),
                .flag("follow", short: "f", help: "Keep going."),
            ]),
        CommandSpec(
            name: "check", abstract: "Check files.",
            arguments: [ArgumentSpec("files", help: "Files to check.", repeats: true, completion: .file(extensions: ["yaml"]))],
            options: [.flag("strict", help: "Be strict.")]),
        CommandSpec(
            name: "pick", abstract: "Pick things the tool lists.",
            arguments: [
                ArgumentSpec("file", help: "The file.", completion: .file(extensions: ["yaml"])),
                ArgumentSpec("thing", help: "A thing.", isOptional: true, completion: .dynamic("things")),
            ],
            options: [
                .value("only", help: "One name.", completion: .dynamic("names")),
                .flag("loud", help: "Say it."),
            ]),
        CommandSpec(
            name: "group", abstract: "Group things.",
            subcommands: [
                CommandSpec(name: "list", abstract: "List things.",
                            arguments: [ArgumentSpec("kind", help: "A kind.", completion: .choices(["a", "b"]))]),
            ]),
    ],
    version: "1.0")

@Suite struct CompletionScriptTests {
    @Test func onlyKnownShellsHaveAScript() {
        #expect(CompletionScript.script(for: "tcsh", root: completionRoot) == nil)
        #expect(CompletionScript.script(for: "", root: completionRoot) == nil)
        for shell in CompletionScript.shells {
            let script = CompletionScript.script(for: shell, root: completionRoot)
            #expect(script != nil)
            #expect(script == CompletionScript.script(for: shell, root: completionRoot))
        }
    }

    // MARK: bash

    @Test func bashScriptPassesSyntaxCheck() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/tool.bash"
        write(try #require(CompletionScript.script(for: "bash", root: completionRoot)), to: path)
        let check = run("bash -n \(quoted(path)) 2>&1")
        #expect(check.status == 0, "\(check.output)")
    }

    @Test func bashFunctionNamesComeFromTheRootsName() throws {
        let root = CommandSpec(name: "my-tool", abstract: "A tool.", subcommands: [CommandSpec(name: "go-on", abstract: "Go on.")])
        let script = try #require(CompletionScript.script(for: "bash", root: root))
        #expect(script.contains("\n_my_tool() {\n"))
        #expect(script.contains("\n_my_tool_cmd_go_on() {\n"))
        #expect(script.hasSuffix("\ncomplete -F _my_tool my-tool\n"))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        write(script, to: directory.path + "/my-tool.bash")
        #expect(run("bash -n \(quoted(directory.path + "/my-tool.bash")) 2>&1").status == 0)
    }

    @Test func bashCompletesSubcommands() throws {
        let bash = try BashCompletion()
        defer { bash.remove() }
        #expect(bash.complete("tool", "") == ["check", "group", "help", "pick", "run"])
        #expect(bash.complete("tool", "r") == ["run"])
        #expect(bash.complete("tool", "help", "") == ["check", "group", "pick", "run"])
        #expect(bash.complete("tool", "help", "g") == ["group"])
        #expect(bash.complete("tool", "group", "") == ["list"])
        #expect(bash.complete("tool", "group", "list", "") == ["a", "b"])
    }

    @Test func bashCompletesOptions() throws {
        let bash = try BashCompletion()
        defer { bash.remove() }
        #expect(bash.complete("tool", "-") == ["--generate-completion-script", "--help", "--version", "-h"])
        #expect(bash.complete("tool", "run", "-") == [
            "--dir", "--follow", "--help", "--name", "--output", "--var", "--version", "-d", "-f", "-h", "-n",
        ])
        #expect(bash.complete("tool", "run", "--o") == ["--output"])
        #expect(bash.complete("tool", "check", "a.yaml", "--") == ["--help", "--strict", "--version"])
        #expect(bash.complete("tool", "group", "list", "--h") == ["--help"])
    }

    @Test func bashCompletesOptionValues() throws {
        let bash = try BashCompletion()
        defer { bash.remove() }
        #expect(bash.complete("tool", "run", "--output", "") == ["auto", "json"])
        #expect(bash.complete("tool", "run", "--output", "j") == ["json"])
        #expect(bash.complete("tool", "--generate-completion-script", "") == ["bash", "fish", "zsh"])
        #expect(bash.complete("tool", "run", "--dir", "") == ["sub"])
        #expect(bash.complete("tool", "run", "-d", "") == ["sub"])
        #expect(bash.complete("tool", "run", "-fd", "") == ["sub"])
        // A value option of kind `.none`: any file.
        #expect(bash.complete("tool", "run", "-n", "") == ["a.yaml", "b.yml", "c.txt", "sub"])
    }

    @Test func bashCompletesValuesAfterAnEqualsSign() throws {
        let bash = try BashCompletion()
        defer { bash.remove() }
        // With `=` out of COMP_WORDBREAKS, the word is whole and is replaced whole.
        #expect(bash.complete("tool", "run", "--output=j") == ["--output=json"])
        #expect(bash.complete("tool", "run", "--dir=s") == ["--dir=sub"])
        // With it (bash's default), `=` is a word of its own and only what follows is replaced.
        #expect(bash.complete("tool", "run", "--output", "=") == ["auto", "json"])
        #expect(bash.complete("tool", "run", "--output", "=", "j") == ["json"])
    }

    @Test func bashCompletesPositionalArgumentsInOrder() throws {
        let bash = try BashCompletion()
        defer { bash.remove() }
        let workflows = ["a.yaml", "b.yml", "sub"]
        #expect(bash.complete("tool", "run", "") == workflows)
        #expect(bash.complete("tool", "run", "a") == ["a.yaml"])
        #expect(bash.complete("tool", "run", "a.yaml", "") == ["build", "test"])
        // Option values are not positional arguments, flags take none, grouped short
        // options end with one that takes the next word or the rest of their own.
        #expect(bash.complete("tool", "run", "-n", "x", "a.yaml", "--follow", "") == ["build", "test"])
        #expect(bash.complete("tool", "run", "-fn", "x", "a.yaml", "") == ["build", "test"])
        #expect(bash.complete("tool", "run", "-nx", "a.yaml", "") == ["build", "test"])
        #expect(bash.complete("tool", "run", "--output=json", "a.yaml", "") == ["build", "test"])
        // `--var a=1` as bash splits it.
        #expect(bash.complete("tool", "run", "--var", "a", "=", "1", "") == workflows)
        #expect(bash.complete("tool", "run", "--output", "=", "json", "") == workflows)
        // After `--` everything is positional.
        #expect(bash.complete("tool", "run", "--", "") == workflows)
        #expect(bash.complete("tool", "run", "--", "-x", "") == ["build", "test"])
        // A repeating argument keeps applying.
        #expect(bash.complete("tool", "check", "a.yaml", "b.yml", "") == ["a.yaml", "sub"])
        // With every argument given, the options are left.
        #expect(bash.complete("tool", "run", "a.yaml", "build", "").contains("--output"))
    }

    @Test func bashAsksTheToolForDynamicValues() throws {
        let bash = try BashCompletion()
        defer { bash.remove() }
        #expect(bash.complete("tool", "pick", "a.yaml", "--only", "") == ["alpha", "beta", #"with\ space"#])
        // The tool gets the kind, the word so far and the words before it, after the program.
        #expect(bash.lastToolArguments() == ["--complete-values", "names", "", "pick", "a.yaml", "--only"])
        #expect(bash.complete("tool", "pick", "a.yaml", "--only", "b") == ["beta"])
        #expect(bash.lastToolArguments() == ["--complete-values", "names", "b", "pick", "a.yaml", "--only"])
        #expect(bash.complete("tool", "pick", "--loud", "a.yaml", "") == ["one", "two"])
        #expect(bash.complete("tool", "pick", "--only", "=", "a") == ["alpha"])
        #expect(bash.complete("tool", "pick", "--only=a") == ["--only=alpha"])
        // Quotes and a `~` as typed are taken off before the tool sees the words.
        #expect(bash.complete("tool", "pick", "'a.yaml'", "") == ["one", "two"])
        #expect(bash.lastToolArguments() == ["--complete-values", "things", "", "pick", "a.yaml"])
        #expect(bash.complete("tool", "pick", "~/x.yaml", "") == ["one", "two"])
        #expect(bash.lastToolArguments()?.last?.hasSuffix("/x.yaml") == true)
        #expect(bash.lastToolArguments()?.last?.hasPrefix("~") == false)
    }

    // MARK: zsh

    @Test func zshScriptHasKeyLines() throws {
        let script = try #require(CompletionScript.script(for: "zsh", root: completionRoot))
        #expect(script.hasPrefix("#compdef tool\n"))
        #expect(script.contains("\n_tool() {\n"))
        #expect(script.contains("        'run:Run a file.'\n"))
        #expect(script.contains("        'help:Show subcommand help information.'\n"))
        #expect(script.contains("        ('run') _tool_cmd_run && ret=0 ;;\n"))
        #expect(script.contains(#"'--output=[Show it\: \[fast\] or '\''slow'\''.]:output:(auto json)'"#))
        #expect(script.contains("'*--var=[A variable.]:key=value:_default'"))
        #expect(script.contains("'(-d --dir)-d+[A directory.]:dir:_files -/'"))
        #expect(script.contains("'(-f --follow)--follow[Keep going.]'"))
        #expect(script.contains("'(- : *)-h[Show help information.]'"))
        #expect(script.contains(#"':file:_files -g "*.(yaml|yml)"'"#))
        #expect(script.contains("'::action:(build test)'"))
        #expect(script.contains(#"'*:files:_files -g "*.yaml"'"#))
        #expect(script.contains("\n_tool_cmd_group_list() {\n"))
        #expect(script.contains("    compdef _tool tool\n"))
    }

    @Test func zshScriptAsksTheToolForDynamicValues() throws {
        let script = try #require(CompletionScript.script(for: "zsh", root: completionRoot))
        #expect(script.contains("'--only=[One name.]:only:{_tool_values names}'"))
        #expect(script.contains("'::thing:{_tool_values things}'"))
        // The root keeps the words as typed before `_arguments` shifts them.
        #expect(script.contains("\n_tool() {\n    local _tool_program=${(Q)words[1]} _tool_word\n"))
        // Unquoted, and a leading `~` is the home directory (zsh gives the words as typed).
        #expect(script.contains(#"_tool_typed+=("$HOME${(Q)${_tool_word#?}}")"#))
        #expect(script.contains(#""$program" --complete-values "$1" "${(Q)PREFIX}" "${_tool_typed[@]}" 2>/dev/null"#))
        // Without dynamic values, none of this is written.
        let plain = CommandSpec(name: "tool", abstract: "A tool.", subcommands: [CommandSpec(name: "go", abstract: "Go.")])
        let plainScript = try #require(CompletionScript.script(for: "zsh", root: plain))
        #expect(!plainScript.contains("_values"))
        #expect(!plainScript.contains("_typed"))
    }

    @Test(.enabled(if: commandExists("zsh"))) func zshScriptPassesSyntaxCheck() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        write(try #require(CompletionScript.script(for: "zsh", root: completionRoot)), to: directory.path + "/_tool")
        let check = run("zsh -n \(quoted(directory.path + "/_tool")) 2>&1")
        #expect(check.status == 0, "\(check.output)")
    }

    // MARK: fish

    @Test func fishScriptHasKeyLines() throws {
        let script = try #require(CompletionScript.script(for: "fish", root: completionRoot))
        let lines = script.split(separator: "\n").map(String.init)
        let run = "complete -c tool -n '__fish_seen_subcommand_from run'"
        let runAt = "complete -c tool -n '__fish_seen_subcommand_from run; and _tool_position"
        for line in [
            "complete -c tool -n '__fish_use_subcommand' -f -a run -d 'Run a file.'",
            "complete -c tool -n '__fish_use_subcommand' -f -a help -d 'Show subcommand help information.'",
            "complete -c tool -n '__fish_use_subcommand' -l generate-completion-script -r -f -a 'bash zsh fish' -d 'Generate a completion script for a shell.'",
            #"\#(run) -l output -r -f -a 'auto json' -d 'Show it: [fast] or \'slow\'.'"#,
            "\(run) -s d -l dir -r -f -a '(__fish_complete_directories)' -d 'A directory.'",
            "\(run) -s n -l name -r -d 'A name.'",
            "\(run) -s f -l follow -d 'Keep going.'",
            "\(run) -s h -l help -d 'Show help information.'",
            // Each positional argument at its position, past the options' values; none after the last.
            "\(runAt) 0 2 = --output --var --dir -d --name -n' -k -f -a '(__fish_complete_suffix .yaml) (__fish_complete_suffix .yml)'",
            "\(runAt) 1 2 = --output --var --dir -d --name -n' -f -a 'build test' -d 'An action.'",
            "\(runAt) 2 2 + --output --var --dir -d --name -n' -f",
            "complete -c tool -n '__fish_seen_subcommand_from check; and _tool_position 0 2 +' -k -f -a '(__fish_complete_suffix .yaml)'",
            "complete -c tool -n '__fish_seen_subcommand_from group; and not __fish_seen_subcommand_from list' -f -a list -d 'List things.'",
            "complete -c tool -n '__fish_seen_subcommand_from group; and __fish_seen_subcommand_from list; and _tool_position 0 3 =' -f -a 'a b' -d 'A kind.'",
            "complete -c tool -n '__fish_seen_subcommand_from help' -f -a check -d 'Check files.'",
        ] {
            #expect(lines.contains(line), "missing: \(line)")
        }
    }

    @Test(.enabled(if: commandExists("fish"))) func fishScriptPassesSyntaxCheckAndCompletes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/tool.fish"
        write(try #require(CompletionScript.script(for: "fish", root: completionRoot)), to: path)
        let check = run("fish --no-execute \(quoted(path)) 2>&1")
        #expect(check.status == 0, "\(check.output)")
        func complete(_ line: String) -> [String] {
            let command = "source \(quoted(path)); complete -C \(quoted(line))"
            return run("fish --no-config -c \(quoted(command)) 2>&1").output
                .split(separator: "\n").map { String($0.split(separator: "\t")[0]) }.sorted()
        }
        #expect(complete("tool ") == ["check", "group", "help", "pick", "run"])
        #expect(complete("tool run --output ") == ["auto", "json"])
        #expect(complete("tool group list ") == ["a", "b"])
        // Values the tool lists, with its descriptions; quotes as typed are taken off.
        let bin = directory.path + "/bin"
        mkdir(bin, 0o755)
        writeFakeTool(to: bin + "/tool")
        func completeWithTool(_ line: String) -> [String] {
            let command = "set -gx PATH \(quoted(bin)) $PATH; source \(quoted(path)); complete -C \(quoted(line))"
            return run("fish --no-config -c \(quoted(command)) 2>&1").output.split(separator: "\n").map(String.init).sorted()
        }
        #expect(completeWithTool("tool pick a.yaml --only ") == ["alpha\tThe first", "beta\tOne name.", "with space\tOne name."])
        #expect(completeWithTool("tool pick 'a.yaml' --only b") == ["beta\tOne name."])
        let arguments = String(decoding: FileManager.default.contents(atPath: bin + "/../arguments") ?? Data(), as: UTF8.self)
        #expect(arguments == "--complete-values\nnames\nb\npick\na.yaml\n--only\n")
    }
}

// MARK: - Support

/// The bash script loaded in a fresh `bash` for each completion, in a directory holding
/// `a.yaml`, `b.yml`, `c.txt` and `sub/`.
private struct BashCompletion {
    let directory: TemporaryDirectory
    let files: String
    let script: String

    init() throws {
        directory = try TemporaryDirectory()
        files = directory.path + "/files"
        script = directory.path + "/tool.bash"
        mkdir(files, 0o755)
        mkdir(files + "/sub", 0o755)
        for name in ["a.yaml", "b.yml", "c.txt"] {
            write("", to: files + "/" + name)
        }
        write(try #require(CompletionScript.script(for: "bash", root: completionRoot)), to: script)
        mkdir(directory.path + "/bin", 0o755)
        writeFakeTool(to: directory.path + "/bin/tool")
    }

    /// What the fake `tool` was last called with, one argument a line.
    func lastToolArguments() -> [String]? {
        guard let data = FileManager.default.contents(atPath: directory.path + "/arguments") else { return nil }
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// What `_tool` offers for `words`, the last one being under the cursor, sorted.
    func complete(_ words: String...) -> [String] {
        let driver = """
            source \(quoted(script)) || exit 1
            cd \(quoted(files)) || exit 1
            PATH=\(quoted(directory.path + "/bin")):$PATH
            COMP_WORDS=(\(words.map(quoted).joined(separator: " ")))
            COMP_CWORD=\(words.count - 1)
            _tool
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let path = directory.path + "/driver.bash"
        write(driver, to: path)
        let result = run("bash --norc --noprofile \(quoted(path)) 2>&1")
        #expect(result.status == 0, "\(result.output)")
        return result.output.split(separator: "\n").map(String.init).sorted()
    }

    func remove() {
        directory.remove()
    }
}

/// A directory of its own under /tmp, removed by `remove()`.
private struct TemporaryDirectory {
    struct Failure: Error {}
    let path: String

    init() throws {
        var template = Array("/tmp/flow-completion-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw Failure() }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    func remove() {
        _ = run("rm -rf \(quoted(path))")
    }
}

/// Runs `command` with /bin/sh: its exit status and standard output.
private func run(_ command: String) -> (status: Int32, output: String) {
    guard let pipe = popen(command, "r") else { return (-1, "") }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, pipe)
        if count <= 0 { break }
        output += buffer[0..<count]
    }
    let status = pclose(pipe)
    return ((status >> 8) & 0xff, String(decoding: output, as: UTF8.self))
}

/// A `tool` program for `--complete-values`: it keeps its arguments in `../arguments` and
/// lists `names` (one with a description, one with a space) and `things`.
private func writeFakeTool(to path: String) {
    write(#"""
        #!/bin/sh
        printf '%s\n' "$@" > "$(dirname "$0")/../arguments"
        case $2 in
        names) printf 'alpha\tThe first\nbeta\nwith space\n' ;;
        things) printf 'one\ntwo\n' ;;
        esac
        """#, to: path)
    chmod(path, 0o755)
}

private func write(_ text: String, to path: String) {
    guard let file = fopen(path, "w") else {
        Issue.record("cannot write \(path)")
        return
    }
    fputs(text, file)
    fclose(file)
}

/// `text` in single quotes for sh and bash.
private func quoted(_ text: String) -> String {
    "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
}

private func commandExists(_ name: String) -> Bool {
    run("command -v \(quoted(name)) >/dev/null 2>&1").status == 0
}
