@testable import FlowKit
import Testing

/// Whole-workflow checks: references, the `steps.X` ordering rules, actions and params,
/// functions and quoting in shell commands, unused names.
@Suite struct ValidatorTests {
    // MARK: Plain references

    @Test func knownReferencesAreFine() throws {
        _ = try valid("""
            name: wf
            env:
              HOME_DIR: ${{ vars.dir }}
            vars:
              dir: /tmp
            steps:
              - print: "${{ vars.dir }} ${{ env.HOME_DIR }} ${{ env.ANYTHING }} ${{ workflow.name }} ${{ run.id }} ${{ run.status }}"
            """)
    }

    @Test func unknownReferences() throws {
        let loaded = expectDiagnostics("""
            vars:
              target: x
            steps:
              - print: "${{ vars.⟦unknown-reference⟧targt }}"
              - print: "${{ ⟦unknown-reference⟧var.target }}"
              - print: "${{ ⟦unknown-reference⟧vars }}"
              - print: "${{ vars.target.⟦unknown-reference⟧x }}"
              - print: "${{ workflow.⟦unknown-reference⟧id }}"
              - print: "${{ run.⟦unknown-reference⟧state }}"
              - print: "${{ ⟦unknown-reference⟧steps.x }}"
              - print: "${{ steps.⟦unknown-reference⟧nope.status }}"
              - print: "${{ ⟦unknown-reference⟧env }}"
            """)
        let helps = loaded.diagnostics.map(\.help)
        #expect(helps[0] == "did you mean `target`?")
        #expect(helps[1] == "did you mean `vars`?")
        #expect(helps[5] == "did you mean `status`?")
    }

