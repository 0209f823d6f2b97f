@testable import FlowKit
import Testing

/// Other tools' placeholders (`{{.VERSION}}`, `{{ version }}`): the detector finds single
/// names outside `${{ … }}`, and the validator warns (`foreign-template`) only about those
/// naming a declared var or a param of the enclosing action.
@Suite struct ForeignTemplateTests {
    /// The placeholders of `text` as (written, column of the first brace, column past the last).
    static func found(_ text: String) -> [(String, Int, Int)] {
        ForeignPlaceholder.find(in: text, locate: { FlowKit.SourceLocation(line: 1, column: 1 + $0) })
            .map { ($0.written, $0.span.start.column, $0.span.end.column) }
    }

    static func names(_ text: String) -> [String] {
        ForeignPlaceholder.find(in: text, locate: { FlowKit.SourceLocation(line: 1, column: 1 + $0) }).map(\.name)
    }

    // MARK: Detector

    @Test func findsTheFormsOfGoTaskJustAndJinja() {
        #expect(Self.names("{{.VERSION}}") == ["VERSION"])
        #expect(Self.names("{{ .VERSION }}") == ["VERSION"])
        #expect(Self.names("{{version}}") == ["version"])
        #expect(Self.names("{{ version }}") == ["version"])
        #expect(Self.names("{{\tversion\t}}") == ["version"])
        #expect(Self.names("{{- .VERSION -}}") == ["VERSION"])
        #expect(Self.names("{{ build_dir }} {{ my-var }}") == ["build_dir", "my-var"])
        let dotted = ForeignPlaceholder.find(in: "{{.A}} {{ b }}", locate: { FlowKit.SourceLocation(line: 1, column: 1 + $0) })
        #expect(dotted.map(\.dotted) == [true, false])
    }

    /// The span covers exactly the braces and what is between them.
    @Test func theSpanIsThePlaceholder() {
        let found = Self.found("echo v{{.VERSION}} and {{ name }}!")
        #expect(found.map(\.0) == ["{{.VERSION}}", "{{ name }}"])
        #expect(found.map(\.1) == [7, 24])
        #expect(found.map(\.2) == [19, 34])
    }

    @Test func pathsFiltersAndOtherTemplatesAreNotPlaceholders() {
        #expect(Self.names("docker inspect --format '{{.State.Running}}'").isEmpty)
        #expect(Self.names("{{ version | default('1') }}").isEmpty)
        #expect(Self.names("{{ version }}{{ end }}") == ["version", "end"], "a single name is a candidate; the validator judges it")
        #expect(Self.names("{{ printf \"%s\" .X }}").isEmpty)
        #expect(Self.names("{{ 1 }} {{}} {{ }} {{.}}").isEmpty)
        #expect(Self.names("{{ version").isEmpty)
        #expect(Self.names("{ version } ${version} $version").isEmpty)
    }

    /// make's `$(NAME)`: one name in parentheses, not `$$(…)` (make's escape) nor
    /// arithmetic or a command line; in a shell command only an upper-case name, as
    /// `$(date)` there is the shell's command substitution.
    @Test func findsMakesReferences() {
        #expect(Self.names("v$(VERSION)-$(version) $(build_dir2)") == ["VERSION", "version", "build_dir2"])
        #expect(Self.names("$$(VERSION) $((VERSION)) $(git describe) $(VERSION $(-x) $( VERSION ) $(my-var)").isEmpty)
        #expect(Self.names("${{ '$(VERSION)' }}").isEmpty)
        let shell = ForeignPlaceholder.find(in: "echo $(VERSION) $(date) $(Version) $(GO_1)", inShellCommand: true,
                                            locate: { FlowKit.SourceLocation(line: 1, column: 1 + $0) })
        #expect(shell.map(\.name) == ["VERSION", "GO_1"])
        #expect(shell.allSatisfy { $0.syntax == .make && $0.inShellCommand })
        #expect(Self.found("echo $(VERSION)!").map(\.1) == [6])
        #expect(Self.found("echo $(VERSION)!").map(\.2) == [16])
        for text in ["$(VERSION)", "a $(x) b", "{{.A.B}} $(V)"] {
            #expect(text.templateMarkers.makeReferences, "\(text)")
        }
        #expect(!"$$(V) $(git describe) $((1+2)) $(V".templateMarkers.makeReferences)
    }

