@testable import FlowKit
import Testing

/// Whether an expression in a shell command would sit inside single quotes (and so never expand).
@Suite struct ShellQuotingTests {
    /// Feeds `prefix` and tells whether the next character is inside single quotes.
    static func inSingleQuotes(after prefix: String) -> Bool {
        var quoting = ShellQuoting()
        quoting.feed(prefix)
        return quoting.inSingleQuotes
    }

    @Test(arguments: [
        ("echo '", true),
        ("echo 'a' ", false),
        ("echo \"'", false),              // a single quote inside double quotes is a literal
        ("echo \"'\" '", true),
        ("echo $'", true),                // ANSI-C quoting does not expand either
        ("echo $'a\\'", true),            // \' does not close $'…'
        ("echo $'a\\'b' ", false),
        ("echo it\\'s ", false),          // an escaped quote
        ("echo \"a\\\"'", false),         // an escaped double quote inside double quotes
        ("# it's a comment\necho ", false),
        ("echo a#'", true),               // # inside a word is not a comment
        ("echo 'multi\nline ", true),
        ("echo 'a'\"b\"'", true),
        ("", false),
        // A command substitution starts a quoting context of its own, also inside "…".
        ("echo \"$( echo '", true),
        ("echo \"$( echo 'a' ) '", false),     // back in the double quotes
        ("echo \"$( echo ')' '", true),        // a `)` in single quotes closes nothing
        ("echo \"$( (cd x; echo a) ) '", false),
        ("echo \"$(( 1 + 2 )) '", false),
        ("echo $( echo \"$( echo '", true),    // nested
        ("echo \"\\$( echo '", false),          // an escaped `$` opens nothing
        ("echo \"`echo '", true),
        ("echo \"`echo 'a'` '", false),
        ("echo `echo '`'", true),               // the backtick ends it, even inside '…'
        ("echo `echo \"'", false),
        // Inside `…` the shell drops the backslash of \$, \\ (and of \" inside "…") first.
        ("echo \"`echo \\\"'", false),      // "`echo \"'…`": the inner ' is in double quotes
        ("echo `echo \\\"'", true),          // outside "…", \" stays an escaped quote
        ("echo `echo \\\\'", false),          // `echo \\'`: the command is `echo \'`
        ("echo `echo '\\$", true),
        ("echo `echo \\$( echo '", true),     // \$( is $( once taken out
        // In an unquoted here-document's body quotes are text, but not inside $( … ) or `…`.
        ("cat <<EOF\n'", false),
        ("cat <<EOF\n$(echo '", true),
        ("cat <<EOF\n`echo '", true),
        ("cat <<EOF\n$(echo 'a') '", false),
        ("cat <<EOF\n\\$(echo '", false),     // \$( opens nothing
        ("cat <<EOF\n$(echo a\nEOF\necho '", true),  // the body's end ends what it holds
        ("cat <<'EOF'\n$(echo '", false),     // not expanded at all (its own diagnostic)
        // `\"` in backticks in a body: dash drops the backslash, bash keeps it; not flagged.
        ("cat <<EOF\n`echo \\\"'", false),
        ("cat <<EOF\n`echo \\\"'a'\\\"` $(echo '", true),  // decided again after it
        // `$$` is the pid: its second `$` opens nothing ("$$(…)" is the pid, then text).
        ("echo \"$$(echo '", false),
        ("echo \"$$$(echo '", true),
        ("cat <<EOF\n$$(echo '", false),
        ("cat <<EOF\n\\$$(echo '", true),   // \$ is a `$`, and the next one opens
    ])
    func state(prefix: String, expected: Bool) {
        #expect(Self.inSingleQuotes(after: prefix) == expected, "after \(prefix.debugDescription)")
    }

    @Test func singleQuotedExpressionsInShellCommands() {
        expectDiagnostics("""
            vars: {x: "1"}
            steps:
              - shell: echo '⟦single-quoted-expression⟧${{ vars.x }}'
              - shell: echo "'${{ vars.x }}'"
              - shell: echo "${{ vars.x }}"
              - shell: echo ${{ vars.x }}
              - shell: "echo '⟦single-quoted-expression⟧${{ vars.x }}' ${{ vars.x }} '⟦single-quoted-expression⟧${{ vars.x }}'"
              - shell: echo 'a' ${{ vars.x }} 'b'
              - shell: echo '⟦single-quoted-expression⟧${{ vars.x }}
            """)
    }

    @Test func singleQuotedExpressionsInCommandSubstitutions() {
        expectDiagnostics("""
            vars: {x: "1"}
            steps:
              - shell: echo "$( echo '⟦single-quoted-expression⟧${{ vars.x }}' )"
              - shell: echo "$( echo "${{ vars.x }}" ) '${{ vars.x }}'"
              - shell: echo "`echo '⟦single-quoted-expression⟧${{ vars.x }}'`"
              - shell: echo "$(printf '%s' a) ${{ vars.x }}"
              - shell: echo "`echo \\"'${{ vars.x }}'\\"`"
              - shell: echo `echo \\"'⟦single-quoted-expression⟧${{ vars.x }}'\\"`
            """)
    }

