#!/usr/bin/env python3
"""flow against a big journal: does a command's time or memory grow with the history?

    python3 bench/journal_scale.py [--sizes 1000,10000,50000] [--seed-runs 200] [--reps 3]

Builds journals of each size (runs of a 111-step workflow: 100 leaves in 10 groups, each
group with a step that prints 5 lines, one that writes an output and one with an `undo`;
one run in ten fails at its last step, kept unrolled back with --no-rollback) and times,
against each, the commands a user runs beside a long history: `flow run` of a one-step
workflow (start-up) and of bench/out/seq1000 (a commit per step), `runs`, `runs --limit
20`, `runs --json`, `show` of the oldest and of the newest run, `logs`, `resume` of an old failed run,
`undo` of an old run, the open of the journal (a `runs --limit 1`; the first one on a
journal another flow built includes the migrations it lacks) and last `runs --prune 100`,
with the journal's size before and after.

How a journal is built: the seed runs (--seed-runs, two at a time) are real `flow run`s
of the workflow; a journal of N runs is then the seeds plus copies of their rows (every
table, `INSERT … SELECT` with new run ids, each copy started an hour earlier per round, so
copies are older than the seeds; a copy's output file is a hard link to its seed's).
Building 50,000 runs through the binary would take hours on this machine; the copies have
the rows and the shape flow writes (a copy's steps keep their seed's times).

Each size's journal is kept in --work (default bench/out/journal_scale/) and reused by
later invocations with the same --seed-runs, so two binaries are measured against the same
journals: FLOW=old … then FLOW=new …. Every measurement runs on a fresh copy (`cp -a`) of
the size's journal. Wall time is time.perf_counter() around `/usr/bin/time -f %M CMD`
(median of --reps; resume, undo and prune act on a different run each time, the prune once);
peak RSS is the largest %M.

Needs bench/out/seq1000 and bench/out/startup (python3 bench/gen.py seq1000 startup).
flow is $FLOW if set, else .build-release/release/flow.
"""
import argparse, json, os, random, shutil, sqlite3, statistics, subprocess, sys, time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def workflow():
    """The seed workflow: 10 groups of 10 leaves, then a gate that fails when FAIL=1."""
    lines = ["version: 1", "name: scale", "steps:"]
    for g in range(10):
        lines += ["  - name: group%d" % g, "    sequential:"]
        for i in range(10):
            name = "g%ds%d" % (g, i)
            if i == 0:
                lines += ["      - name: %s" % name, "        shell: seq 1 5"]
            elif i == 1:
                lines += ["      - name: %s" % name, "        shell: echo \"v=%d\" >> \"$FLOW_OUTPUT\"" % g,
                          "        outputs: [v]"]
            elif i == 2:
                lines += ["      - name: %s" % name, "        print: step %s" % name,
                          "        undo: { print: undo %s }" % name]
            else:
                lines += ["      - name: %s" % name, "        print: step %s" % name]
    lines += ["  - name: gate", "    shell: test \"${FAIL:-0}\" != 1"]
    return "\n".join(lines) + "\n"


def sh(argv, cwd, env=None, check=True):
    done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if check and done.returncode not in (0, 1):
        sys.exit("journal_scale.py: %s exited %d: %s" % (" ".join(argv), done.returncode, done.stderr.decode()[-400:]))
    return done.returncode