    /// A literal in the wrong case (`TRUE`, `Null`) is a reference to nothing; the help
    /// names the literal, not the root it is near (`TRUE` got "did you mean `run`?").
    @Test func aLiteralInTheWrongCaseSuggestsTheLiteral() throws {
        let loaded = expectDiagnostics("""
            steps:
              - print: a
                if: "⟦unknown-reference⟧TRUE"
              - print: b
                if: "⟦unknown-reference⟧True || ⟦unknown-reference⟧Null == ⟦unknown-reference⟧FALSE"
              - print: "${{ ⟦unknown-reference⟧tru }} ${{ ⟦unknown-reference⟧rn.id }}"
            """)
        #expect(loaded.diagnostics.map(\.help) == [
            "did you mean `true`?", "did you mean `true`?", "did you mean `null`?", "did you mean `false`?",
            "did you mean `true`?", "did you mean `run`?",
        ])
    }

    @Test func referencesInEveryTemplatedPlaceAreChecked() {
        expectDiagnostics("""
            env:
              A: ${{ vars.⟦unknown-reference⟧a }}
            defaults:
              dir: ${{ vars.⟦unknown-reference⟧b }}
            steps:
              - shell: echo "${{ vars.⟦unknown-reference⟧c }}"
                dir: ${{ vars.⟦unknown-reference⟧d }}
                stdin: ${{ vars.⟦unknown-reference⟧e }}
                env:
                  B: ${{ vars.⟦unknown-reference⟧f }}
                if: vars.⟦unknown-reference⟧g
              - print: x
                undo:
                  print: ${{ vars.⟦unknown-reference⟧h }}
            finally:
              - print: ${{ vars.⟦unknown-reference⟧i }}
            """)
    }

    @Test func ifConditionPositionsInWrappedForm() {
        expectDiagnostics("""
            steps:
              - print: x
                if: "  ${{ vars.⟦unknown-reference⟧nope == 'a' }}"
            """)
    }

    // MARK: steps.X ordering

    @Test func earlierStepInASequentialChainIsFine() throws {
        _ = try valid("""
            steps:
              - name: build
                shell: echo
                outputs: [version]
              - print: ${{ steps.build.outputs.version }} ${{ steps.build.status }} ${{ steps.build.exit_code }}
              - sequential:
                  - print: ${{ steps.build.status }}
                  - concurrent:
                      - print: ${{ steps.build.status }}
                      - print: ${{ steps.build.status }}
            finally:
              - print: ${{ steps.build.status }}
            """)
    }

    @Test func stepsOfAFinishedConcurrentGroupCountAsFinished() throws {
        _ = try valid("""
            steps:
              - concurrent:
                  - name: a
                    shell: x
                  - sequential:
                      - name: b
                        shell: y
                      - print: ${{ steps.b.status }}
              - print: ${{ steps.a.status }} ${{ steps.b.status }}
            """)
    }

    @Test func laterStepIsALaterReference() throws {
        let loaded = expectDiagnostics("""
            steps:
              - print: ${{ steps.⟦later-reference⟧deploy.status }}
              - name: deploy
                shell: x
            """)
        let d = try only(.laterReference, in: loaded)
        #expect(d.notes.map { at($0.span) } == ["3:11"], "the note points at the step referred to")
    }

    @Test func stepCannotReferToItself() {
        expectDiagnostics("""
            steps:
              - name: me
                shell: echo ${{ steps.⟦later-reference⟧me.status }}
            """)
    }

    @Test func groupCannotReferToItsOwnChildren() {
        expectDiagnostics("""
            steps:
              - name: g
                if: steps.⟦later-reference⟧child.status == 'succeeded'
                sequential:
                  - name: child
                    shell: x
            """)
    }

    @Test func childCannotReferToItsEnclosingGroup() {
        expectDiagnostics("""
            steps:
              - name: g
                sequential:
                  - print: ${{ steps.⟦later-reference⟧g.status }}
            """)
    }

    /// The message names the relation: the group's outputs are set only when it finishes
    /// (it used to read "step `top` is inside `top`, which has not finished").
    @Test func referenceToTheOwnGroupOrItselfSaysWhy() {
        let loaded = expectDiagnostics("""
            steps:
              - name: top
                sequential:
                  - name: inner
                    shell: echo "${{ steps.⟦later-reference⟧top.outputs.x }}"
              - name: me
                shell: echo "${{ steps.⟦later-reference⟧me.exit_code }}"
            """)
        #expect(loaded.diagnostics.map(\.message) == [
            "`inner` refers to the outputs of its own enclosing group `top`, which are not set until the group finishes",
            "`me` refers to its own exit code, which is not set until it finishes",
        ])
    }

    @Test func siblingsInAConcurrentGroupAreConcurrentReferences() throws {
        let loaded = expectDiagnostics("""
            steps:
              - concurrent:
                  - name: x
                    shell: echo
                  - name: y
                    shell: echo "${{ steps.⟦concurrent-reference⟧x.status }}"
            """)
        let d = try only(.concurrentReference, in: loaded)
        // The message names both steps; the note shows where X is.
        #expect(d.message.contains("`x`") && d.message.contains("`y`"))
        #expect(d.notes.map { at($0.span) } == ["3:15"])
    }

    @Test func laterSiblingInAConcurrentGroupIsAlsoConcurrent() {
        expectDiagnostics("""
            steps:
              - concurrent:
                  - print: ${{ steps.⟦concurrent-reference⟧y.status }}
                  - name: y
                    shell: echo
            """)
    }

    @Test func referenceIntoAnotherConcurrentBranchIsConcurrent() {
        expectDiagnostics("""
            steps:
              - concurrent:
                  - sequential:
                      - name: a1
                        shell: x
                      - name: a2
                        shell: x
                  - sequential:
                      - print: ${{ steps.⟦concurrent-reference⟧a2.status }}
            """)
    }

    @Test func finallyOfAGroupSeesItsSteps() throws {
        _ = try valid("""
            steps:
              - name: g
                concurrent:
                  - name: x
                    shell: echo
                  - name: y
                    shell: echo
                finally:
                  - print: ${{ steps.x.status }} ${{ steps.y.exit_code }}
                  - sequential:
                      - print: ${{ steps.x.status }}
            """)
    }

    @Test func finallyCannotSeeItsOwnGroupOrLaterSteps() {
        expectDiagnostics("""
            steps:
              - name: g
                sequential:
                  - shell: x
                finally:
                  - print: ${{ steps.⟦later-reference⟧g.status }} ${{ steps.⟦later-reference⟧after.status }}
              - name: after
                shell: x
            """)
    }

    @Test func undoSeesTheStepItReverses() throws {
        _ = try valid("""
            steps:
              - name: reserve
                shell: echo id=1 >> "$FLOW_OUTPUT"
                outputs: [id]
                undo:
                  shell: echo release "${{ steps.reserve.outputs.id }}"
              - name: g
                sequential:
                  - name: inner
                    shell: x
                undo:
                  - print: ${{ steps.g.status }} ${{ steps.inner.status }}
            """)
    }

    @Test func undoCannotSeeLaterSteps() {
        expectDiagnostics("""
            steps:
              - name: a
                shell: x
                undo:
                  print: ${{ steps.⟦later-reference⟧b.status }}
              - name: b
                shell: x
            """)
    }

    /// An `undo` list runs in order, as a sequential group: a step of it sees the earlier
    /// ones (it got `later-reference`, while `undo: {sequential: […]}` was valid), not the
    /// later ones, nor the `undo` of an earlier one (that runs only when it is undone).
    @Test func anUndoListIsSequential() {
        expectDiagnostics("""
            steps:
              - name: a
                shell: x
                undo:
                  - name: ub
                    shell: echo "k=z" >> "$FLOW_OUTPUT"
                    outputs: [k]
                  - name: ub2
                    print: ${{ steps.ub.outputs.k }} ${{ steps.ub.status }} ${{ steps.a.status }}
                    ⟦nested-undo⟧undo:
                      - name: uu
                        shell: x
                  - print: ${{ steps.ub2.status }} ${{ steps.⟦later-reference⟧uu.status }} ${{ steps.⟦later-reference⟧last.status }}
                  - name: last
                    sequential:
                      - print: ${{ steps.ub.outputs.k }}
            """)
    }

    @Test func workflowEnvCannotReferToSteps() {
        expectDiagnostics("""
            env:
              V: ${{ steps.⟦later-reference⟧a.status }}
            steps:
              - name: a
                shell: x
            """)
    }

    @Test func rootFinallySeesEveryStep() throws {
        _ = try valid("""
            steps:
              - concurrent:
                  - name: a
                    shell: x
                  - name: b
                    shell: x
            finally:
              - name: f1
                print: ${{ steps.a.status }} ${{ steps.b.status }}
              - print: ${{ steps.f1.status }}
            """)
    }

    @Test func referenceToAStepInsideAnUndoFromTheMainFlowIsLater() {
        expectDiagnostics("""
            steps:
              - shell: x
                undo:
                  name: u
                  shell: y
              - print: ${{ steps.⟦later-reference⟧u.status }}
            """)
    }

    // MARK: Outputs

    @Test func undeclaredOutput() throws {
        let loaded = expectDiagnostics("""
            steps:
              - name: tag
                shell: echo
                outputs: [version, digest]
              - print: ${{ steps.tag.outputs.version }} ${{ steps.tag.outputs.⟦undeclared-output⟧versoin }}
            """)
        let d = try only(.undeclaredOutput, in: loaded)
        #expect(d.help == "did you mean `version`?")
        #expect(d.notes.first?.span.start.line == 4, "the `outputs:` line")
    }

    @Test func outputsOfAStepWithoutDeclarationAreUnchecked() throws {
        _ = try valid("""
            steps:
              - name: tag
                shell: echo
              - print: ${{ steps.tag.outputs.anything }}
            """)
    }

    @Test func outputReferenceShapes() {
        expectDiagnostics("""
            steps:
              - name: tag
                shell: echo
              - print: ${{ ⟦unknown-reference⟧steps.tag.outputs }}
              - print: ${{ steps.tag.outputs.a.⟦unknown-reference⟧b }}
              - print: ${{ steps.tag.⟦unknown-reference⟧output.a }}
              - print: ${{ steps.tag.status.⟦unknown-reference⟧x }}
            """)
    }

    // MARK: Actions

    @Test func paramsOutsideAnActionAreUnknown() {
        expectDiagnostics("""
            steps:
              - print: ${{ ⟦unknown-reference⟧params.x }}
            """)
    }

    @Test func paramsInsideAnAction() {
        expectDiagnostics("""
            actions:
              greet:
                params:
                  who: {required: true}
                steps:
                  - print: ${{ params.who }} ${{ params.⟦unknown-reference⟧whom }}
            steps:
              - use: greet
                with: {who: me}
            """)
    }

    @Test func actionStepsAreTheirOwnScope() {
        expectDiagnostics("""
            actions:
              a:
                steps:
                  - name: inner
                    shell: x
                  - print: ${{ steps.inner.status }} ${{ steps.⟦unknown-reference⟧outer.status }}
            steps:
              - name: outer
                shell: x
              - use: a
              - print: ${{ steps.⟦unknown-reference⟧inner.status }}
            """)
    }

    @Test func unknownAction() throws {
        let loaded = expectDiagnostics("""
            actions:
              deploy:
                steps: [echo]
            steps:
              - use: ⟦unknown-action⟧deplyo
            """)
        #expect(loaded.diagnostics.first?.help == "did you mean `deploy`?")
        expectDiagnostics("""
            steps:
              - use: ⟦unknown-action⟧anything
            """)
    }

    @Test func paramChecksAtTheUseSite() throws {
        let loaded = expectDiagnostics("""
            actions:
              deploy:
                params:
                  env: {required: true, allowed: [staging, prod]}
                  region: {default: eu-west-1}
                steps:
                  - shell: ./deploy "${{ params.env }}" "${{ params.region }}"
            vars:
              e: prod
            steps:
              - use: ⟦missing-param⟧deploy
              - use: deploy
                with: {env: ⟦disallowed-param⟧dev}
              - use: deploy
                with: {env: prod, ⟦unknown-param⟧regoin: x}
              - use: deploy
                with: {env: "${{ vars.e }}"}
            """)
        let missing = try only(.missingParam, in: loaded)
        #expect(missing.notes.map { at($0.span) } == ["4:7"], "the note points at the declaration")
        #expect(try only(.unknownParam, in: loaded).help == "did you mean `region`?")
    }

    /// A required parameter given a value of the wrong type is reported once, as
    /// `wrong-type`: it is given, so "needs the parameter" would be false. An unknown one
    /// with such a value is both.
    @Test func aParamWithAValueOfTheWrongTypeIsNotMissing() {
        expectDiagnostics("""
            actions:
              a:
                params:
                  y: { required: true }
                steps:
                  - print: "${{ params.y }}"
            steps:
              - use: a
                with: { y: ⟦wrong-type⟧[1] }
              - use: a
                with: { y: x, ⟦unknown-param⟧z: ⟦wrong-type⟧{q: 1} }
            """)
    }

    static let allowedFromVars = """
        name: wf
        vars:
          target: prod
          ok: dev
          empty: ""
        actions:
          deploy:
            params:
              env: {required: true, allowed: [dev, staging]}
            steps:
              - shell: ./deploy "${{ params.env }}"
          inner:
            params:
              p: {}
            steps:
              - use: deploy
                with: {env: ⟦disallowed-param⟧"${{ vars.target }}"}
              - use: deploy
                with: {env: "${{ params.p }}"}
        steps:
          - name: pick
            shell: echo "env=x" >> "$FLOW_OUTPUT"
          - use: deploy
            with: {env: ⟦disallowed-param⟧"${{ vars.target }}"}
          - use: deploy
            with: {env: "${{ vars.ok }}"}
          - use: deploy
            with: {env: ⟦disallowed-param⟧"${{ vars.ok }}-${{ vars.empty }}${{ workflow.name }}"}
          - use: deploy
            with: {env: "${{ vars.empty || 'dev' }}"}
          - use: deploy
            with: {env: "${{ steps.pick.outputs.env }}"}
          - use: deploy
            with: {env: "${{ env.TARGET }}"}
          - use: deploy
            with: {env: "${{ vars.target }}${{ env.SUFFIX }}"}
          - use: inner
            with: {p: "${{ vars.target }}"}
        """

    /// A `with` value whose expression does not parse gets its syntax error only: its raw
    /// text (`${{ 1 + 1 }}`) is not a value to check against `allowed`.
    @Test func aMalformedWithValueIsNotCheckedAgainstAllowed() {
        expectDiagnostics("""
            actions:
              count:
                params:
                  n: {allowed: ["1", "2"]}
                steps:
                  - print: "${{ params.n }}"
            steps:
              - use: count
                with: {n: "${{ 1 ⟦expression-syntax⟧+ 1 }}"}
            """)
    }

    /// A `with` value built only from default vars is known to `validate`: checked against
    /// `allowed` as a literal is, with notes at the defaults. Values that need an output,
    /// a param or the environment are left to the run.
    @Test func allowedIsCheckedForValuesFromDefaultVars() throws {
        let loaded = expectDiagnostics(Self.allowedFromVars)
        let errors = loaded.diagnostics.filter { $0.code == .disallowedParam }.sorted { $0.span.start.line < $1.span.start.line }
        #expect(errors.map { $0.notes.map { at($0.span) } } == [["3:11"], ["3:11"], ["4:7", "5:10"]], "\(rendered(errors))")
        #expect(errors.allSatisfy { $0.help == "allowed: `dev`, `staging`" })
        #expect(errors[2].message.hasPrefix("`dev-wf` (from "))
    }

    /// Variables set with `--var` are not judged by their defaults: the planner checks the
    /// values given.
    @Test func overriddenVarsAreLeftToThePlanner() throws {
        let (text, _) = stripMarkers(Self.allowedFromVars)
        let loaded = LoadedWorkflow.load(SourceFile(path: "t.yaml", text: text), overriddenVars: ["target"])
        #expect(loaded.diagnostics.map(Spot.init) == [Spot(.disallowedParam, 28, 17)], "\(rendered(loaded.diagnostics))")
    }

    @Test func actionWithoutParamsTakesNone() {
        expectDiagnostics("""
            actions:
              a:
                steps: [echo]
            steps:
              - use: a
                with: {⟦unknown-param⟧x: 1}
            """)
    }

    @Test func recursionIsReportedAtEveryUseSiteOfTheCycle() {
        expectDiagnostics("""
            actions:
              a:
                steps:
                  - use: ⟦action-recursion⟧b
              b:
                steps:
                  - sequential:
                      - use: ⟦action-recursion⟧a
              c:
                steps:
                  - use: a
            steps:
              - use: c
            """)
    }

    @Test func directSelfRecursion() {
        expectDiagnostics("""
            actions:
              loop:
                steps:
                  - print: again
                  - use: ⟦action-recursion⟧loop
            steps:
              - use: loop
            """)
    }

    @Test func recursionThroughFinallyAndUndo() {
        expectDiagnostics("""
            actions:
              a:
                steps:
                  - sequential: [echo]
                    finally:
                      - use: ⟦action-recursion⟧b
              b:
                steps:
                  - shell: x
                    undo:
                      use: ⟦action-recursion⟧a
            steps:
              - use: a
            """)
    }

    @Test func actionExpansionBombIsReported() {
        // Each action uses the previous one four times: 4^40 steps once expanded.
        var lines = ["actions:", "  a0:", "    steps:", "      - print: lol"]
        for level in 1...40 {
            lines += ["  a\(level):", "    steps:"] + Array(repeating: "      - use: a\(level - 1)", count: 4)
        }
        let loaded = load((lines + ["steps:", "  - use: a40"]).joined(separator: "\n") + "\n")
        #expect(loaded.diagnostics.map(\.code) == [.expansionLimit])
        #expect(loaded.diagnostics.first?.span.start.line == 4 + 40 * 6 + 2)
    }

    @Test func nestedActionsWithoutACycleAreFine() throws {
        _ = try valid("""
            actions:
              inner:
                params:
                  x: {default: "1"}
                steps:
                  - print: ${{ params.x }}
              outer:
                steps:
                  - use: inner
                    with: {x: "2"}
                  - use: inner
            steps:
              - use: outer
              - use: outer
            """)
    }

    // MARK: Functions and quoting

    @Test func statusFunctionsOnlyInConditions() {
        expectDiagnostics("""
            steps:
              - print: ${{ ⟦misplaced-function⟧success() }}
                if: failure() || always() || !cancelled() || success()
              - shell: echo ${{ ⟦misplaced-function⟧always() }}
            """)
    }

    @Test func expressionsInsideSingleQuotesInShellCommands() {
        expectDiagnostics("""
            vars: {v: x}
            steps:
              - shell: echo '⟦single-quoted-expression⟧${{ vars.v }}'
              - shell: echo "'${{ vars.v }}'"
              - shell: echo "${{ vars.v }}" '⟦single-quoted-expression⟧${{ vars.v }}' ${{ vars.v }}
              - shell: echo $'⟦single-quoted-expression⟧${{ vars.v }}'
              - shell: echo it\\'s ${{ vars.v }}
              - shell: |
                  echo 'one
                  ⟦single-quoted-expression⟧${{ vars.v }} two'
                  echo ${{ vars.v }}
              - print: '${{ vars.v }}'
              - print: "'${{ vars.v }}'"
              - shell: x
                env:
                  A: "'${{ vars.v }}'"
            """)
    }

    @Test func singleQuotesInACommentDoNotLeakIntoTheNextLine() throws {
        _ = try valid("""
            vars: {v: x}
            steps:
              - shell: |
                  # don't worry
                  echo ${{ vars.v }}
            """)
    }

    // MARK: Names and warnings

    @Test func duplicateStepNames() throws {
        let loaded = expectDiagnostics("""
            steps:
              - name: build
                shell: x
              - sequential:
                  - name: ⟦duplicate-name⟧build
                    shell: y
            finally:
              - name: ⟦duplicate-name⟧build
                shell: z
            """)
        #expect(loaded.diagnostics.allSatisfy { $0.notes.map { at($0.span) } == ["2:11"] })
    }

    /// A name brought in by an alias (`*s`) or a merge (`<<: *s`) is the anchored text for
    /// every use: the error points at the use, the notes at the first use and the text.
    @Test func duplicateStepNamesThroughAliasesPointAtTheUse() throws {
        let loaded = expectDiagnostics("""
            ⟦unknown-key⟧x-step: &s
              name: build
              print: hi
            steps:
              - name: build
                print: first
              - ⟦duplicate-name⟧*s
              - <<: ⟦duplicate-name⟧*s
                print: third
            """)
        let duplicates = loaded.diagnostics.filter { $0.code == .duplicateName }
        #expect(duplicates.map { $0.notes.map { at($0.span) } } == [["5:11", "2:9"], ["5:11", "2:9"]])
    }

    @Test func duplicateStepNamesOnlyThroughMergesNoteTheFirstMerge() throws {
        let loaded = expectDiagnostics("""
            ⟦unknown-key⟧x-step: &s
              name: build
              print: hi
            steps:
              - <<: *s
              - <<: ⟦duplicate-name⟧*s
            """)
        let duplicate = try #require(loaded.diagnostics.first { $0.code == .duplicateName })
        #expect(duplicate.notes.map { at($0.span) } == ["5:9", "2:9"])
    }

    /// Text a `<<: *x` merged in, fine where it is written, is wrong where it lands: the
    /// problem is reported at the `*x`, with a note at the text (parser and validator).
    @Test func problemsOfMergedTextPointAtTheMerge() throws {
        let loaded = expectDiagnostics("""
            actions:
              a:
                params: {who: {}}
                steps:
                  - &tell
                    print: "to ${{ params.who }}"
            finally:
              - &report
                print: "${{ steps.build.status }}"
                env: &stamp {V: "${{ steps.build.outputs.v }}"}
            steps:
              - &e2e
                shell: make e2e
                dir: tests
              - <<: ⟦misplaced-option⟧⟦multiple-kinds⟧*e2e
                print: x
              - <<: ⟦later-reference⟧⟦later-reference⟧*report
              - shell: y
                env:
                  <<: ⟦later-reference⟧*stamp
                  OTHER: x
              - name: build
                shell: z
              - <<: ⟦unknown-reference⟧*tell
              - use: a
                with: {who: me}
            """)
        let notes = loaded.diagnostics.map { $0.notes.first.map { "\($0.message) \(at($0.span))" } ?? "" }
        #expect(notes == ["merged in from here 13:5", "merged in from here 14:5", "merged in from here 10:32",
                          "merged in from here 9:23", "merged in from here 10:32", "merged in from here 6:24"],
                "\(rendered(loaded.diagnostics))")
        #expect(loaded.diagnostics.allSatisfy { $0.mergedFrom != nil })
    }

    /// A problem of the merged text itself is the text's: reported there once, not again
    /// at each merge. So is one met only through merges: at each of them.
    @Test func aProblemOfTheMergedTextItselfIsReportedThereOnce() throws {
        expectDiagnostics("""
            steps:
              - &slow
                shell: make e2e
                timeout: ⟦invalid-duration⟧0
                retry: {limit: 1, ⟦unknown-key⟧delays: 1s}
              - <<: *slow
                name: b
              - <<: *slow
                name: c
            """)
        expectDiagnostics("""
            ⟦unknown-key⟧x-slow: &slow
              timeout: 0
            steps:
              - <<: ⟦invalid-duration⟧*slow
                shell: a
              - <<: ⟦invalid-duration⟧*slow
                shell: b
            """)
    }

    /// A node used through two aliases is checked once per use; the same problem at the
    /// same place is reported once.
    @Test func problemsInsideAnAliasedNodeAreReportedOnce() {
        expectDiagnostics("""
            ⟦unknown-key⟧x-step: &s
              print: "${{ vars.⟦unknown-reference⟧nope }}"
              ⟦unknown-key⟧timout: 5s
            steps:
              - *s
              - *s
              - sequential: [*s]
            """)
    }

    @Test func sameStepNameInTwoActionsIsFine() throws {
        _ = try valid("""
            actions:
              a:
                steps:
                  - name: s
                    shell: x
              b:
                steps:
                  - name: s
                    shell: x
            steps:
              - name: s
                shell: x
              - use: a
              - use: b
            """)
    }

    @Test func unusedVarsAndParamsAreWarnings() throws {
        let loaded = expectDiagnostics("""
            vars:
              ⟦unused-var⟧lonely: 1
              used: 2
            actions:
              a:
                params:
                  ⟦unused-param⟧p: {default: x}
                steps:
                  - print: ${{ vars.used }}
            steps:
              - use: a
            """)
        #expect(loaded.diagnostics.allSatisfy { $0.severity == .warning })
        #expect(loaded.isValid, "warnings do not make a workflow invalid")
    }

    @Test func varUsedOnlyInAnIfOrInEnvIsUsed() throws {
        _ = try valid("""
            vars: {a: "1", b: "2"}
            env:
              B: ${{ vars.b }}
            steps:
              - shell: x
                if: vars.a == '1'
            """)
    }
}

