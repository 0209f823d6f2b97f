/// The least time a step of a plan can take, for the plan's "shortest wall time".
///
/// The model: a `delay` takes its duration; shell and print steps take no time and
/// succeed; a step that succeeds does so at its first attempt, and one that fails (under
/// the model, times out) fails every attempt its `retry` allows. A step ends in one of two ways that
/// matter to the steps after it: fine for its group (succeeded, skipped, or failed with
/// `continue_on_error`), or failing it (under the model only a time-out fails), after
/// which the group's later steps are skipped. So a bound keeps the least time of each
/// ending, nil when the step cannot end that way, and the longest the step can take,
/// which tells whether a `timeout` above it can pass. Taking the least over every way the
/// run can go is what makes the total a lower bound: a step that must time out counts
/// its timeout and skips its later siblings, and a step whose `if` is not known before
/// the run may be skipped, so it counts as zero as well as what it takes.
struct WallTimeBound {
    /// The least time in which the step ends without failing its group.
    var ok: Duration?
    /// The least time in which it ends failing its group.
    var failing: Duration?
    /// The longest it can take (at least as long as any way it can go).
    var longest: Duration

    /// A step that takes no time and cannot fail: a shell or print step, or one not run.
    static let instant = WallTimeBound(ok: .zero, failing: nil, longest: .zero)

    /// The least time, however the step ends (one of the two always exists).
    var least: Duration { min(ok ?? .maximum, failing ?? .maximum) }

    /// The bound of `node` with the values known before the run (`context`: the
    /// variables after `--var`, the workflow's name, the params of the enclosing action).
    static func of(_ node: PlanNode, in context: StaticContext) -> WallTimeBound {
        let runs = Self.runs(node, in: context, after: .unknown)
        return runs == false ? .instant : gated(work(of: node, in: context), runs: runs)
    }

    /// Whether `node` runs, as far as is known before the run, given what it comes after:
    /// nil when not known. Every bound below asks this once per way it can come, and works
    /// out the node's own `work` once whatever the answers: asking `of` for each way
    /// doubled the walk at every level (a `finally` in a `finally`…).
    static func runs(_ node: PlanNode, in context: StaticContext, after: Before) -> Bool? {
        guard node.selected else { return false }
        // Known false: skipped. Not known (an output, the environment, a status function
        // other than `always()`): it may be skipped, or run. The node's environment is
        // set only for its condition (each node carries its whole environment): copying
        // the context at every node was most of this walk.
        // After a failure in its list, a step without a status function in its `if` is
        // skipped: its `if` implies `success() &&`.
        guard let condition = node.condition else { return after != .failureInItsList }
        if after == .failureInItsList, condition.calls.isEmpty { return false }
        var scoped = context
        scoped.env = node.env
        let value = ExpressionEvaluator.evaluate(condition, in: BeforeTheRun(statics: scoped, afterFailure: after != .unknown))?.isTruthy
        // After a failure in its list a step runs only when its `if` is known to let it.
        return after == .failureInItsList ? value == true : value
    }

    /// The bound of work that runs when `runs` (not false) says: one that may be skipped
    /// (nil) may also take no time.
    static func gated(_ work: WallTimeBound, runs: Bool?) -> WallTimeBound {
        guard runs != false else { return .instant }
        var bound = work
        if runs == nil { bound.ok = .zero }
        return bound
    }

    /// The bound of `node` when it runs: its kind's work, its `timeout`, its `finally`, its
    /// `retry` and its `continue_on_error`.
    static func work(of node: PlanNode, in context: StaticContext) -> WallTimeBound {
        var bound: WallTimeBound
        switch node.kind {
        case .delay(let duration): bound = WallTimeBound(ok: duration, failing: nil, longest: duration)
        case .print, .shell: bound = .instant
        case .sequential: bound = sequence(node.children, in: context)
        case .use(_, let with):
            // Its `with` values may read its environment, as the run's do.
            var scoped = context
            scoped.env = node.env
            bound = sequence(node.children, in: scoped.entering(with))
        case .concurrent(let maxParallel, let failFast):
            bound = concurrent(node.children, maxParallel: maxParallel, failFast: failFast, in: context)
        }
        // The timeout races the step's own work; a group's `finally` runs after it whatever
        // happened, and is not cut short by it.
        if let timeout = node.timeout { bound = bound.limited(to: timeout) }
        if !node.finally.isEmpty {
            let finally = finallyList(node.finally, in: context)
            bound = bound.followed(by: finally.afterWork, afterFailure: finally.afterFailure)
        }
        // Each attempt has its timeout and runs its group's `finally`; a time-out is always
        // retried, so a step that fails fails every attempt, with the waits between them.
        if let retry = node.retry, retry.limit > 0 { bound = bound.retried(retry) }
        if node.continueOnError { bound = WallTimeBound(ok: minimum(bound.ok, bound.failing), failing: nil, longest: bound.longest) }
        return bound
    }