    /// flow's own expressions, their string literals included, are not text; neither is the
    /// rest of a string after an unterminated `${{`.
    @Test func flowExpressionsAreSkipped() {
        #expect(Self.names("${{ version }}").isEmpty)
        #expect(Self.names("$${{ version }}").isEmpty)
        #expect(Self.names("${{ '{{ version }}' }}").isEmpty)
        #expect(Self.names("${{ vars.a }}{{ b }}${{ vars.c }}") == ["b"])
        #expect(Self.names("${{ vars.a = {{ b }}").isEmpty)
    }

    /// `{{{{` is just's escape for `{{`, `{{{x}}}` Mustache's: not flow variables written
    /// the wrong way.
    @Test func moreThanTwoBracesAreSkipped() {
        #expect(Self.names("{{{{version}}").isEmpty)
        #expect(Self.names("{{{version}}}").isEmpty)
        #expect(Self.names("{{version}}}").isEmpty)
    }

    /// The parser's byte scan (`templateMarkers`) decides whether a string is looked at
    /// at all: it must say yes wherever `find` finds a placeholder, and no for the
    /// templates of other programs (`{{.State.Running}}`), for which locating the scalar
    /// made `flow validate` of 100k such steps take twice as long.
    @Test func theByteScanMissesNoPlaceholderAndSkipsOtherTemplates() {
        let texts = [
            "{{.VERSION}}", "{{ .VERSION }}", "{{version}}", "{{ version }}", "{{\tversion\t}}", "{{- .VERSION -}}",
            "{{ build_dir }} {{ my-var }}", "echo v{{.VERSION}} and {{ name }}!", "{{ range .Items }}{{ end }}",
            "${{ vars.a }}{{ b }}${{ vars.c }}", "$${{ x }} {{y}}", "{{{{version}}", "{{{version}}}", "{{version}}}",
            "日本{{ .version }}", "x{{{y}}", "{{x -}}", "{{- x}}", "${{ '{{ version }}' }}",
        ]
        for text in texts where !Self.names(text).isEmpty {
            #expect(text.templateMarkers.placeholders, "\(text)")
        }
        #expect(!"docker inspect --format '{{.State.Running}}' api".templateMarkers.placeholders)
        #expect(!"{{ version | default('1') }} {{ printf \"%s\" .X }} {{.}} {{}}".templateMarkers.placeholders)
        #expect("echo ${{ vars.version }}".templateMarkers == (true, false, false))
        #expect("{{.A.B}} ${{ vars.version }}".templateMarkers == (true, false, false))
        #expect("{{.A.B}} {{ c }}".templateMarkers == (false, true, false))
        #expect("no braces".templateMarkers == (false, false, false))
    }

    /// In a string that opens a Go template block (`{{range …}}`, `{{if …}}`…), a bare
    /// `{{end}}`, `{{else}}`, `{{break}}` or `{{continue}}` is Go's keyword: not a
    /// candidate, whatever vars the workflow has. Alone, `{{ end }}` is still one (Jinja).
    @Test func goKeywordsClosingAGoBlockAreNotPlaceholders() {
        #expect(Self.names("{{range .Mounts}}{{.Source}}{{end}}") == ["Source"])
        #expect(Self.names("{{- if .Running }}up{{ else }}down{{ end -}}").isEmpty)
        #expect(Self.names("{{range $i, $e := .X}}{{if $e}}{{break}}{{end}}{{continue}}{{end}}").isEmpty)
        #expect(Self.names("{{with .Config}}{{ version }}{{end}}") == ["version"])
        #expect(Self.names("{{.End}} {{ end }} {{ else }}") == ["End", "end", "else"])
        #expect(Self.names("{{ if }}{{ end }}") == ["if", "end"], "`{{ if }}` alone opens nothing")
    }

