#!/usr/bin/env python3
"""CPU time, not wall time, of 1,000 sequential steps: flow, make and the supervision floor.

    python3 bench/cpu.py [--rounds K] [--pin]

The steps are bench/out/seq1000's (written by gen.py): one flow step, or one line of
make's recipe, a step. Runs, round-robin (order reversed every other round, one untimed warm-up round):
flow with and without its journal, GNU make, and bench/bin/supervise in the patterns
"-" (clone, exec, wait4: what make does), "p" (+ two pipes a step), "f" (+ a pidfd in
epoll) and "pfg" (+ both and a process group: flow's kernel work, none of its code).
Each row is the median wall time and the median user and system CPU time of the whole
process tree (getrusage of the children), with the difference to make per step.

--pin runs everything on CPU 0 (children inherit it). On one core the wall time is the
CPU time of everything involved, so a gap to make that stays when pinned is work done,
not waiting for a wake-up on the other core.

Needs `bash bench/setup.sh` first (it writes bench/out/ and builds bench/bin/).
flow is $FLOW if set, else .build-release/release/flow.
"""
import argparse, os, resource, shutil, statistics, subprocess, sys, tempfile, time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--pin", action="store_true", help="run everything on CPU 0")
    args = parser.parse_args()
    flow = os.environ.get("FLOW", os.path.join(ROOT, ".build-release", "release", "flow"))
    supervise = os.path.join(BENCH, "bin", "supervise")
    for path, hint in ((flow, "set FLOW or run bash bench/setup.sh"), (supervise, "run bash bench/setup.sh")):
        if not os.access(path, os.X_OK):
            sys.exit("cpu.py: %s is missing (%s)" % (path, hint))
    if args.pin:
        os.sched_setaffinity(0, {0})

    source = os.path.join(BENCH, "out", "seq1000")
    if not os.path.isfile(os.path.join(source, "Makefile")):
        sys.exit("cpu.py: %s is missing (run bash bench/setup.sh)" % source)
    work = tempfile.mkdtemp(prefix="flow-cpu-")
    for name in ("flow.yml", "Makefile"):
        shutil.copy(os.path.join(source, name), work)
    n = 1000
    variants = [
        ("flow", [flow, "run", "flow.yml"]),
        ("flow --no-journal", [flow, "run", "flow.yml", "--no-journal"]),
        ("make", ["make", "-s", "-f", "Makefile"]),
    ] + [("supervise " + m, [supervise, m, str(n), "/bin/true"]) for m in ("-", "p", "f", "pfg")]

    samples = {name: [] for name, _ in variants}
    for r in range(args.rounds + 1):
        for name, argv in (variants if r % 2 else variants[::-1]):
            shutil.rmtree(os.path.join(work, ".flow", "output"), ignore_errors=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(argv, cwd=work, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                sys.exit("cpu.py: %s exited %d" % (" ".join(argv), done.returncode))
            if r:
                samples[name].append((wall, after.ru_utime - before.ru_utime,
                                      after.ru_stime - before.ru_stime))
    shutil.rmtree(work, ignore_errors=True)

    def median(name, i):
        return 1000 * statistics.median(s[i] for s in samples[name])

    make_cpu = median("make", 1) + median("make", 2)
    print("%d sequential /bin/true, %d rounds%s; medians in ms" % (n, args.rounds, ", pinned to CPU 0" if args.pin else ""))
    print()
    print("| variant | wall | user | sys | user+sys | CPU vs make, µs a step |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, _ in variants:
        cpu = median(name, 1) + median(name, 2)
        print("| %s | %.1f | %.1f | %.1f | %.1f | %+.1f |" % (
            name, median(name, 0), median(name, 1), median(name, 2), cpu, 1000 * (cpu - make_cpu) / n))


if __name__ == "__main__":
    main()