    /// Steps one after another: a failing one ends the list, but for the steps after it
    /// whose `if` lets them run after a failure (`always()`, `failure()`), which still
    /// run (those whose `if` is not known count as zero, which keeps the bound a lower one).
    static func sequence(_ nodes: [PlanNode], in context: StaticContext) -> WallTimeBound {
        var ok: Duration? = .zero
        var failing: Duration?
        var longest = Duration.zero
        for node in nodes {
            let runs = Self.runs(node, in: context, after: .unknown)
            let runsAfterFailure = failing == nil ? false : Self.runs(node, in: context, after: .failureInItsList)
            guard runs != false || runsAfterFailure != false else { continue }
            let work = work(of: node, in: context)
            let bound = gated(work, runs: runs)
            if let failed = failing { failing = failed.saturatingAdd(gated(work, runs: runsAfterFailure).least) }
            if let before = ok, let fails = bound.failing { failing = minimum(failing, before.saturatingAdd(fails)) }
            ok = ok.flatMap { before in bound.ok.map(before.saturatingAdd) }
            longest = longest.saturatingAdd(bound.longest)
        }
        return WallTimeBound(ok: ok, failing: failing, longest: longest)
    }

    /// Steps that start together, at most `maxParallel` at once (in file order, as the
    /// executor starts them: each as soon as a slot is free). A failure ends the group no
    /// sooner than the failing step; with `fail_fast` it cancels the others then, without
    /// it they run to their end. A step held back by `maxParallel` starts only when an
    /// earlier one has ended, so its failure comes that much later: the steps before it
    /// are counted at their least, which keeps the bound a lower one.
    static func concurrent(_ nodes: [PlanNode], maxParallel: Int?, failFast: Bool, in context: StaticContext) -> WallTimeBound {
        let bounds = nodes.filter(\.selected).map { of($0, in: context) }
        let slotCount = maxParallel.map { min($0, bounds.count) } ?? bounds.count
        var ok: Duration?
        let oks = bounds.compactMap(\.ok)
        if oks.count == bounds.count { ok = schedule(oks, slots: slotCount).end }
        let (starts, leastEnd) = schedule(bounds.map(\.least), slots: slotCount)
        var failing: Duration?
        if bounds.contains(where: { $0.failing != nil }) {
            if failFast {
                for (start, bound) in zip(starts, bounds) {
                    if let fails = bound.failing { failing = minimum(failing, start.saturatingAdd(fails)) }
                }
            } else {
                failing = leastEnd
            }
        }
        let longest = slotCount < bounds.count
            ? bounds.reduce(Duration.zero) { $0.saturatingAdd($1.longest) }
            : bounds.map(\.longest).max() ?? .zero
        return WallTimeBound(ok: ok, failing: failing, longest: longest)
    }

    /// When each of `times` starts, taken in order, each on the first of `slots` to be free,
    /// and when the last one ends.
    static func schedule(_ times: [Duration], slots: Int) -> (starts: [Duration], end: Duration) {
        guard !times.isEmpty else { return ([], .zero) }
        // Room for all at once: a wide group (thousands of steps) must not cost a scan of
        // every slot per step.
        if slots >= times.count { return ([Duration](repeating: .zero, count: times.count), times.max()!) }
        var free = [Duration](repeating: .zero, count: max(slots, 1))
        var starts: [Duration] = []
        starts.reserveCapacity(times.count)
        for time in times {
            let i = free.indices.min { free[$0] < free[$1] }!
            starts.append(free[i])
            free[i] = free[i].saturatingAdd(time)
        }
        return (starts, free.max() ?? .zero)
    }

    /// A `finally` list: every step runs, whatever the ones before did; one failing
    /// fails the group. As it goes after its group's work that ended fine, and after work
    /// that failed (where `failure()` is known to be true).
    static func finallyList(_ nodes: [PlanNode], in context: StaticContext)
        -> (afterWork: WallTimeBound, afterFailure: WallTimeBound) {
        var afterWork: [WallTimeBound] = []
        var afterFailure: [WallTimeBound] = []
        for node in nodes {
            let runs = Self.runs(node, in: context, after: .unknown)
            let runsAfterFailure = Self.runs(node, in: context, after: .failureBeforeFinally)
            let work = runs == false && runsAfterFailure == false ? .instant : work(of: node, in: context)
            afterWork.append(gated(work, runs: runs))
            afterFailure.append(gated(work, runs: runsAfterFailure))
        }
        func list(_ bounds: [WallTimeBound]) -> WallTimeBound {
            let least = bounds.reduce(Duration.zero) { $0.saturatingAdd($1.least) }
            let oks = bounds.compactMap(\.ok)
            return WallTimeBound(ok: oks.count == bounds.count ? oks.reduce(Duration.zero) { $0.saturatingAdd($1) } : nil,
                                 failing: bounds.contains { $0.failing != nil } ? least : nil,
                                 longest: bounds.reduce(Duration.zero) { $0.saturatingAdd($1.longest) })
        }
        return (list(afterWork), list(afterFailure))
    }

