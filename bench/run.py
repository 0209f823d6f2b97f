#!/usr/bin/env python3
"""Benchmark harness: runs every variant of the selected workloads
round-robin (one run of each variant per round, K rounds) and prints a
markdown table of wall time and peak RSS, with ratios to the workload's
floor (the first variant of kind "floor").

    python3 bench/run.py                          # every workload, 5 reps
    python3 bench/run.py --only seq1000 stages --reps 9
    python3 bench/run.py --only static100k --variant 'libyaml*' 'flow validate' 'flow plan' \\
        --target 0.35 200                         # what bench/static.sh does

Wall time: time.perf_counter() around `/usr/bin/time -f '%M' CMD`, so it
includes ~1 ms of /usr/bin/time's own fork+exec, the same for every variant.
Peak RSS: GNU time's %M, the largest resident set among the command and the
descendants it waited for (for a runner: the runner itself, in practice).

flow is `$FLOW`, else `.build-release/release/flow` under the repo root.
Before a flow variant runs, the flow features it needs are probed on a tiny
workflow (does `validate` reject an invalid file, does `run` really run a
step...); a variant whose feature is missing shows `n/a (...)` and is not
timed, so a stub or a half-landed command never yields a figure.
"""

import argparse
import fnmatch
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gen  # noqa: E402


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------

def find_tool(name, env):
    """$ENV, else the script folder of the Python running us (where
    `python3 -m pip install` put it; avoids pyenv's slow bash shims), else PATH."""
    if os.environ.get(env):
        return os.environ[env]
    cand = os.path.join(sysconfig.get_path("scripts"), name)
    if os.access(cand, os.X_OK):
        return cand
    return shutil.which(name)


def tools():
    flow = os.environ.get("FLOW") or os.path.join(ROOT, ".build-release", "release", "flow")
    return {
        "flow": flow if os.access(flow, os.X_OK) else None,
        "task": find_tool("task", "TASK"),
        "just": find_tool("just", "JUST"),
        "bin": os.path.join(HERE, "bin"),
        "time": "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None,
    }


# --------------------------------------------------------------------------
# Probing flow's features
# --------------------------------------------------------------------------

PROBE_GOOD = """version: 1
name: probe
steps:
  - print: "flowbench-marker-41"
    name: probe_print
  - shell: touch ran.txt
    name: probe_touch
"""
PROBE_BAD = """version: 1
name: probe
steps:
  - frobnicate: 3
    name: "1 not a valid name"
"""


