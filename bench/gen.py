#!/usr/bin/env python3
"""Benchmark workload generator.

Every workload is described ONCE, as a tree of steps (Seq/Conc groups of
Shell/Print/Delay leaves) plus the list of variants that run it. From that
one tree this script writes, into bench/out/<workload>/:

    flow.yml       the flow workflow
    Makefile       GNU make   (sequence = one recipe / prerequisite chain, concurrency = -j)
    Taskfile.yml   go-task    (sequence = cmds, concurrency = deps)
    justfile       just       (sequence = ordered deps, concurrency = [parallel])
    run.sh         bash       (sequence = lines, concurrency = & ... wait)

run.py imports this module: WORKLOADS holds the trees and the variants, and
generate() writes the files. Standard library only (no PyYAML needed).

    python3 bench/gen.py                 # all workloads
    python3 bench/gen.py static100k      # some
    python3 bench/gen.py --list
"""

import hashlib
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")


# --------------------------------------------------------------------------
# The step tree
# --------------------------------------------------------------------------

class Shell:
    def __init__(self, cmd, name=None, bare=False):
        self.cmd, self.name, self.bare = cmd, name, bare


class Print:
    def __init__(self, text, name=None):
        self.text, self.name = text, name


class Delay:
    def __init__(self, seconds, name=None):
        self.seconds, self.name = seconds, name


class Group:
    def __init__(self, kind, children, name=None):
        assert kind in ("sequential", "concurrent")
        self.kind, self.children, self.name = kind, children, name


def Seq(children, name=None):
    return Group("sequential", children, name)


def Conc(children, name=None):
    return Group("concurrent", children, name)


def count_steps(nodes):
    n = 0
    stack = list(nodes)
    while stack:
        node = stack.pop()
        n += 1
        if isinstance(node, Group):
            stack.extend(node.children)
    return n


def leaf_command(node):
    """The shell command a peer runs for a leaf step."""
    if isinstance(node, Shell):
        return node.cmd
    if isinstance(node, Print):
        return "echo " + sh_quote(node.text)
    if isinstance(node, Delay):
        return "sleep %g" % node.seconds
    raise TypeError(node)


SAFE_SH = re.compile(r"^[A-Za-z0-9_.,:/=+@%-]+$")


