/// Where a step sits in the tree: the chain of lists from the scope's root to it.
///
/// Two paths tell whether one step certainly finished before another, may run beside it,
/// or runs later — the basis of the `steps.<name>` reference checks.
struct StepPath: Sendable, Equatable {
    /// The kind of list a step sits in.
    enum List: Sendable, Equatable {
        case sequential
        case concurrent
        case finally
        case undo
    }

    /// One step of the chain: the list kind and the index in it.
    struct Component: Sendable, Equatable {
        var list: List
        var index: Int
    }

    var components: [Component]

    func appending(_ list: List, _ index: Int) -> StepPath {
        // One allocation per step (`components + [c]` made two, and a 100,000-step
        // validate makes 200,000 paths).
        var longer: [Component] = []
        longer.reserveCapacity(components.count + 1)
        longer.append(contentsOf: components)
        longer.append(Component(list: list, index: index))
        return StepPath(components: longer)
    }

    /// How `other` relates to `self` when `self` refers to it and it is not known to have finished.
    enum Relation {
        /// Both are children of one concurrent group (different branches).
        case concurrent
        /// `other` contains `self`.
        case ancestor
        /// `other` is inside `self`.
        case descendant
        /// `other` runs later (a later sibling, a `finally`, an `undo`).
        case later
    }

    /// Whether the step at `other` has certainly finished when the step at `self` starts:
    /// an earlier step of an enclosing sequential chain (or `finally` or `undo` list), a
    /// step inside the group whose `finally` this is, or the step (or inside the step) whose
    /// `undo` this is.
    func hasFinished(_ other: StepPath) -> Bool {
        let s = components, x = other.components
        var k = 0
        while k < s.count, k < x.count, s[k] == x[k] { k += 1 }
        if k == s.count { return false }              // `other` is this step or inside it
        if k == x.count { return s[k].list == .undo } // `other` contains this step
        let a = s[k], b = x[k]
        // Steps inside an `undo` run only during rollback: never finished before anything.
        if x[(k + 1)...].contains(where: { $0.list == .undo }) { return false }
        switch (a.list, b.list) {
        // An `undo` list runs in order, as a sequential group: its earlier steps have finished.
        case (.undo, .undo): return b.index < a.index
        case (_, .undo): return false
        case (.undo, _): return true
        case (.finally, .sequential), (.finally, .concurrent): return true
        case (.sequential, .sequential), (.finally, .finally): return b.index < a.index
        default: return false
        }
    }

    func relation(to other: StepPath) -> Relation {
        let a = components, b = other.components
        var k = 0
        while k < a.count, k < b.count, a[k] == b[k] { k += 1 }
        if k == b.count { return .ancestor }
        if k == a.count { return .descendant }
        if a[k].list == .concurrent, b[k].list == .concurrent { return .concurrent }
        return .later
    }
}
