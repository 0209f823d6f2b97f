/// The stable, documented code of every diagnostic flow reports (see docs/diagnostics.md).
public enum DiagnosticCode: String, CaseIterable, Sendable {
    // Files and YAML.
    case fileUnreadable = "file-unreadable"
    case invalidUTF8 = "invalid-utf8"
    case yamlSyntax = "yaml-syntax"
    case tabIndentation = "tab-indentation"
    case duplicateKey = "duplicate-key"
    case aliasLimit = "alias-limit"
    case nestingTooDeep = "nesting-too-deep"
    case multipleDocuments = "multiple-documents"
    case unsupportedTag = "unsupported-tag"
    case emptyWorkflow = "empty-workflow"

    // Shape of the workflow.
    case wrongType = "wrong-type"
    case unknownKey = "unknown-key"
    case missingKey = "missing-key"
    case missingKind = "missing-kind"
    case multipleKinds = "multiple-kinds"
    case misplacedOption = "misplaced-option"
    case conflictingOptions = "conflicting-options"
    case emptyGroup = "empty-group"
    case invalidValue = "invalid-value"
    case invalidDuration = "invalid-duration"
    case invalidName = "invalid-name"
    case duplicateName = "duplicate-name"
    case unsupportedVersion = "unsupported-version"

    // Actions.
    case unknownAction = "unknown-action"
    case actionRecursion = "action-recursion"
    case expansionLimit = "expansion-limit"
    case missingParam = "missing-param"
    case unknownParam = "unknown-param"
    case disallowedParam = "disallowed-param"

    // Expressions.
    case expressionSyntax = "expression-syntax"
    case unknownReference = "unknown-reference"
    case concurrentReference = "concurrent-reference"
    case laterReference = "later-reference"
    case undeclaredOutput = "undeclared-output"
    case misplacedFunction = "misplaced-function"
    case singleQuotedExpression = "single-quoted-expression"

    // Warnings.
    case unusedParam = "unused-param"
    case unusedVar = "unused-var"
    case unknownStatus = "unknown-status"
    case stringFlag = "string-flag"
    case unexpandedExpression = "unexpanded-expression"
    case colonWithoutSpace = "colon-without-space"
    case nestedUndo = "nested-undo"
    case foreignTemplate = "foreign-template"
    case foreignShebang = "foreign-shebang"
    case unexpandedVariable = "unexpanded-variable"

    // Warnings about a run's step selection (`run`, `plan`), not about the file alone.
    case unselectedReference = "unselected-reference"
}