def make_seed(flow, work, seeds):
    """The seed journal: `seeds` real runs, two at a time, one in ten failing."""
    wf = os.path.join(work, "wf")
    state = os.path.join(work, "seed")
    if os.path.isfile(os.path.join(state, "done")):
        return state
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(wf, exist_ok=True)
    with open(os.path.join(wf, "flow.yml"), "w") as f:
        f.write(workflow())
    log("seeding %d runs through %s ..." % (seeds, flow))
    start = time.perf_counter()
    running = []
    for i in range(seeds):
        fail = i % 10 == 9
        env = dict(os.environ, FAIL="1" if fail else "0")
        argv = [flow, "run", "flow.yml", "--state-dir", state, "--output", "prefixed"] + (["--no-rollback"] if fail else [])
        running.append(subprocess.Popen(argv, cwd=wf, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if len(running) == 2:
            running.pop(0).wait()
    for p in running:
        p.wait()
    log("  %.1f s" % (time.perf_counter() - start))
    open(os.path.join(state, "done"), "w").close()
    return state


def copy_dir(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    subprocess.run(["cp", "-a", src, dst], check=True)


def grow(src, dst, size):
    """`dst`: the journal of `src` with copies of the seed runs added up to `size` runs."""
    copy_dir(src, dst)
    db = sqlite3.connect(os.path.join(dst, "journal.sqlite"), isolation_level=None)
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -1000000")
    meta_path = os.path.join(dst, "meta.json")
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else None
    if meta is None:
        seeds = [r[0] for r in db.execute("SELECT id FROM runs ORDER BY started_at")]
        meta = {"seeds": seeds, "copies": 0}
    seeds = meta["seeds"]
    have = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    need = size - have
    if need <= 0:
        db.close()
        return
    ids = set(r[0] for r in db.execute("SELECT id FROM runs"))
    started = dict(db.execute("SELECT id, started_at FROM runs WHERE id IN (%s)" % ",".join("?" * len(seeds)), seeds))
    rng = random.Random(size)
    mapping = []
    for c in range(meta["copies"], meta["copies"] + need):
        seed = seeds[c % len(seeds)]
        shift = -3600.0 * (c // len(seeds) + 1)
        while True:
            new = "%08x-%08x" % (int(started[seed] + shift), rng.getrandbits(32))
            if new not in ids:
                break
        ids.add(new)
        mapping.append((seed, new, shift))
    meta["copies"] += need
    log("  %s: adding %d copies ..." % (os.path.basename(dst), need))
    start = time.perf_counter()
    db.execute("BEGIN")
    db.execute("CREATE TEMP TABLE idmap (old_id TEXT, new_id TEXT, shift REAL)")
    db.executemany("INSERT INTO idmap VALUES (?, ?, ?)", mapping)
    for table in ("runs", "steps", "attempts", "outputs", "transitions", "output_lines"):
        columns = [r[1] for r in db.execute("PRAGMA table_info(%s)" % table)]
        key = "id" if table == "runs" else "run_id"
        picked = []
        for c in columns:
            if c == key:
                picked.append("m.new_id")
            elif table == "runs" and c in ("started_at", "ended_at"):
                picked.append("t.%s + m.shift" % c)
            elif table == "output_lines" and c == "id":
                picked.append("NULL")
            else:
                picked.append("t." + c)
        order = ", t.id" if table == "output_lines" else ""
        db.execute("INSERT INTO %s (%s) SELECT %s FROM idmap m JOIN %s t ON t.%s = m.old_id ORDER BY m.new_id%s"
                   % (table, ", ".join(columns), ", ".join(picked), table, key, order))
    db.execute("COMMIT")
    db.execute("PRAGMA journal_mode = WAL")
    db.close()
    for seed, new, _ in mapping:
        log_file = os.path.join(dst, "output", seed + ".log")
        if os.path.exists(log_file):
            os.link(log_file, os.path.join(dst, "output", new + ".log"))
    json.dump(meta, open(meta_path, "w"))
    log("  %.1f s" % (time.perf_counter() - start))


def journal_bytes(state):
    return sum(os.path.getsize(os.path.join(state, n)) for n in ("journal.sqlite", "journal.sqlite-wal")
               if os.path.exists(os.path.join(state, n)))


class Timer:
    def __init__(self, flow, scratch):
        self.flow = flow
        self.tfile = os.path.join(scratch, "time.out")

    def __call__(self, args, cwd, env=None):
        argv = ["/usr/bin/time", "-o", self.tfile, "-f", "%M", self.flow] + args
        start = time.perf_counter()
        status = sh(argv, cwd, env)
        wall = time.perf_counter() - start
        rss = int(open(self.tfile).read().split()[-1])
        return wall, rss, status


def ids(state, sql):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(state, "journal.sqlite"), uri=True)
    try:
        return [r[0] for r in db.execute(sql)]
    finally:
        db.close()


def measure(timer, template, work, reps):
    """Every operation against a fresh copy of `template`: name → (median s, max RSS KiB, note)."""
    state = os.path.join(work, "state")
    copy_dir(template, state)
    wf = os.path.join(work, "wf")
    sd = ["--state-dir", state]
    results = {}

    def record(name, samples, note=""):
        results[name] = (statistics.median(s[0] for s in samples), max(s[1] for s in samples), note)

    record("open, first (+ migrations)", [timer(["runs", "--limit", "1"] + sd, wf)])
    record("open (runs --limit 1)", [timer(["runs", "--limit", "1"] + sd, wf) for _ in range(reps)])
    startup = os.path.join(BENCH, "out", "startup", "flow.yml")
    seq = os.path.join(BENCH, "out", "seq1000", "flow.yml")
    record("run, 1 step", [timer(["run", startup, "--output", "prefixed"] + sd, wf) for _ in range(reps)])
    record("run seq1000", [timer(["run", seq, "--output", "prefixed"] + sd, wf) for _ in range(reps)])
    record("runs", [timer(["runs"] + sd, wf) for _ in range(reps)])
    record("runs --json", [timer(["runs", "--json"] + sd, wf) for _ in range(reps)])
    record("runs --limit 20", [timer(["runs", "--limit", "20"] + sd, wf) for _ in range(reps)])
    oldest = ids(state, "SELECT id FROM runs ORDER BY started_at LIMIT 1")[0]
    newest = ids(state, "SELECT id FROM runs WHERE workflow_name = 'scale' ORDER BY started_at DESC LIMIT 1")[0]
    record("show <oldest>", [timer(["show", oldest] + sd, wf) for _ in range(reps)])
    record("show <newest>", [timer(["show", newest] + sd, wf) for _ in range(reps)])
    record("logs <newest>", [timer(["logs", newest] + sd, wf) for _ in range(reps)])
    failed = ids(state, "SELECT id FROM runs WHERE state = 'failed' ORDER BY started_at LIMIT %d" % reps)
    record("resume <old failed>", [timer(["resume", r, "--output", "prefixed"] + sd, wf, dict(os.environ, FAIL="0"))
                                    for r in failed])
    done = ids(state, "SELECT id FROM runs WHERE state = 'succeeded' AND workflow_name = 'scale' ORDER BY started_at LIMIT %d" % reps)
    record("undo <old run>", [timer(["undo", r, "--output", "prefixed"] + sd, wf) for r in done])
    before = journal_bytes(state)
    sample = timer(["runs", "--prune", "100"] + sd, wf)
    after = journal_bytes(state)
    record("runs --prune 100", [sample], "journal %.0f → %.0f MB" % (before / 1e6, after / 1e6))
    record("runs --limit 20, pruned", [timer(["runs", "--limit", "20"] + sd, wf) for _ in range(reps)])
    shutil.rmtree(state, ignore_errors=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000", help="journal sizes in runs, comma-separated")
    parser.add_argument("--seed-runs", type=int, default=200, help="real runs the journals are copied from")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--work", default=os.path.join(BENCH, "out", "journal_scale"))
    parser.add_argument("--prepare", action="store_true", help="build the journals, measure nothing")
    args = parser.parse_args()
    flow = os.path.abspath(os.environ.get("FLOW", os.path.join(ROOT, ".build-release", "release", "flow")))
    if not os.access(flow, os.X_OK):
        sys.exit("journal_scale.py: %s is missing (set FLOW or run bash bench/setup.sh)" % flow)
    for w in ("startup", "seq1000"):
        if not os.path.isfile(os.path.join(BENCH, "out", w, "flow.yml")):
            sys.exit("journal_scale.py: bench/out/%s is missing (python3 bench/gen.py seq1000 startup)" % w)
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("journal_scale.py: /usr/bin/time is missing (bash bench/setup.sh --no-flow)")
    sizes = [int(s) for s in args.sizes.split(",")]
    work = os.path.abspath(os.path.join(args.work, "seed%d" % args.seed_runs))
    os.makedirs(work, exist_ok=True)
    seed = make_seed(flow, work, args.seed_runs)
    timer = Timer(flow, work)
    previous = seed
    table = {}
    for size in sorted(sizes):
        template = os.path.join(work, "journal%d" % size)
        if not os.path.isfile(os.path.join(template, "ready")):
            grow(previous, template, size)
            open(os.path.join(template, "ready"), "w").close()
        previous = template
        if args.prepare:
            continue
        log("measuring %d runs (%.0f MB) ..." % (size, journal_bytes(template) / 1e6))
        table[size] = measure(timer, template, work, args.reps)
    if args.prepare:
        return
    print("flow %s, %d seed runs, median of %d (ms), peak RSS (MB)" % (flow, args.seed_runs, args.reps))
    print()
    print("| operation | " + " | ".join("%d runs" % s for s in sorted(sizes)) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name in table[sorted(sizes)[0]]:
        cells = []
        for s in sorted(sizes):
            wall, rss, note = table[s][name]
            cells.append("%.1f ms, %.0f MB%s" % (wall * 1000, rss / 1024, (" (" + note + ")") if note else ""))
        print("| %s | %s |" % (name, " | ".join(cells)))


if __name__ == "__main__":
    main()