    /// The step raced against its `timeout`: what would take longer fails at the timeout.
    func limited(to timeout: Duration) -> WallTimeBound {
        WallTimeBound(ok: ok.flatMap { $0 <= timeout ? $0 : nil },
                      failing: Self.minimum(failing.map { min($0, timeout) }, longest >= timeout ? timeout : nil),
                      longest: min(longest, timeout))
    }

    /// The step under its `retry`: succeeding, it may do so at the first attempt; failing,
    /// it fails every attempt (a time-out, the one failure of the model, is retried
    /// whatever `exit_codes` says, and so is any failure of a group), with each retry's
    /// wait before it. A step that cannot fail is never retried. Once the waits stop
    /// growing (no backoff, or `max_delay` reached) the rest is one multiplication; past
    /// `countedRetries` growing waits are left out, which keeps the bound a lower one and
    /// its cost small whatever the limit (every step of a large workflow may have a retry).
    func retried(_ retry: RetryPolicy) -> WallTimeBound {
        guard failing != nil else { return self }
        let extra = { (attempt: Duration) -> Duration in
            var total = Duration.zero
            var previous: Duration?
            var n = 2
            let last = 1 + retry.limit
            while n <= last, n <= 1 + Self.countedRetries, total < .maximum {
                let wait = retry.delay(beforeAttempt: n)
                if wait == previous {
                    return total.saturatingAdd(wait.saturatingAdd(attempt).saturatingMultiplied(by: last - n + 1))
                }
                previous = wait
                total = total.saturatingAdd(wait).saturatingAdd(attempt)
                n += 1
            }
            return total
        }
        return WallTimeBound(ok: ok, failing: failing.map { $0.saturatingAdd(extra($0)) },
                             longest: longest.saturatingAdd(extra(longest)))
    }

    /// How many retries with growing waits the bound counts at most.
    static let countedRetries = 10_000

    /// The step's work followed by its group's `finally` list: `finally` as it goes after
    /// work that ended fine, `afterFailure` after work that failed.
    func followed(by finally: WallTimeBound, afterFailure: WallTimeBound) -> WallTimeBound {
        let okThenFailing = ok.flatMap { ok in finally.failing.map(ok.saturatingAdd) }
        return WallTimeBound(ok: ok.flatMap { ok in finally.ok.map(ok.saturatingAdd) },
                             failing: Self.minimum(failing.map { $0.saturatingAdd(afterFailure.least) }, okThenFailing),
                             longest: longest.saturatingAdd(max(finally.longest, afterFailure.longest)))
    }

    /// What a step is known to come after, for its `if`.
    enum Before {
        /// Nothing known: status functions other than `always()` are not known.
        case unknown
        /// A failure of an earlier step of its list: `failure()` is true, `success()` and
        /// `cancelled()` false (a run that is cancelled takes no time the bound counts),
        /// and it runs only if its `if` calls a status function (one without implies
        /// `success() &&`); else it counts as zero, skipped.
        case failureInItsList
        /// A failure of the work of the group whose `finally` it is in: the same values,
        /// and its `if` decides alone, as every step of a `finally` list runs.
        case failureBeforeFinally
    }

    /// The lesser of two optional durations (nil only when both are).
    static func minimum(_ a: Duration?, _ b: Duration?) -> Duration? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    /// What `if` conditions can see before the run: the static values, and `always()`;
    /// the other status functions depend on how the run goes.
    struct BeforeTheRun: ExpressionEvaluator.Context {
        var statics: StaticContext
        /// After a failure of the step's list: `failure()` is true and `success()` false
        /// (a run that is cancelled takes no time the bound counts).
        var afterFailure = false

        func value(of path: [String]) -> ExpressionValue? { statics.value(of: path) }
        func status(_ function: String) -> Bool? {
            switch function {
            case "always": return true
            case "failure": return afterFailure ? true : nil
            case "success", "cancelled": return afterFailure ? false : nil
            default: return nil
            }
        }
    }
}
