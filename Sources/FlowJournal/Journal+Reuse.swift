import FlowKit

/// Which recorded results a resume may reuse for the steps of the workflow it runs.
extension Journal {
    /// Drops from `reuse` the steps of `plan` (the workflow `content` a resume of `run`
    /// runs) that are not the step whose result it is, and says which and why (label,
    /// reason, and whether the result is another step's: the step at its path now never
    /// ran, so it runs rather than runs again), in plan order.
    ///
    /// Steps match by path, a position. A result is of the step at its path in the content
    /// of the run it came from: `run` itself, or for a step `carriedSteps` carried on, the
    /// earlier run that reached it (`StepRecord.origin`). When that content is `content`,
    /// the step is the same; otherwise (a resume with `--force` of an edited file, now or
    /// in a resume this one carries on) it must have the recorded name, kind and what it
    /// does (`StepRecord.change`). The recorded content is planned, quietly, with that run's
    /// arguments; if it no longer plans, the journal's labels are compared instead.
    public func unmatchedReuse(_ reuse: inout [String: StepResult], steps: [StepRecord], plan: Plan, content: [UInt8],
                               run: RunRecord) throws(JournalError) -> [(label: String, reason: String, anotherStep: Bool)]
    {
        let records = Dictionary(steps.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var runs = [run.id: run]
        var origins: [String: Origin] = [:]
        var changed: [(label: String, reason: String, anotherStep: Bool)] = []
        for node in plan.steps where reuse[node.path] != nil {
            guard let step = records[node.path] else { continue }
            let id = step.origin ?? run.id
            if runs[id] == nil { runs[id] = try self.run(id) }
            guard runs[id]!.content != content else { continue }
            // Planned (and read) only for a run whose content is not the one running.
            if origins[id] == nil { origins[id] = try Origin(runs[id]!, readSteps: id != run.id, journal: self) }
            let origin = origins[id]!
            // A carried step's own record is the earlier run's: `step` has the name and kind
            // of the step at this path in the run read.
            let recorded = step.origin == nil ? step : origin.steps[node.path]
            let reason = recorded.map { recorded in
                recorded.change(to: node, recordedNode: origin.plan.map { $0[node.path] } ?? nil, run: id)
            } ?? "run \(id) recorded no step in its place"
            if let reason {
                reuse[node.path] = nil
                let same = recorded.map { $0.name == node.name && $0.kind == node.keyword } ?? false
                changed.append((node.label, reason, !same))
            }
        }
        return changed
    }

    /// A run a reused result came from: the plan of its content by path (nil when it no
    /// longer plans), and its steps by path (when `readSteps`: the resumed run's are at hand).
    private struct Origin {
        var plan: [String: PlanNode]?
        var steps: [String: StepRecord] = [:]

        init(_ run: RunRecord, readSteps: Bool, journal: Journal) throws(JournalError) {
            let options = run.args.planOptions
            let loaded = LoadedWorkflow.load(SourceFile(path: run.workflowPath, bytes: run.content),
                                             overriddenVars: Set(options.vars.map(\.name)))
            let planned = loaded.isValid ? loaded.workflow.flatMap { try? Planner.plan($0, options: options, forRunning: false) } : nil
            plan = planned.map { Dictionary($0.steps.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first }) }
            guard readSteps else { return }
            for step in try journal.steps(run.id) where steps[step.path] == nil { steps[step.path] = step }
        }
    }
}