class Prober:
    def __init__(self, flow):
        self.flow = flow
        self.cache = {}
        self.dir = os.path.join(gen.OUT, "_probe")

    def _run(self, args, timeout=60):
        os.makedirs(self.dir, exist_ok=True)
        for f, text in (("good.yml", PROBE_GOOD), ("bad.yml", PROBE_BAD)):
            with open(os.path.join(self.dir, f), "w") as fh:
                fh.write(text)
        for junk in ("ran.txt",):
            p = os.path.join(self.dir, junk)
            if os.path.exists(p):
                os.unlink(p)
        shutil.rmtree(os.path.join(self.dir, ".flow"), ignore_errors=True)
        try:
            p = subprocess.run([self.flow] + args, cwd=self.dir, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "", False
        except OSError as e:
            return None, str(e), False
        out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        return p.returncode, out, os.path.exists(os.path.join(self.dir, "ran.txt"))

    def check(self, feature):
        """None if `feature` works, else the reason shown in the table."""
        if feature in self.cache:
            return self.cache[feature]
        self.cache[feature] = r = self._check(feature)
        if r:
            log("  probe %-15s -> %s" % (feature, r))
        return r

    def _check(self, feature):
        if not self.flow:
            return "n/a (no flow binary)"
        marker = "flowbench-marker-41"
        if feature == "validate":
            rc, _, ran = self._run(["validate", "good.yml"])
            if rc != 0:
                return "n/a (exit %s)" % rc
            rc, _, _ = self._run(["validate", "bad.yml"])
            if rc == 0:
                return "n/a (validate accepts an invalid file: not implemented)"
            return "n/a (validate ran a step)" if ran else None
        if feature == "plan":
            rc, out, ran = self._run(["plan", "good.yml"])
            if rc != 0:
                return "n/a (exit %s)" % rc
            if "probe_touch" not in out and "touch ran.txt" not in out:
                return "n/a (plan does not print the steps: not implemented)"
            return "n/a (plan ran a step)" if ran else None
        if feature == "dry-run":
            rc, _, ran = self._run(["run", "good.yml", "--dry-run"])
            if rc != 0:
                return "n/a (exit %s)" % rc
            return "n/a (--dry-run ran a step)" if ran else None
        extra = {"run": [], "no-journal": ["--no-journal"],
                 "output-raw": ["--output", "raw"], "output-prefixed": ["--output", "prefixed"],
                 "output-grouped": ["--output", "grouped"]}
        if feature in extra:
            rc, out, ran = self._run(["run", "good.yml"] + extra[feature])
            if rc != 0:
                return "n/a (exit %s)" % rc
            if marker not in out or not ran:
                return "n/a (run does not run the steps: not implemented)"
            return None
        return "n/a (unknown feature %s)" % feature


# --------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------

class Failed(Exception):
    pass


def expand(variant, t, out):
    subst = dict(t, out=out)

    def fill(word):
        for k, v in subst.items():
            if "{%s}" % k in word:
                if v is None:
                    raise Failed("n/a (no %s)" % k)
                word = word.replace("{%s}" % k, v)
        return word

    argv = [fill(w) for w in variant["argv"]]
    if variant.get("shell"):
        argv = ["/bin/sh", "-c", " ".join(argv)]
    return argv


def measure(argv, cwd, stdout_mode, timeout, capture_err=False):
    """Returns (wall seconds, peak RSS KiB, exit status, stderr tail)."""
    # flow's journal is kept from run to run, as for a user who runs a workflow again and
    # again; only the runs' output logs go (output200 writes 200 MB into one per run).
    shutil.rmtree(os.path.join(cwd, ".flow", "output"), ignore_errors=True)
    with tempfile.NamedTemporaryFile("r", prefix="bench-time-", delete=False) as tf:
        tpath = tf.name
    errf = tempfile.TemporaryFile() if capture_err else subprocess.DEVNULL
    drain = None
    try:
        if stdout_mode == "pipe":
            # stdout goes to a pipe drained by cat, as to a terminal or log collector.
            drain = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
            stdout = drain.stdin
        else:
            stdout = subprocess.DEVNULL
        cmd = ["/usr/bin/time", "-o", tpath, "-f", "%M"] + argv
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=errf,
                             start_new_session=True)
        if drain:
            drain.stdin.close()
        # Not p.wait(timeout=...): Python polls that with sleeps of up to 50 ms, which
        # rounds every measurement up to the next poll. A timer kills it instead, and the
        # wait itself blocks in waitpid.
        expired = threading.Event()

        def expire():
            expired.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, expire)
        timer.start()
        rc = p.wait()
        wall = time.perf_counter() - t0
        timer.cancel()
        if expired.is_set():
            raise Failed("n/a (timeout %ds)" % timeout)
        if drain:
            drain.wait()
        # GNU time exits with the command's status (128+N if killed by signal N).
        try:
            os.killpg(p.pid, signal.SIGKILL)  # leftovers of a runner that did not wait
        except ProcessLookupError:
            pass
        with open(tpath) as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
        rss = int(lines[-1]) if lines and lines[-1].strip().isdigit() else None
        tail = ""
        if capture_err:
            errf.seek(0)
            tail = errf.read()[-600:].decode(errors="replace").strip()
        return wall, rss, rc, tail
    finally:
        if drain and drain.poll() is None:
            drain.kill()
            drain.wait()
        if capture_err:
            errf.close()
        os.unlink(tpath)


