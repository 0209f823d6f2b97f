/// Which actions use which (through `use:` steps at any depth), and the strongly connected
/// components of that graph: an action uses itself exactly when one of its `use` sites
/// names an action of its own component (or itself).
///
/// Tarjan's algorithm, without recursion (a chain of 20,000 actions must not exhaust the
/// stack), in time linear in actions and sites. Asking, for every site, whether its target
/// can reach back by a search of its own was quadratic: minutes for a chain of 20,000.
struct CallGraph {
    /// Each action's `use` sites that name a declared action, with that action's index.
    let sites: [[(site: Located<String>, target: Int)]]
    /// Each action's component; actions of one component reach each other.
    private(set) var component: [Int] = []
    /// How many actions each component holds.
    private(set) var componentSize: [Int] = []

    init(actions: [Action], index: [String: Int]) {
        sites = actions.map { action in
            var found: [Located<String>] = []
            Validator.useSites(action.steps, into: &found)
            return found.compactMap { site in index[site.value].map { (site, $0) } }
        }
        findComponents()
    }

    /// For each action, how many `use` levels running it takes: 1 plus the most that any
    /// action it uses takes (cycles aside: they are reported as recursion). Components
    /// come out of Tarjan's walk after every component they reach, so one pass in
    /// component order sees each used action's depth before its users'.
    func useDepths() -> [Int] {
        var depth = [Int](repeating: 1, count: sites.count)
        let byComponent = sites.indices.sorted { component[$0] < component[$1] }
        for node in byComponent {
            for (_, target) in sites[node] where component[target] != component[node] {
                depth[node] = max(depth[node], depth[target] + 1)
            }
        }
        return depth
    }

    /// Whether the site `site` of action `from` (targeting `to`) closes a cycle.
    func isRecursive(from: Int, to: Int) -> Bool {
        from == to || component[from] == component[to]
    }

    private mutating func findComponents() {
        let count = sites.count
        var order = [Int](repeating: -1, count: count)  // discovery order, -1: unvisited
        var low = [Int](repeating: 0, count: count)
        var onStack = [Bool](repeating: false, count: count)
        var stack: [Int] = []
        component = [Int](repeating: -1, count: count)
        var counter = 0
        // The walk's own stack: a node and the next of its sites to look at.
        var frames: [(node: Int, next: Int)] = []
        for root in 0..<count where order[root] < 0 {
            frames.append((root, 0))
            order[root] = counter; low[root] = counter; counter += 1
            stack.append(root); onStack[root] = true
            while let top = frames.last {
                let node = top.node
                if top.next < sites[node].count {
                    frames[frames.count - 1].next += 1
                    let target = sites[node][top.next].target
                    if order[target] < 0 {
                        order[target] = counter; low[target] = counter; counter += 1
                        stack.append(target); onStack[target] = true
                        frames.append((target, 0))
                    } else if onStack[target] {
                        low[node] = min(low[node], order[target])
                    }
                    continue
                }
                frames.removeLast()
                if let parent = frames.last?.node { low[parent] = min(low[parent], low[node]) }
                if low[node] == order[node] {
                    let id = componentSize.count
                    var size = 0
                    while let member = stack.popLast() {
                        onStack[member] = false
                        component[member] = id
                        size += 1
                        if member == node { break }
                    }
                    componentSize.append(size)
                }
            }
        }
    }
}