/// One sample per diagnostic code, so that no code goes untested.
@Suite struct DiagnosticCodeCoverageTests {
    static let samples: [DiagnosticCode: String] = [
        .invalidUTF8: "steps: [\"\u{FFFF}\"]\n",  // replaced with a bad byte below
        .yamlSyntax: "steps: [a, b\n",
        .tabIndentation: "steps:\n\t- x\n",
        .duplicateKey: "steps: [a]\nsteps: [b]\n",
        .aliasLimit: "a: &a [*a]\nsteps: [x]\n",
        .nestingTooDeep: "steps: " + String(repeating: "[", count: 300) + "\n",
        .multipleDocuments: "steps: [a]\n---\nsteps: [b]\n",
        .unsupportedTag: "steps: !weird [a]\n",
        .emptyWorkflow: "",
        .wrongType: "steps: 1\n",
        .unknownKey: "steps: [a]\nstpes: [b]\n",
        .missingKey: "name: x\n",
        .missingKind: "steps:\n  - name: x\n",
        .multipleKinds: "steps:\n  - print: x\n    delay: 1s\n",
        .misplacedOption: "steps:\n  - print: x\n    dir: /\n",
        .conflictingOptions: "steps:\n  - shell: cat\n    stdin: x\n    interactive: true\n",
        .emptyGroup: "steps: []\n",
        .invalidValue: "steps:\n  - print: x\n    stream: nowhere\n",
        .invalidDuration: "steps:\n  - delay: soon\n",
        .invalidName: "steps:\n  - name: 1x\n    shell: a\n",
        .duplicateName: "steps:\n  - name: a\n    shell: a\n  - name: a\n    shell: b\n",
        .unsupportedVersion: "version: 2\nsteps: [a]\n",
        .unknownAction: "steps:\n  - use: nope\n",
        .actionRecursion: "actions:\n  a:\n    steps:\n      - use: a\nsteps: [x]\n",
        .expansionLimit: "actions:\n  a:\n    steps: [x, x, x, x, x, x, x, x, x, x]\n  b:\n    steps: [{use: a}, {use: a}, {use: a}, {use: a}, {use: a}, {use: a}, {use: a}, {use: a}, {use: a}, {use: a}]\n  c:\n    steps: [{use: b}, {use: b}, {use: b}, {use: b}, {use: b}, {use: b}, {use: b}, {use: b}, {use: b}, {use: b}]\n  d:\n    steps: [{use: c}, {use: c}, {use: c}, {use: c}, {use: c}, {use: c}, {use: c}, {use: c}, {use: c}, {use: c}]\n  e:\n    steps: [{use: d}, {use: d}, {use: d}, {use: d}, {use: d}, {use: d}, {use: d}, {use: d}, {use: d}, {use: d}]\n  f:\n    steps: [{use: e}, {use: e}, {use: e}, {use: e}, {use: e}, {use: e}, {use: e}, {use: e}, {use: e}, {use: e}]\nsteps: [{use: f}]\n",
        .missingParam: "actions:\n  a:\n    params: {p: {required: true}}\n    steps: ['echo \"${{ params.p }}\"']\nsteps:\n  - use: a\n",
        .unknownParam: "actions:\n  a:\n    steps: [x]\nsteps:\n  - use: a\n    with: {p: 1}\n",
        .disallowedParam: "actions:\n  a:\n    params: {p: {allowed: [x]}}\n    steps: ['echo \"${{ params.p }}\"']\nsteps:\n  - use: a\n    with: {p: y}\n",
        .expressionSyntax: "steps:\n  - print: ${{ a = b }}\n",
        .unknownReference: "steps:\n  - print: ${{ foo.bar }}\n",
        .concurrentReference: "steps:\n  - concurrent:\n    - name: a\n      shell: x\n    - print: ${{ steps.a.status }}\n",
        .laterReference: "steps:\n  - print: ${{ steps.a.status }}\n  - name: a\n    shell: x\n",
        .undeclaredOutput: "steps:\n  - name: a\n    shell: x\n    outputs: [k]\n  - print: ${{ steps.a.outputs.j }}\n",
        .misplacedFunction: "steps:\n  - print: ${{ always() }}\n",
        .singleQuotedExpression: "steps:\n  - shell: echo '${{ workflow.name }}'\n",
        .unusedParam: "actions:\n  a:\n    params: {p: {}}\n    steps: [x]\nsteps:\n  - use: a\n",
        .unexpandedExpression: "actions:\n  a:\n    params: {p: {default: \"${{ env.HOME }}\"}}\n    steps: [\"echo ${{ params.p }}\"]\nsteps:\n  - use: a\n",
        .unusedVar: "vars: {v: 1}\nsteps: [x]\n",
        .unknownStatus: "steps:\n  - name: a\n    print: x\n  - print: y\n    if: steps.a.status == 'success'\n",
        .stringFlag: "vars:\n  lint: false\nsteps:\n  - print: y\n    if: vars.lint\n",
        .colonWithoutSpace: "steps:\n  - delay:5s\n",
        .nestedUndo: "steps:\n  - shell: a\n    undo:\n      shell: b\n      undo:\n        shell: c\n",
        .foreignTemplate: "vars: {v: 1}\nsteps:\n  - shell: echo {{ v }} ${{ vars.v }}\n",
        .foreignShebang: "steps:\n  - shell: |\n      #!/usr/bin/env python3\n      print(1)\n",
        .unexpandedVariable: "env:\n  PATH: $HOME/bin:$PATH\nsteps: [x]\n",
    ]