    @Test func expressionsInHereDocuments() {
        expectDiagnostics("""
            vars: {x: "1"}
            steps:
              - shell: |
                  cat <<'EOF'
                  value ⟦single-quoted-expression⟧${{ vars.x }}
                  EOF
                  cat <<EOF
                  value ${{ vars.x }}
                  EOF
                  cat <<"END" > out; echo "${{ vars.x }}"
                  ⟦single-quoted-expression⟧${{ vars.x }} and END
                  END
                  echo '⟦single-quoted-expression⟧${{ vars.x }}'
              - shell: |
                  cat <<-\\EOF
                  \t⟦single-quoted-expression⟧${{ vars.x }}
                  \tEOF
                  cat <<< "${{ vars.x }}"
                  echo $(( 1 << 2 )) "${{ vars.x }}"
              - shell: |
                  cat <<EOF
                  A $(echo '⟦single-quoted-expression⟧${{ vars.x }}') B `echo '⟦single-quoted-expression⟧${{ vars.x }}'`
                  C '${{ vars.x }}' \\$(echo '${{ vars.x }}') $(echo "${{ vars.x }}")
                  $(printf '%s'
                    '⟦single-quoted-expression⟧${{ vars.x }}')
                  EOF
                  echo "${{ vars.x }}" '⟦single-quoted-expression⟧${{ vars.x }}'
            """)
    }

    @Test func backslashBeforeAnExpression() {
        // `\${{ … }}` is `\${FLOW_EXPR_n}`: the backslash escapes the expression's `$` (an
        // error: it never expands), not the character after it; inside `…` the shell drops
        // it first, so it expands. After `\\` (an escaped backslash) the expression expands.
        expectDiagnostics("""
            vars: {x: "1"}
            steps:
              - shell: echo "`echo \\${{ vars.x }}`'${{ vars.x }}'"
              - shell: echo `echo \\${{ vars.x }}` '`⟦single-quoted-expression⟧${{ vars.x }}'
              - shell: echo \\⟦single-quoted-expression⟧${{ vars.x }}\\'${{ vars.x }}
              - shell: echo `echo \\\\\\⟦single-quoted-expression⟧${{ vars.x }}` `echo \\\\⟦single-quoted-expression⟧${{ vars.x }}`
              - shell: echo "\\⟦single-quoted-expression⟧${{ vars.x }}" \\\\${{ vars.x }} "$(echo \\⟦single-quoted-expression⟧${{ vars.x }})"
              - shell: |
                  cat <<EOF
                  \\⟦single-quoted-expression⟧${{ vars.x }}\\$(echo '${{ vars.x }}') `echo \\${{ vars.x }}` '${{ vars.x }}'
                  $(echo \\⟦single-quoted-expression⟧${{ vars.x }})
                  EOF
            """)
    }

    @Test func dollarBeforeAnExpression() {
        // `$${{ … }}` is `$${FLOW_EXPR_n}`: the shell reads `$$` (its pid) and then the text
        // `{FLOW_EXPR_n}`, so the value never appears (an error). After `\$` (a literal `$`)
        // and after `$$` (the pid, whose second `$` is spent) the expression expands; in a
        // comment nothing expands at all.
        expectDiagnostics("""
            vars: {x: "1"}
            steps:
              - shell: echo "cost $⟦single-quoted-expression⟧${{ vars.x }}" $⟦single-quoted-expression⟧${{ vars.x }}
              - shell: echo "cost \\$${{ vars.x }}" $$${{ vars.x }} # $${{ vars.x }}
              - shell: echo "$(echo $⟦single-quoted-expression⟧${{ vars.x }})" `echo $⟦single-quoted-expression⟧${{ vars.x }}`
              - shell: |
                  cat <<EOF
                  $⟦single-quoted-expression⟧${{ vars.x }} \\$${{ vars.x }}
                  EOF
            """)
    }

    @Test func expressionInDoubleQuotesInsideSingleQuotedYAML() throws {
        // YAML single quotes are not shell quotes: the command is `echo "${{ … }}"`.
        _ = try valid("""
            vars: {x: "1"}
            steps:
              - shell: 'echo "${{ vars.x }}"'
            """)
    }

    @Test func expressionAfterAnExpressionInsideQuotes() {
        // The expression stands for a word part: the quote after it still closes.
        expectDiagnostics("""
            vars: {x: "1"}
            steps:
              - shell: echo "${{ vars.x }}"'⟦single-quoted-expression⟧${{ vars.x }}' ${{ vars.x }}
            """)
    }
}
