#!/usr/bin/env python3
"""Cancellation benchmark: N concurrent steps that obey, trap or ignore SIGTERM (and one
with a background grandchild); send SIGINT or SIGTERM to flow's pid, or SIGINT to its
whole process group (Ctrl-C), or SIGQUIT (Ctrl-\\: quit now, no grace) or SIGKILL to flow's
pid, once every child said `ready`.
Reports the time from the signal to flow's exit, the exit status (a SIGKILLed flow shows
-9), and the processes of the run left over 0.2 s later (after SIGKILL, flow's guard
kills them).

    python3 bench/cancel.py [--steps 100] [--reps 3]

Uses .build-release/release/flow (or $FLOW) and flow-test-child beside it (or $CHILD).
"""
import argparse, os, signal, statistics, subprocess, sys, tempfile, time, uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOW = os.environ.get("FLOW", os.path.join(ROOT, ".build-release/release/flow"))
CHILD = os.environ.get("CHILD", os.path.join(ROOT, ".build/debug/flow-test-child"))


def workflow(kind, steps, marker):
    lines = ["name: cancel", "steps:", "  - concurrent:"]
    for i in range(steps):
        if kind == "obey":
            cmd = f"{CHILD} ready --sleep 60"
        elif kind == "trap":
            cmd = f"{CHILD} --trap TERM --trap INT ready --sleep 60"
        elif kind == "ignore":
            cmd = f"{CHILD} --ignore TERM --ignore INT ready --sleep 60"
        else:
            cmd = f"{CHILD} --spawn-grandchild ready --sleep 60"
        lines.append(f"      - shell: exec {cmd} --print {marker}")
    return "\n".join(lines) + "\n"


def leftovers(marker):
    count = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker.encode() in f.read():
                    with open(f"/proc/{pid}/stat") as s:
                        if s.read().split(") ")[-1].split()[0] != "Z":
                            count += 1
        except OSError:
            pass
    return count


def trial(kind, how, steps, grace):
    marker = "FLOWBENCH" + uuid.uuid4().hex
    d = tempfile.mkdtemp()
    path = os.path.join(d, "w.yaml")
    with open(path, "w") as f:
        f.write(workflow(kind, steps, marker))
    env = dict(os.environ, NO_COLOR="1", BENCH_MARKER=marker)
    p = subprocess.Popen([FLOW, "run", path, "--output", "prefixed", "--no-journal", "--grace", grace],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    ready = 0
    while ready < steps:
        line = p.stdout.readline()
        if not line:
            break
        if line.rstrip().endswith(b"| ready"):
            ready += 1
    start = time.monotonic()
    if how == "group-int":
        os.killpg(p.pid, signal.SIGINT)
    elif how == "kill":
        p.send_signal(signal.SIGKILL)
    elif how == "quit":
        p.send_signal(signal.SIGQUIT)
    else:
        p.send_signal(signal.SIGINT if how == "int" else signal.SIGTERM)
    p.stdout.read()
    status = p.wait()
    elapsed = time.monotonic() - start
    time.sleep(0.2)
    return elapsed, status, leftovers(marker)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--grace", default="1s")
    a = ap.parse_args()
    print(f"| steps | children | signal | exit (median) | status | left over |")
    print("|---|---|---|---:|---|---:|")
    for kind in ["obey", "trap", "ignore", "grandchild"]:
        for how in ["int", "term", "group-int", "quit", "kill"]:
            results = [trial(kind, how, a.steps, a.grace) for _ in range(a.reps)]
            times = [r[0] for r in results]
            statuses = sorted({r[1] for r in results})
            left = max(r[2] for r in results)
            print(f"| {a.steps} | {kind} | {how} | {statistics.median(times) * 1000:.0f} ms | "
                  f"{','.join(str(s) for s in statuses)} | {left} |", flush=True)
    print(f"\ngrace {a.grace}: `ignore` children are SIGKILLed after it; the others exit on the signal."
          " SIGQUIT kills every step at once (131, no grace)."
          " After SIGKILL flow's own exit is immediate (-9) and its guard kills the steps' groups.")


if __name__ == "__main__":
    main()
