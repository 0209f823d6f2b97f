/// A parsed YAML document: an arena of nodes and the root's index.
public struct YAMLDocument: Sendable {
    public var nodes: [YAMLNode]
    public var root: Int32?

    public init(nodes: [YAMLNode] = [], root: Int32? = nil) {
        self.nodes = nodes
        self.root = root
    }

    @inline(__always)
    public subscript(_ id: Int32) -> YAMLNode {
        nodes[Int(id)]
    }

    /// The key/value pairs of a mapping node, in source order.
    public func pairs(_ id: Int32) -> [(key: Int32, value: Int32)] {
        let children = nodes[Int(id)].children
        var result: [(key: Int32, value: Int32)] = []
        result.reserveCapacity(children.count / 2)
        var i = 0
        while i + 1 < children.count {
            result.append((children[i], children[i + 1]))
            i += 2
        }
        return result
    }
}