    @Test func everyCodeHasASample() {
        let covered = Set(Self.samples.keys).union([.fileUnreadable, .unselectedReference])
        #expect(covered == Set(DiagnosticCode.allCases), "add a sample for \(Set(DiagnosticCode.allCases).subtracting(covered))")
    }

    @Test(arguments: DiagnosticCode.allCases)
    func sampleProducesItsCode(code: DiagnosticCode) throws {
        let loaded: LoadedWorkflow
        switch code {
        case .fileUnreadable:
            loaded = LoadedWorkflow.load(path: "/nonexistent/flow-test/\(code.rawValue).yaml")
        case .invalidUTF8:
            loaded = LoadedWorkflow.load(SourceFile(path: "t.yaml", bytes: Array("steps: [\"".utf8) + [0xFE] + Array("\"]\n".utf8)))
        case .unselectedReference:
            // Not the file's: the selection's, found once the workflow is planned.
            let workflow = try #require(load("steps:\n  - name: a\n    shell: x\n  - name: b\n    print: ${{ steps.a.outputs.k }}\n").workflow)
            var options = PlanOptions()
            options.only = "b"
            let warnings = UnselectedReferences.diagnostics(in: try Planner.plan(workflow, options: options))
            #expect(warnings.map(\.code) == [code] && warnings.allSatisfy { $0.severity == .warning }, "\(rendered(warnings))")
            return
        default:
            let sample = try #require(Self.samples[code])
            loaded = load(sample)
        }
        #expect(loaded.diagnostics.map(\.code).contains(code), "\(rendered(loaded.diagnostics))")
        let expectedSeverity: Severity = [.unusedVar, .unusedParam, .unknownStatus, .stringFlag, .unexpandedExpression, .colonWithoutSpace, .nestedUndo,
                                        .foreignTemplate, .foreignShebang, .unexpandedVariable].contains(code) ? .warning : .error
        #expect(loaded.diagnostics.filter { $0.code == code }.allSatisfy { $0.severity == expectedSeverity })
    }

    /// An `undo` inside an `undo` never runs: flagged once, at the outermost such key (in a
    /// group that is the `undo` too); an `undo` on an ordinary step, or in `finally`, is not.
    @Test func undoInsideUndoIsFlaggedOnce() {
        let loaded = load("""
            steps:
              - shell: a
                undo:
                  sequential:
                    - shell: b
                      undo:
                        shell: c
                        undo: {shell: d}
              - shell: e
                undo: {shell: f}
            finally:
              - shell: g
                undo: {shell: h}
            """)
        #expect(loaded.diagnostics.map(Spot.init) == [Spot(.nestedUndo, 6, 11)], "\(rendered(loaded.diagnostics))")
        #expect(loaded.isValid)
    }

    @Test func unreadableFileAndDirectory() throws {
        let missing = LoadedWorkflow.load(path: "/nonexistent/flow.yaml")
        #expect(missing.diagnostics.map(Spot.init) == [Spot(.fileUnreadable, 1, 1)])
        #expect(missing.workflow == nil)
        let directory = LoadedWorkflow.load(path: "/tmp")
        #expect(directory.diagnostics.map(\.code) == [.fileUnreadable])
        #expect(directory.diagnostics.first?.message.contains("directory") == true)
    }
}