def sh_quote(s):
    if SAFE_SH.match(s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


# --------------------------------------------------------------------------
# Emitters
# --------------------------------------------------------------------------

PLAIN_YAML = re.compile(r"^[A-Za-z0-9_./][A-Za-z0-9_./ =+-]*$")


def yaml_str(s):
    if PLAIN_YAML.match(s) and not s.endswith(" ") and s not in ("true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"):
        return s
    return json.dumps(s)  # a JSON string is a valid YAML double-quoted scalar


def emit_flow(name, steps):
    out = ["version: 1", "name: " + yaml_str(name), "steps:"]

    def emit(node, ind):
        pad = " " * ind
        if isinstance(node, Group):
            out.append("%s- %s:" % (pad, node.kind))
            for child in node.children:
                emit(child, ind + 4)
        elif isinstance(node, Shell) and node.bare and not node.name:
            out.append("%s- %s" % (pad, yaml_str(node.cmd)))
        elif isinstance(node, Shell):
            out.append("%s- shell: %s" % (pad, yaml_str(node.cmd)))
        elif isinstance(node, Print):
            out.append("%s- print: %s" % (pad, json.dumps(node.text)))
        elif isinstance(node, Delay):
            out.append("%s- delay: %s" % (pad, fmt_duration(node.seconds)))
        if node.name:
            out.append("%s  name: %s" % (pad, node.name))

    for node in steps:
        emit(node, 2)
    return "\n".join(out) + "\n"


def fmt_duration(seconds):
    if seconds == int(seconds):
        return "%ds" % seconds
    return "%dms" % round(seconds * 1000)


def leaf_batches(children):
    """Split a sequential group's children into runs of consecutive leaves
    (emitted as one multi-line recipe) and single groups."""
    batch = []
    for child in children:
        if isinstance(child, Group):
            if batch:
                yield batch
                batch = []
            yield child
        else:
            batch.append(child)
    if batch:
        yield batch


def emit_make(steps):
    """Every target is phony. compile(node, after) returns a target that is
    up to date once `node` has finished and that only starts after `after`."""
    rules = []
    counter = [0]

    def new():
        counter[0] += 1
        return "t%d" % counter[0]

    def rule(target, prereqs, recipe):
        rules.append("%s:%s\n%s" % (target, "".join(" " + p for p in prereqs if p),
                                     "".join("\t%s\n" % line for line in recipe)))

    def compile(node, after):
        if not isinstance(node, Group):
            t = new()
            rule(t, [after], [leaf_command(node)])
            return t
        if node.kind == "concurrent":
            t = new()
            rule(t, [compile(c, after) for c in node.children] or [after], [])
            return t
        prev = after
        for part in leaf_batches(node.children):
            if isinstance(part, list):
                t = new()
                rule(t, [prev], [leaf_command(c) for c in part])
                prev = t
            else:
                prev = compile(part, prev)
        return prev

    top = compile(Seq(steps), None)
    head = "all: %s\n" % top
    targets = ["all"] + ["t%d" % i for i in range(1, counter[0] + 1)]
    phony = ".PHONY: " + " ".join(targets) + "\n"
    return head + "\n" + "\n".join(rules) + "\n" + phony


def emit_task(steps, output=None):
    """Sequential groups are tasks whose cmds run in order (leaves inline,
    groups as `task:` calls); concurrent groups are tasks with deps."""
    tasks = []
    counter = [0]

    def new():
        counter[0] += 1
        return "t%d" % counter[0]

    def compile(node):
        t = new()
        if not isinstance(node, Group):
            tasks.append("  %s:\n    cmds:\n      - %s\n" % (t, json.dumps(leaf_command(node))))
        elif node.kind == "concurrent":
            deps = [compile(c) for c in node.children]
            tasks.append("  %s:\n    deps: [%s]\n" % (t, ", ".join(deps)))
        else:
            cmds = []
            for c in node.children:
                if isinstance(c, Group):
                    cmds.append("      - task: %s\n" % compile(c))
                else:
                    cmds.append("      - %s\n" % json.dumps(leaf_command(c)))
            tasks.append("  %s:\n    cmds:\n%s" % (t, "".join(cmds) or "      []\n"))
        return t

    top = compile(Seq(steps))
    head = "version: '3'\n"
    if output:
        head += "output: %s\n" % output
    head += "tasks:\n  default:\n    cmds:\n      - task: %s\n" % top
    return head + "".join(tasks)


def emit_just(steps):
    """Sequential groups are recipes whose dependencies run in order (runs of
    leaves become one multi-line recipe); concurrent groups are [parallel]."""
    recipes = []
    counter = [0]

    def new():
        counter[0] += 1
        return "t%d" % counter[0]

    def recipe(name, deps, body, parallel=False):
        recipes.append("%s%s:%s\n%s" % ("[parallel]\n" if parallel else "", name,
                                        "".join(" " + d for d in deps),
                                        "".join("    %s\n" % line for line in body)))

    def compile(node):
        if not isinstance(node, Group):
            t = new()
            recipe(t, [], [leaf_command(node)])
            return t
        if node.kind == "concurrent":
            t = new()
            recipe(t, [compile(c) for c in node.children], [], parallel=True)
            return t
        deps = []
        for part in leaf_batches(node.children):
            if isinstance(part, list):
                t = new()
                recipe(t, [], [leaf_command(c) for c in part])
                deps.append(t)
            else:
                deps.append(compile(part))
        t = new()
        recipe(t, deps, [])
        return t

    top = compile(Seq(steps))
    return "set quiet\n\ndefault: %s\n\n" % top + "\n".join(recipes)


def emit_bash(steps, prefix=False):
    """Sequence = lines; concurrency = `cmd &` / `( ... ) &` then `wait`.
    prefix=True pipes every named leaf through sed to prefix its lines."""
    out = ["#!/bin/bash", "set -e"]

    def leaf(node):
        cmd = leaf_command(node)
        if prefix and node.name:
            cmd = "{ %s; } 2>&1 | sed 's/^/[%s] /'" % (cmd, node.name)
        return cmd

    def emit(node, ind):
        pad = "  " * ind
        if not isinstance(node, Group):
            out.append(pad + leaf(node))
        elif node.kind == "sequential":
            for c in node.children:
                emit(c, ind)
        else:
            for c in node.children:
                if isinstance(c, Group):
                    out.append(pad + "(")
                    emit(c, ind + 1)
                    out.append(pad + ") &")
                else:
                    out.append(pad + leaf(c) + " &")
            out.append(pad + "wait")

    for node in steps:
        emit(node, 0)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# Trees
# --------------------------------------------------------------------------

SHELL_CMDS = [
    "/bin/true",
    "make -C src/{w} all",
    "test -d build/{w}",
    "echo compiling {w}",
    "cp build/{w}.o dist/",
    "./scripts/check.sh {w} --strict",
    "grep -q {w} manifest.txt",
    "tar -cf dist/{w}.tar build/{w}",
]
WORDS = ["core", "net", "ui", "db", "auth", "cache", "log", "api", "cli", "docs",
         "test", "lint", "pack", "sign", "deploy", "fetch", "index", "report"]


def realistic(total, seed=1):
    """`total` steps (groups and leaves together) in nested sequential and
    concurrent groups, mostly shell steps with print and delay steps, about
    one in six named, a few shell steps written as bare strings."""
    rng = random.Random(seed)
    used = set()

    def maybe_name(p=0.17):
        if rng.random() >= p:
            return None
        while True:
            n = "%s_%s%d" % (rng.choice(WORDS), rng.choice(WORDS), rng.randrange(100000))
            if n not in used:
                used.add(n)
                return n

    def leaf():
        r = rng.random()
        if r < 0.62:
            cmd = rng.choice(SHELL_CMDS).format(w=rng.choice(WORDS))
            bare = rng.random() < 0.15
            return Shell(cmd, maybe_name(), bare=bare)
        if r < 0.88:
            return Print("%s: %s step %d done" % (rng.choice(WORDS), rng.choice(WORDS), rng.randrange(1000)), maybe_name())
        return Delay(rng.choice([1, 1, 2, 5]), maybe_name())

    max_group = {1: 200, 2: 40, 3: 12}

    def fill(budget, depth):
        nodes = []
        while budget > 0:
            if depth <= 3 and budget >= 4 and rng.random() < 0.12:
                size = min(budget, rng.randint(4, max_group[depth]))
                kind = "concurrent" if rng.random() < 0.45 else "sequential"
                nodes.append(Group(kind, fill(size - 1, depth + 1), maybe_name(0.5)))
                budget -= size
            else:
                nodes.append(leaf())
                budget -= 1
        return nodes

    stage_size = 1000 if total >= 20000 else 100
    stages = []
    remaining = total
    i = 0
    while remaining > 0:
        i += 1
        size = min(remaining, stage_size)
        kind = "sequential" if i % 3 else "concurrent"
        stages.append(Group(kind, fill(size - 1, 1), "stage_%04d" % i))
        remaining -= size
    assert count_steps(stages) == total
    return stages


OUT_LINE = "flow-bench-output-line " + "x" * 76   # 99 bytes + newline
OUT_STEPS = 4
OUT_BYTES = 200_000_000


def output_tree():
    per = OUT_BYTES // OUT_STEPS
    return [Conc([Shell("yes %s | head -c %d" % (OUT_LINE, per), name="out%d" % (i + 1))
                  for i in range(OUT_STEPS)])]


def cancel_tree():
    """For the cancellation workload (not measured yet): steps that ignore or
    trap TERM, and one that leaves a background grandchild."""
    return [Conc([
        Shell("sleep 300", name="plain"),
        Shell("trap '' TERM; sleep 300", name="ignores_term"),
        Shell("trap 'sleep 2; exit 0' TERM; sleep 300 & wait", name="traps_term"),
        Shell("sleep 300 & sleep 300", name="grandchild"),
    ])]


# --------------------------------------------------------------------------
# Workloads and their variants
# --------------------------------------------------------------------------
#
# A variant is a dict:
#   name     label in the table
#   kind     "floor" (the ratio's base: first floor of the workload), "flow", "peer"
#   argv     list of words; {flow} {task} {just} {bin} {out} are filled in by
#            run.py ({out} = this workload's output folder, which is also the cwd)
#   needs    flow capabilities that run.py probes before running a flow variant
#   shell    True: argv is one /bin/sh -c string (used by floors that pipe)

def V(name, kind, argv, needs=(), shell=False):
    return {"name": name, "kind": kind, "argv": argv, "needs": list(needs), "shell": shell}


def run_peers(make_j=None, make_extra=()):
    make = ["make", "-s", "-f", "Makefile"] + (["-j%s" % make_j] if make_j else []) + list(make_extra)
    return [
        V("make", "peer", make),
        V("task", "peer", ["{task}", "-s", "-t", "Taskfile.yml"]),
        V("just", "peer", ["{just}", "-f", "justfile"]),
        V("bash", "peer", ["bash", "run.sh"]),
    ]


def flow_runs(journal_variant=True):
    vs = [V("flow run", "flow", ["{flow}", "run", "flow.yml"], needs=["run"])]
    if journal_variant:
        vs.append(V("flow run --no-journal", "flow", ["{flow}", "run", "flow.yml", "--no-journal"],
                    needs=["run", "no-journal"]))
    return vs


def static_variants():
    return [
        V("libyaml node tree (C)", "floor", ["{bin}/yaml_tree", "flow.yml"]),
        V("flow validate", "flow", ["{flow}", "validate", "flow.yml"], needs=["validate"]),
        V("flow plan", "flow", ["{flow}", "plan", "flow.yml"], needs=["plan"]),
        V("flow run --dry-run", "flow", ["{flow}", "run", "flow.yml", "--dry-run"], needs=["dry-run"]),
        V("make -n", "peer", ["make", "-n", "-f", "Makefile"]),
        V("task --dry", "peer", ["{task}", "--dry", "-t", "Taskfile.yml"]),
        V("just --dry-run", "peer", ["{just}", "--dry-run", "-f", "justfile"]),
        V("bash -n", "peer", ["bash", "-n", "run.sh"]),
    ]


def _output_floor_cmd():
    per = OUT_BYTES // OUT_STEPS
    return "{bin}/spawn concurrent %d --sh 'yes %s | head -c %d' | cat" % (OUT_STEPS, OUT_LINE, per)


WORKLOADS = {
    "startup": {
        "about": "one step `true`: process start-up, load and teardown",
        "tree": lambda: [Shell("true")],
        "variants": [
            V("posix_spawn (C)", "floor", ["{bin}/spawn", "sequential", "1", "true"]),
            V("flow validate", "flow", ["{flow}", "validate", "flow.yml"], needs=["validate"]),
        ] + flow_runs(journal_variant=True) + run_peers(),
    },
    "seq1000": {
        "about": "1,000 sequential `/bin/true`: per-step overhead",
        "tree": lambda: [Shell("/bin/true") for _ in range(1000)],
        "variants": [
            V("posix_spawn (C)", "floor", ["{bin}/spawn", "sequential", "1000", "/bin/true"]),
            V("posix_spawn via sh -c (C)", "floor", ["{bin}/spawn", "sequential", "1000", "--sh", "/bin/true"]),
        ] + flow_runs() + run_peers(),
    },
    "conc1000": {
        "about": "1,000 concurrent `sleep 1`: fan-out and reaping (ideal 1 s)",
        "tree": lambda: [Conc([Shell("sleep 1") for _ in range(1000)])],
        "variants": [
            V("posix_spawn (C)", "floor", ["{bin}/spawn", "concurrent", "1000", "sleep", "1"]),
        ] + flow_runs() + run_peers(make_j="1000"),
    },
    "stages": {
        "about": "10 sequential stages of 10 concurrent `sleep 0.1`: barrier latency (ideal 1 s)",
        "tree": lambda: [Conc([Shell("sleep 0.1") for _ in range(10)], name="stage%d" % (i + 1))
                         for i in range(10)],
        "variants": [
            V("posix_spawn (C)", "floor", ["{bin}/spawn", "sequential", "10",
                                            "{bin}/spawn", "concurrent", "10", "sleep", "0.1"]),
        ] + flow_runs() + run_peers(make_j="10"),
    },
    "delay10k": {
        "about": "10,000 concurrent `delay: 1s` (flow only): timer scaling (ideal 1 s)",
        "tree": lambda: [Conc([Delay(1) for _ in range(10000)])],
        "peers": False,
        "variants": [V("sleep 1", "floor", ["sleep", "1"])] + flow_runs(),
    },
    "static10k": {
        "about": "10,000-step workflow, nothing run: load + validate + plan vs dry-runs",
        "tree": lambda: realistic(10_000, seed=10),
        "variants": static_variants(),
    },
    "static100k": {
        "about": "100,000-step workflow, nothing run: load + validate + plan vs dry-runs",
        "tree": lambda: realistic(100_000, seed=100),
        "variants": static_variants(),
    },
    "output200": {
        "about": "4 concurrent steps writing 200 MB of 100-byte lines, drained by cat: raw, whole-line prefixed, grouped",
        "tree": output_tree,
        "stdout": "pipe",
        "variants": [
            V("producers | cat", "floor", [_output_floor_cmd()], shell=True),
            V("flow run --output raw", "flow", ["{flow}", "run", "flow.yml", "--output", "raw"],
              needs=["run", "output-raw"]),
            V("flow run --output prefixed", "flow", ["{flow}", "run", "flow.yml", "--output", "prefixed"],
              needs=["run", "output-prefixed"]),
            # The journal stores all 200 MB in SQLite; what make -Oline is compared with:
            V("flow run --no-journal --output prefixed", "flow",
              ["{flow}", "run", "flow.yml", "--no-journal", "--output", "prefixed"],
              needs=["run", "no-journal", "output-prefixed"]),
            # Each step's 50 MB as one block at its end: held in a temporary file past
            # 1 MiB (the RSS column shows it is not held in memory); make -Otarget likewise.
            V("flow run --no-journal --output grouped", "flow",
              ["{flow}", "run", "flow.yml", "--no-journal", "--output", "grouped"],
              needs=["run", "no-journal", "output-grouped"]),
            V("make -j4", "peer", ["make", "-s", "-f", "Makefile", "-j4"]),
            V("make -j4 -Oline", "peer", ["make", "-s", "-f", "Makefile", "-j4", "-Oline"]),
            V("make -j4 -Otarget", "peer", ["make", "-s", "-f", "Makefile", "-j4", "-Otarget"]),
            V("task", "peer", ["{task}", "-s", "-t", "Taskfile.yml"]),
            V("task --output prefixed", "peer", ["{task}", "-s", "-t", "Taskfile.yml", "--output", "prefixed"]),
            V("just", "peer", ["{just}", "-f", "justfile"]),
            V("bash", "peer", ["bash", "run.sh"]),
            V("bash | sed prefix", "peer", ["bash", "run-prefixed.sh"]),
        ],
    },
    "cancel": {
        "about": "SIGINT/SIGTERM to the runner (steps that trap/ignore TERM, a background grandchild): "
                 "time to exit, exit status, leftover processes -- NOT MEASURED YET",
        "tree": cancel_tree,
        "todo": True,
        "variants": [],
    },
}


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------

def _source_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def out_dir(workload):
    return os.path.join(OUT, workload)


def is_current(workload):
    try:
        with open(os.path.join(out_dir(workload), ".stamp")) as f:
            return f.read().strip() == _source_hash()
    except OSError:
        return False


def _write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def generate(workload):
    spec = WORKLOADS[workload]
    steps = spec["tree"]()
    d = out_dir(workload)
    os.makedirs(d, exist_ok=True)
    _write(os.path.join(d, "flow.yml"), emit_flow(workload, steps))
    if spec.get("peers", True):
        _write(os.path.join(d, "Makefile"), emit_make(steps))
        _write(os.path.join(d, "Taskfile.yml"), emit_task(steps))
        _write(os.path.join(d, "justfile"), emit_just(steps))
        _write(os.path.join(d, "run.sh"), emit_bash(steps))
        if workload == "output200":
            _write(os.path.join(d, "run-prefixed.sh"), emit_bash(steps, prefix=True))
    _write(os.path.join(d, ".stamp"), _source_hash() + "\n")
    return d, count_steps(steps)


def ensure(workload):
    if not is_current(workload):
        generate(workload)
    return out_dir(workload)


def main(argv):
    if "--list" in argv:
        for name, spec in WORKLOADS.items():
            print("%-11s %s" % (name, spec["about"]))
        return 0
    names = [a for a in argv if not a.startswith("-")] or list(WORKLOADS)
    for name in names:
        if name not in WORKLOADS:
            print("gen.py: unknown workload %r (see --list)" % name, file=sys.stderr)
            return 2
    for name in names:
        d, n = generate(name)
        print("%-11s %7d steps -> %s" % (name, n, os.path.relpath(d)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
