@testable import FlowKit
import Testing

/// What a declaration that could not be read still declares: as a compiler goes on after a
/// declaration it could not type, a step, variable or parameter use whose declaration has
/// an error already reported is not a second error or warning.
@Suite struct ErrorRecoveryTests {
    /// The step whose `shel:` is reported is still the step `build`: a reference to it is
    /// no "no step named `build`" (nor in `if:`), and a misspelt one is offered `build`.
    @Test func aStepWithoutAKindStillDeclaresItsName() {
        let loaded = expectDiagnostics("""
            steps:
              - name: build
                ⟦unknown-key⟧shel: echo hi
                outputs: [x]
              - shell: echo ${{ steps.build.outputs.x }}
                if: steps.build.status == 'succeeded'
              - print: ${{ steps.⟦unknown-reference⟧biuld.status }}
            """)
        #expect(loaded.diagnostics.last?.help == "did you mean `build`?")
    }

    /// The same for a step whose kind's value is wrong, for a group left out because all of
    /// its steps were (their names and its own), for a step of `finally` and for an item
    /// that is a list rather than a step.
    @Test func everyWayAStepIsLeftOutKeepsItsNames() {
        expectDiagnostics("""
            steps:
              - name: wait
                delay: ⟦invalid-duration⟧5 parsecs
              - name: group
                sequential:
                  - name: inner
                    ⟦unknown-key⟧shel: "true"
              - ⟦wrong-type⟧- name: listed
                  shell: "true"
              - print: ${{ steps.wait.status }} ${{ steps.group.status }} ${{ steps.inner.status }} ${{ steps.listed.status }} ${{ steps.late.status }}
            finally:
              - name: late
                print: [1]
            """.replacingOccurrences(of: "print: [1]", with: "print: ⟦wrong-type⟧[1]"))
    }

    /// An action is a scope of its own: a step left out there is declared there only, and
    /// the parameter its command used is used (it was "never used").
    @Test func anActionsStepLeftOutKeepsItsNameAndItsUses() {
        expectDiagnostics("""
            actions:
              deploy:
                params:
                  env: {required: true}
                steps:
                  - name: a
                    ⟦unknown-key⟧shel: echo ${{ params.env }}
                  - shell: echo ${{ steps.a.status }}
            steps:
              - use: deploy
                with: {env: prod}
              - print: ${{ steps.⟦unknown-reference⟧a.status }}
            """)
    }

    /// A step left out for its error still takes its name: another step of that name is a
    /// duplicate whichever of the two has the error, and one error falls on each step after
    /// the first of the name (the note names the first). Inside a group left out, and in an
    /// action's scope (its own: `deploy` there is no duplicate of the workflow's).
    @Test func aStepLeftOutStillTakesItsNameForDuplicates() {
        let loaded = expectDiagnostics("""
            steps:
              - name: build
                ⟦unknown-key⟧shel: make
              - name: ⟦duplicate-name⟧build
                shell: make install
              - name: deploy
                shell: ./deploy.sh
              - name: deploy2
                delay: ⟦invalid-duration⟧soon
              - ⟦unknown-key⟧sequentail:
                  - name: ⟦duplicate-name⟧deploy
                    shell: x
                  - name: deploy2b
                    shell: y
              - name: ⟦duplicate-name⟧deploy2
                shell: z
              - name: ⟦duplicate-name⟧deploy2b
                ⟦unknown-key⟧shel: w
            actions:
              a:
                steps:
                  - name: deploy
                    ⟦unknown-key⟧shel: z
                  - name: ⟦duplicate-name⟧deploy
                    shell: z
            """)
        let notes = loaded.diagnostics.filter { $0.code == .duplicateName }.map { "\($0.span.start.line) ← \($0.notes.first!.span.start.line)" }
        #expect(notes == ["4 ← 2", "11 ← 6", "15 ← 8", "17 ← 13", "24 ← 22"])
    }

