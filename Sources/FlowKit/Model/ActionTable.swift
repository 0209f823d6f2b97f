/// The workflow's actions and their parameters by name, built once: looking them up by a
/// scan of the lists at every `use` site and every `params.…` reference made a file with
/// thousands of either quadratic (20,000 of each: seconds).
struct ActionTable {
    private let actions: [Action]
    private var byName: [String: Int] = [:]
    private var paramsByAction: [[String: Int]] = []

    init(_ actions: [Action]) {
        self.actions = actions
        for (i, action) in actions.enumerated() {
            // The first declaration wins, as `Workflow.action(named:)` does.
            if byName[action.name.value] == nil { byName[action.name.value] = i }
            var params: [String: Int] = [:]
            for (j, param) in action.params.enumerated() where params[param.name.value] == nil { params[param.name.value] = j }
            paramsByAction.append(params)
        }
    }

    /// The action called `name`, if declared.
    func action(named name: String) -> Action? {
        byName[name].map { actions[$0] }
    }

    /// The parameter `name` of the action called `action`, if both are declared.
    func param(named name: String, of action: String) -> Param? {
        guard let i = byName[action], let j = paramsByAction[i][name] else { return nil }
        return actions[i].params[j]
    }
}
