#!/usr/bin/env python3
"""Power-cut approximation: copy the state dir file by file (in a random order) while a run is
live, as a machine that lost unsynced writes out of order might leave it, then check that every
command reads the copy and that resume and undo on it act on what it says.

    python3 Tests/crash/snapshot.py --trials 100 --seed 1
"""
import argparse, json, os, random, shutil, subprocess, sys, time, threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import audit, shapes


def copy_state(src, dst, rng):
    files = []
    for d, _, fs in os.walk(src):
        for f in fs:
            files.append(os.path.join(d, f))
    rng.shuffle(files)
    for f in files:
        rel = os.path.relpath(f, src)
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        try:
            shutil.copyfile(f, os.path.join(dst, rel))
        except FileNotFoundError:
            pass
        if rng.random() < 0.3:
            time.sleep(rng.random() * 0.01)


def trial(seed, shape):
    t = audit.Trial(seed, shape)
    rng = t.rng
    p = subprocess.Popen([audit.FLOW, "run", "wf.yaml", "--output", "prefixed"], cwd=t.root, env=t.env(True),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    end = time.time() + rng.random() * audit.EST[shape]
    while time.time() < end and p.poll() is None:
        time.sleep(0.0005)
    snap = f"{t.root}/snap"
    if os.path.exists(t.state):
        copy_state(t.state, snap, rng)
    p.wait()
    t.kill_leftovers()
    if not os.path.exists(f"{snap}/journal.sqlite"):
        return t, "no journal in the copy"
    t.state = snap
    res = "killed"  # what the copy shows is a run whose flow is gone
    rid, sj = t.check_run(res, "run")
    if rid is None:
        return t, "run not in the copy"
    state = sj["state"]
    if state in ("interrupted", "failed"):
        r, o, e = t.invoke(["resume", rid], None)
        r2, sj2 = t.check_run(r, "resume", rid)
        if sj2:
            t.check_resume(sj, r2, sj2, r)
        return t, f"{state}, resumed -> {r}"
    return t, state


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    names = sorted(shapes.SHAPES)
    bad = 0
    for s in range(a.seed, a.seed + a.trials):
        shape = names[s % len(names)]
        try:
            t, what = trial(s, shape)
        except Exception as ex:
            print(f"seed {s} {shape}: EXC {ex}")
            bad += 1
            continue
        # `flow logs` of a copy whose output file is older than its rows may say so (exit 2): documented.
        probs = [p for p in t.problems if not ("flow logs" in p and "shorter" in p)]
        print(f"seed {s} {shape}: {'FAIL' if probs else 'ok'} :: {what}", flush=True)
        for p in probs:
            print("    " + p, flush=True)
        if probs:
            bad += 1
        else:
            shutil.rmtree(t.root, ignore_errors=True)
    print(f"{a.trials} snapshot trials, {bad} with problems")
    with open(os.path.join(audit.OUT, "log.md"), "a") as f:
        f.write(f"\n## snapshot (power-cut copy) trials {a.seed}..{a.seed + a.trials - 1}: {bad} with problems\n")


if __name__ == "__main__":
    main()