    /// A variable whose value is not a string is reported once, not again at each use;
    /// a variable a left-out step used is not "never used".
    @Test func aVariableWithABadValueIsStillDeclared() {
        expectDiagnostics("""
            vars:
              target: ⟦wrong-type⟧[1, 2]
              other: x
            steps:
              - print: ${{ vars.target }}
              - name: s
                ⟦unknown-key⟧shel: echo ${{ vars.other }}
              - print: ${{ vars.⟦unknown-reference⟧targt }}
            """)
    }

    /// An action whose definition is not a mapping, or whose name is invalid, is reported
    /// once, not again as "unknown action" at each `use`.
    @Test func anActionThatCouldNotBeReadIsStillDeclared() {
        expectDiagnostics("""
            actions:
              deploy: ⟦wrong-type⟧[1]
              ⟦invalid-name⟧bad.name:
                steps:
                  - print: hi
            steps:
              - use: deploy
                with: {env: prod}
              - use: bad.name
              - use: ⟦unknown-action⟧deplo
            """)
    }

    /// A parameter whose definition is not a mapping is declared with no options; when
    /// `params` as a whole could not be read, which parameters the action takes is unknown,
    /// and neither a `with` key nor a `params.NAME` is reported as unknown.
    @Test func aParameterThatCouldNotBeReadIsStillDeclared() {
        expectDiagnostics("""
            actions:
              build:
                params:
                  target: ⟦wrong-type⟧5
                steps:
                  - shell: echo ${{ params.target }} ${{ params.⟦unknown-reference⟧targt }}
              test:
                params: ⟦wrong-type⟧on
                steps:
                  - shell: echo ${{ params.suite }}
            steps:
              - use: build
                with: {target: a, ⟦unknown-param⟧mode: b}
              - use: test
                with: {suite: unit}
            """)
    }

    /// Only steps declare: the `name` in a left-out step's `with:` (GitHub's `uses:` with
    /// a `name` input) or `env:` is a value, not a step, and a reference to a step of that
    /// name, which there is none of, is still an error. The steps a misspelt group key
    /// holds are still declared.
    @Test func aNameInsideALeftOutStepsWithOrEnvDeclaresNoStep() {
        expectDiagnostics("""
            actions:
              greet:
                params:
                  name: {required: true}
                steps:
                  - shell: echo ${{ params.name }}
            steps:
              - name: build
                ⟦unknown-key⟧uses: greet
                with:
                  name: deploy
                env:
                  name: prod
              - name: group
                ⟦unknown-key⟧sequentail:
                  - name: inner
                    shell: "true"
              - shell: echo ${{ steps.⟦unknown-reference⟧deploy.status }} ${{ steps.⟦unknown-reference⟧prod.status }}
              - print: ${{ steps.build.status }} ${{ steps.inner.status }} ${{ steps.group.status }}
            """)
    }

    /// `params: []` says the action takes none, as `params: ~` does: reported as not a
    /// mapping, and the `with` key and `params.NAME` it has none of are still reported (an
    /// empty list was taken for "could not be read" and hid both).
    @Test func anEmptyListOfParamsStillSaysThereAreNone() {
        expectDiagnostics("""
            actions:
              build:
                params: ⟦wrong-type⟧[]
                steps:
                  - shell: echo ${{ params.⟦unknown-reference⟧nope }}
            steps:
              - use: build
                with: {⟦unknown-param⟧bogus: 1}
            """)
    }

    /// A reference from the workflow's `env` to a step left out is still an error of its
    /// own: no step has run when that `env` is evaluated, whichever it is (it was hidden).
    @Test func aReferenceFromTheWorkflowsEnvToALeftOutStepIsStillAnError() {
        expectDiagnostics("""
            env:
              X: ${{ steps.⟦later-reference⟧b.status }}
            steps:
              - name: b
                ⟦unknown-key⟧shel: x
              - print: ${{ steps.b.status }}
            """)
    }
}
