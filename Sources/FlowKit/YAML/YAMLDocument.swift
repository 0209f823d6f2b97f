/// A parsed YAML document: an arena of nodes and the root's index.
public struct YAMLDocument: Sendable {
    public var nodes: [YAMLNode]
    /// The children of every collection, each collection's run contiguous.
    public var children: [Int32] = []
    public var root: Int32?
    /// Nodes that stand for an alias use: a copy of the anchored node (sharing its children
    /// and span), made per alias so that what was reached through which alias can be told.
    /// Each maps to the span of its `*name`. Keys brought in by a `<<: *name` merge are
    /// copies too, mapped to that alias. Empty for the many files without aliases.
    public var aliasSites: [Int32: SourceSpan] = [:]
    /// Of those, the keys a `<<: *name` merge brought in, each mapped to that `*name` (an
    /// alias used as a key, `*k: v`, is in `aliasSites` only).
    public var mergeSites: [Int32: SourceSpan] = [:]
    /// The tags reported as unsupported, as written (`!vars.skip`): each was dropped from
    /// its node. `if: !vars.skip` is a negation YAML read as a tag.
    public var unsupportedTags: [String] = []

    public init(nodes: [YAMLNode] = [], root: Int32? = nil) {
        self.nodes = nodes
        self.root = root
    }

    /// The children of node `id` (items, or alternating keys and values).
    @inline(__always)
    public func children(of id: Int32) -> ArraySlice<Int32> {
        let node = nodes[Int(id)]
        let start = Int(node.childStart)
        return children[start..<(start + Int(node.childCount))]
    }

    @inline(__always)
    public subscript(_ id: Int32) -> YAMLNode {
        nodes[Int(id)]
    }

    /// The key/value pairs of a mapping node, in source order.
    public func pairs(_ id: Int32) -> [(key: Int32, value: Int32)] {
        let children = children(of: id)
        var result: [(key: Int32, value: Int32)] = []
        result.reserveCapacity(children.count / 2)
        var i = children.startIndex
        while i + 1 < children.endIndex {
            result.append((children[i], children[i + 1]))
            i += 2
        }
        return result
    }
}