    /// The index a scope's vars or params are matched with (built once, not searched and
    /// lower-cased per placeholder): exact first, else the first declared in any case.
    @Test func declaredNamesMatchExactlyElseTheFirstInAnyCase() {
        let names = DeclaredNames(["Version", "version", "VERSION", "Region", "REGION"])
        #expect(names.match("VERSION") == "VERSION")
        #expect(names.match("vErSiOn") == "Version")
        #expect(names.match("region") == "Region")
        #expect(names.match("item") == nil)
        #expect(DeclaredNames([]).match("x") == nil)
    }

    // MARK: Validator

    @Test func aPlaceholderNamingAVarIsAWarningInEveryTemplatedPlace() throws {
        let loaded = expectDiagnostics("""
            env:
              V: "⟦foreign-template⟧{{ version }}"
            defaults:
              dir: "/src/⟦foreign-template⟧{{.VERSION}}"
            vars:
              version: "1.2"
            actions:
              a:
                params:
                  p: {default: x}
                steps:
                  - print: "${{ params.p }}"
            steps:
              - shell: echo "⟦foreign-template⟧{{.VERSION}}" "${{ vars.version }}"
                dir: "⟦foreign-template⟧{{version}}"
                stdin: "⟦foreign-template⟧{{ Version }}"
                env:
                  W: "⟦foreign-template⟧{{.version}}"
              - print: "v⟦foreign-template⟧{{ version }}"
              - make ⟦foreign-template⟧{{.VERSION}}
              - use: a
                with:
                  p: "⟦foreign-template⟧{{ .VERSION }}"
            """)
        #expect(loaded.isValid, "warnings do not make a workflow invalid")
        #expect(loaded.diagnostics.allSatisfy { $0.severity == .warning })
        #expect(Set(loaded.diagnostics.map(\.help)) == ["flow writes it `${{ vars.version }}`"])
        let first = try #require(loaded.diagnostics.first)
        #expect(first.message == "`{{ version }}` is just's and Jinja's (Ansible) syntax: flow leaves it as text")
        #expect(at(first.span) == "2:7" && first.span.end.column == 20)
    }

    /// Inside an action, a param's name is flow's `params.…` (before a var of the same
    /// name, as go-task's task vars come before the file's); the file's vars are seen too.
    @Test func insideAnActionParamsComeFirst() {
        let loaded = expectDiagnostics("""
            vars:
              target: prod
              region: eu
            actions:
              deploy:
                params:
                  target: {default: staging}
                steps:
                  - shell: ./deploy "⟦foreign-template⟧{{.TARGET}}" "${{ params.target }}" "⟦foreign-template⟧{{ region }}" "${{ vars.region }}"
            steps:
              - use: deploy
              - print: "${{ vars.target }}"
            """)
        #expect(loaded.diagnostics.map(\.help) == ["flow writes it `${{ params.target }}`", "flow writes it `${{ vars.region }}`"])
    }

    @Test func anExactMatchWinsOverACaseInsensitiveOne() {
        let loaded = expectDiagnostics("""
            vars:
              version: "1"
              VERSION: "2"
            steps:
              - print: "⟦foreign-template⟧{{.VERSION}} ${{ vars.version }} ${{ vars.VERSION }}"
            """)
        #expect(loaded.diagnostics.map(\.help) == ["flow writes it `${{ vars.VERSION }}`"])
    }

    /// docker's, kubectl's and helm's templates name their own fields: not flagged unless
    /// the name is a var or param (then it is, wherever it is: that is the rule).
    @Test func otherProgramsTemplatesAreNotFlagged() throws {
        _ = try valid("""
            vars:
              state: up
            actions:
              a:
                params:
                  id: {default: x}
                steps:
                  - shell: docker ps --format '{{.Names}}' --filter "id=${{ params.id }}"
            steps:
              - shell: docker inspect --format '{{.State.Running}}' "${{ vars.state }}"
              - shell: kubectl get pods -o go-template='{{range .items}}{{.metadata.name}}{{end}}'
              - shell: gh pr list --template '{{ .title }}' --json title
              - print: "{{ id }} is a param of `a` only"
              - shell: echo "${NAME} $(state) ${{ '{{ state }}' }} {{{{state}}"
            """)
    }

