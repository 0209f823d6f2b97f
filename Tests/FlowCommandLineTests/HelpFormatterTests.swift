import Testing
@testable import FlowCommandLine

@Suite struct HelpFormatterTests {
    @Test func subcommandHelpHasEverySection() {
        let help = HelpFormatter.help([sampleRoot, sampleRoot.subcommand("run")!])
        let expected = """
            OVERVIEW: Run a file.

            USAGE: tool run <file> [<action>] [--var <key=value> ...] [--output <output>] [--limit <limit>] [--dry-run] [--follow] [--quiet] [--name <name>]

            ARGUMENTS:
              <file>                  The file.
              <action>                An action.

            OPTIONS:
              --var <key=value>       A variable. (repeatable)
              --output <output>       How to show it. (values: auto, json; default: auto)
              --limit <limit>         At most this many.
              --dry-run               Run nothing.
              -f, --follow            Keep going.
              -q, --quiet             Say less.
              -n, --name <name>       A name.
              --version               Show the version.
              -h, --help              Show help information.

            """
        #expect(help == expected)
    }

    @Test func rootHelpListsSubcommands() {
        let help = HelpFormatter.help([sampleRoot])
        #expect(help.contains("USAGE: tool <subcommand>\n"))
        #expect(help.contains("SUBCOMMANDS:\n  run                     Run a file.\n  check                   Check files.\n"))
        #expect(help.hasSuffix("  See 'tool help <subcommand>' for detailed help.\n"))
    }

    @Test func longTextWrapsUnderItsColumnAndExamplesStayWhole() {
        let long = String(repeating: "word ", count: 30) + "end"
        let row = HelpFormatter.row("--a-very-long-option-name <value>", long)
        let lines = row.split(separator: "\n")
        #expect(lines[0] == "  --a-very-long-option-name <value>")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix(String(repeating: " ", count: 26)) && $0.count <= 79 })
        let example = "  tool run build.yaml --var target=prod --var mode=release --tags fast,slow --output json"
        #expect(HelpFormatter.discussion(long + "\n" + example).hasSuffix("\n" + example))
    }

    @Test func usageErrorShowsTheCommandsUsage() {
        let run = sampleRoot.subcommand("run")!
        let error = UsageError("Missing value for '--limit <limit>'", path: [sampleRoot, run],
                               subject: ("--limit <limit>", "At most this many."))
        #expect(HelpFormatter.error(error) == """
            Error: Missing value for '--limit <limit>'
            Help:  --limit <limit>  At most this many.
            Usage: tool run <file> [<action>] [--var <key=value> ...] [--output <output>] [--limit <limit>] [--dry-run] [--follow] [--quiet] [--name <name>]
              See 'tool run --help' for more information.

            """)
    }
}
