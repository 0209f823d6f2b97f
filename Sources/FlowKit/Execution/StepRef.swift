/// Identifies one execution of a plan node in events: its path, name and label.
public struct StepRef: Sendable, Hashable {
    public var path: String
    public var name: String?
    public var kind: String
    /// What output shows for the step: its name, or its kind and path.
    public var label: String
    /// Set for the steps of an `undo` block (they run during rollback).
    public var isUndo: Bool

    public init(node: PlanNode, isUndo: Bool = false) {
        path = node.path
        name = node.name
        kind = node.keyword
        label = node.label
        self.isUndo = isUndo
    }

    /// Whether the step is a leaf (counted in summaries).
    public var isLeaf: Bool { kind == "print" || kind == "delay" || kind == "shell" }
}