    /// Strings flow does not template are never run as text with a placeholder: comments,
    /// descriptions, tags, a var's value naming itself (one naming another var is
    /// `unexpanded-expression`), a param's default.
    @Test func untemplatedStringsAreNotChecked() throws {
        _ = try valid("""
            # {{.VERSION}} becomes ${{ vars.version }}
            description: "{{.VERSION}}"
            vars:
              version: "{{ version }}"
              other: "x"
            actions:
              a:
                description: "{{ p }}"
                params:
                  p: {default: "{{ p }}"}
                steps:
                  - print: "${{ params.p }}"
            steps:
              - print: "${{ vars.version }} ${{ vars.other }}"
                tags: ["{{version}}"]
              - use: a
            """)
    }

    /// Written only as `{{…}}`, a var or param looks unused: its warning says why.
    @Test func theUnusedWarningPointsAtThePlaceholder() throws {
        let loaded = expectDiagnostics("""
            vars:
              ⟦unused-var⟧version: "1.2"
            actions:
              a:
                params:
                  ⟦unused-param⟧p: {default: x}
                steps:
                  - print: "⟦foreign-template⟧{{ p }} ⟦foreign-template⟧{{ P }}"
            steps:
              - shell: make VERSION=⟦foreign-template⟧{{.VERSION}}
              - use: a
            """)
        let unusedVar = try #require(loaded.diagnostics.first { $0.code == .unusedVar })
        #expect(unusedVar.help == "flow does not expand `{{.VERSION}}`: write it `${{ vars.version }}`")
        #expect(unusedVar.notes.map(\.message) == ["`{{.VERSION}}` is here"])
        #expect(unusedVar.notes.map { at($0.span) } == ["10:25"])
        let unusedParam = try #require(loaded.diagnostics.first { $0.code == .unusedParam })
        #expect(unusedParam.help == "flow does not expand `{{ p }}`: write it `${{ params.p }}`")
        #expect(unusedParam.notes.map { at($0.span) } == ["8:17"])
    }

    /// Without a `{{…}}` for it, the unused warning's help is the usual one.
    @Test func anUnusedVarWithoutAPlaceholderKeepsItsHelp() throws {
        let loaded = expectDiagnostics("""
            vars:
              ⟦unused-var⟧version: "1.2"
            steps:
              - shell: docker inspect --format '{{.State.Running}}' x
            """)
        #expect(loaded.diagnostics.map(\.help) == ["use it as `${{ vars.version }}`, or remove it"])
        #expect(loaded.diagnostics.allSatisfy { $0.notes.isEmpty })
    }

    /// A placeholder is a problem of the text itself: in text that `<<: *x` merges into
    /// another step, it is reported once, where it is written.
    @Test func aPlaceholderInMergedTextIsReportedOnce() {
        expectDiagnostics("""
            vars:
              version: "1"
            steps:
              - &base
                shell: echo "${{ vars.version }}"
                env: {V: "⟦foreign-template⟧{{ version }}"}
              - <<: *base
                name: again
            """)
    }

    /// Spans are in the source, not in the value: after a YAML escape, in a block scalar.
    @Test func spansFollowTheSourceOfEscapedAndBlockScalars() throws {
        let loaded = expectDiagnostics("""
            vars:
              version: 1
            steps:
              - shell: |
                  echo start
                    make V=⟦foreign-template⟧{{ .VERSION }} "${{ vars.version }}"
              - print: "tab\\there ⟦foreign-template⟧{{version}}"
            """)
        #expect(loaded.diagnostics.map(\.span.end.column) == [30, 34])
    }
}