def cancellation_not_measured(workload):
    """The cancellation workload has its own script, bench/cancel.py: flow with 100
    steps that obey, trap or ignore TERM and a background grandchild, signalled
    after every child said `ready` (SIGINT, SIGTERM, Ctrl-C to the group); it
    prints time to exit, exit status and leftover processes. Peers are not run
    there (go-task, just and make never exit or leave orphans: measured-facts)."""
    return [{"workload": workload, "variant": "(all)", "result": "see `python3 bench/cancel.py`"}]


# --------------------------------------------------------------------------
# Table
# --------------------------------------------------------------------------

def fmt_time(s):
    if s is None:
        return "–"
    if s < 1:
        return "%.1f ms" % (s * 1000)
    return "%.3f s" % s


def fmt_rss(kib):
    return "–" if kib is None else "%.1f MB" % (kib * 1024 / 1e6)


def cell(s):
    return str(s).replace("|", "\\|")


def table(rows):
    out = ["| workload | variant | median | min–max | peak RSS | time ×floor | RSS ×floor |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "result" in r:
            out.append("| %s | %s | %s | | | | |" % (r["workload"], cell(r["variant"]), r["result"]))
            continue
        out.append("| %s | %s | %s | %s – %s | %s | %s | %s |" % (
            r["workload"], cell(r["variant"]), fmt_time(r["median"]), fmt_time(r["min"]), fmt_time(r["max"]),
            fmt_rss(r["rss"]), r["ratio"], r["rss_ratio"]))
    return "\n".join(out)


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", metavar="WORKLOAD", help="workloads to run (default: all)")
    ap.add_argument("--variant", nargs="+", metavar="GLOB", help="only variants whose name matches")
    ap.add_argument("--reps", type=int, default=5, help="timed runs of each variant (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs of each variant first (default 1)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds before one run is killed")
    ap.add_argument("--budget", type=float, default=60,
                    help="seconds after which a slow variant gets no more runs, once it has "
                         "one timed run (default 60); its row shows how many it had")
    ap.add_argument("--json", metavar="FILE", help="also write every sample to FILE")
    ap.add_argument("--target", nargs=2, type=float, metavar=("SECONDS", "MB"),
                    help="check every flow variant's median and peak RSS against these")
    ap.add_argument("--list", action="store_true", help="list workloads and exit")
    args = ap.parse_args()

    if args.list:
        for name, spec in gen.WORKLOADS.items():
            print("%-11s %s" % (name, spec["about"]))
        return 0
    names = args.only or list(gen.WORKLOADS)
    for n in names:
        if n not in gen.WORKLOADS:
            ap.error("unknown workload %r (see --list)" % n)

    t = tools()
    if not t["time"]:
        log("run.py: /usr/bin/time is missing: run bench/setup.sh")
        return 2
    for k in ("flow", "task", "just"):
        log("%-5s %s" % (k, t[k] or "(not found)"))
    prober = Prober(t["flow"])

    rows = []
    for w in names:
        spec = gen.WORKLOADS[w]
        if spec.get("todo"):
            rows += cancellation_not_measured(w)
            continue
        out = gen.ensure(w)
        variants = [v for v in spec["variants"]
                    if not args.variant or any(fnmatch.fnmatch(v["name"], g) for g in args.variant)]
        state = []
        for v in variants:
            st = {"v": v, "samples": [], "rss": [], "result": None, "spent": 0.0}
            try:
                for need in v["needs"]:
                    reason = prober.check(need)
                    if reason:
                        raise Failed(reason)
                st["argv"] = expand(v, t, out)
            except Failed as e:
                st["result"] = str(e)
            state.append(st)

        log("== %s: %s" % (w, spec["about"]))
        # A new journal for each workload: the warm-up round makes it (a state dir's first
        # run also creates the database, which the timed runs do not repeat).
        shutil.rmtree(os.path.join(out, ".flow"), ignore_errors=True)
        stdout_mode = spec.get("stdout", "null")
        for rnd in range(args.warmup + args.reps):
            timed = rnd >= args.warmup
            for st in state:
                if st["result"]:
                    continue
                if st["spent"] >= args.budget and (st["samples"] or not timed):
                    continue  # slow variant: keep the samples it has (at least one timed)
                try:
                    wall, rss, rc, tail = measure(st["argv"], out, stdout_mode, args.timeout,
                                                  capture_err=not timed)
                except Failed as e:
                    st["result"] = str(e)
                    continue
                st["spent"] += wall
                if rc != 0:
                    st["result"] = "n/a (exit %d)" % rc
                    log("  %-28s exit %d%s" % (st["v"]["name"], rc, (": " + tail.splitlines()[-1]) if tail else ""))
                    continue
                if timed or wall >= args.budget:  # a run that long needs no warm-up
                    st["samples"].append(wall)
                    st["rss"].append(rss)
                log("  %-28s %s %10s  %s" % (st["v"]["name"], "run " if timed else "warm",
                                               fmt_time(wall), fmt_rss(rss)))

        floor = next((s for s in state if s["v"]["kind"] == "floor"), None)
        fmed = statistics.median(floor["samples"]) if floor and floor["samples"] and not floor["result"] else None
        frss = max(floor["rss"]) if fmed is not None and None not in floor["rss"] else None
        for st in state:
            name = st["v"]["name"] + (" *(floor)*" if st is floor else "")
            if st["result"] or not st["samples"]:
                rows.append({"workload": w, "variant": name, "result": st["result"] or "n/a"})
                continue
            med = statistics.median(st["samples"])
            rss = max(st["rss"]) if None not in st["rss"] else None
            if len(st["samples"]) < args.reps:
                name += " (%d run%s: over --budget)" % (len(st["samples"]), "" if len(st["samples"]) == 1 else "s")
            rows.append({
                "workload": w, "variant": name, "kind": st["v"]["kind"],
                "median": med, "min": min(st["samples"]), "max": max(st["samples"]), "rss": rss,
                "samples": st["samples"],
                "ratio": "×%.2f" % (med / fmed) if fmed else "–",
                "rss_ratio": ("×%.1f" if rss >= frss else "×%.2f") % (rss / frss) if frss and rss else "–",
            })

    print(table(rows))
    print()
    print("%d reps after %d warm-up, round-robin; median wall time, min–max, max peak RSS; "
          "×floor = median / floor's median. flow: %s" % (args.reps, args.warmup, t["flow"] or "not built"))

    # The journal's cost: each round's `flow run` against the same round's `--no-journal`
    # (round-robin puts them side by side in time, so drift cancels out of the pairs).
    overhead = []
    for w in sorted({r["workload"] for r in rows}):
        by = {r["variant"]: r for r in rows if r["workload"] == w and "samples" in r}
        on, off = by.get("flow run"), by.get("flow run --no-journal")
        if on and off and len(on["samples"]) == len(off["samples"]):
            pairs = [a / b - 1 for a, b in zip(on["samples"], off["samples"])]
            overhead.append("- %s: journal overhead %+.1f%% (median of %d paired rounds; medians %s vs %s)" % (
                w, 100 * statistics.median(pairs), len(pairs), fmt_time(on["median"]), fmt_time(off["median"])))
    if overhead:
        print()
        print("\n".join(overhead))

    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)

    status = 0
    if args.target:
        secs, mb = args.target
        print()
        for r in rows:
            if not r["variant"].startswith("flow"):
                continue
            if "result" in r:
                print("- %s %s: %s -> target not checked" % (r["workload"], r["variant"], r["result"]))
                status = 1
                continue
            ok_t = r["median"] <= secs
            ok_m = r["rss"] is not None and r["rss"] * 1024 / 1e6 <= mb
            print("- %s %s: %s (target ≤ %g s: %s), %s (target ≤ %g MB: %s)" % (
                r["workload"], cell(r["variant"]), fmt_time(r["median"]), secs, "PASS" if ok_t else "FAIL",
                fmt_rss(r["rss"]), mb, "PASS" if ok_m else "FAIL"))
            if not (ok_t and ok_m):
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
