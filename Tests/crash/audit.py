#!/usr/bin/env python3
"""Randomized, seeded SIGKILL audit of flow's journal through the built binary.

    python3 Tests/crash/audit.py --trials 200 --seed 1 [--shape seq] [--jobs 2]

FLOW_BIN picks the binary (default .build/debug/flow), AUDIT_DIR where trials and log.md go
(default /tmp/flow-crash-audit; a failed trial's directory is kept there), EARLY=0.006 kills
every `flow run` within its first 6 ms.

Each trial: a workflow shape, `flow run` SIGKILLed (its pid, or its process group) at a
seeded point, then resumes and undos (some killed too), each followed by checks of
runs/show/logs against the marker files the steps wrote. Failures go to log.md.
"""
import argparse, json, os, random, re, shutil, signal, sqlite3, subprocess, sys, threading, time, traceback
import shapes

HERE = os.path.dirname(os.path.abspath(__file__))
FLOW = os.environ.get("FLOW_BIN", os.path.join(HERE, "..", "..", ".build", "debug", "flow"))
OUT = os.environ.get("AUDIT_DIR", "/tmp/flow-crash-audit")
BASE = os.path.join(OUT, "trials")


class Trial:
    def __init__(self, seed, shape):
        self.seed, self.shape = seed, shape
        self.rng = random.Random(seed)
        self.root = f"{BASE}/t{seed}"
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)
        self.wf, self.meta = shapes.SHAPES[shape]()
        if self.meta.get("action"):
            for p, env in (("2", "stage"), ("3", "prod")):
                self.meta["expect_got"][f"d1@{p}.1"] = env
                self.meta["expect_got"][f"d2@{p}.2"] = f"{env}-1"
                self.meta["v"][f"{p}.1"] = f"{env}-1"
                self.meta["v"][f"{p}.2"] = f"{env}-2"
        open(f"{self.root}/wf.yaml", "w").write(self.wf)
        self.mark = f"{self.root}/m.log"
        open(self.mark, "w").close()
        self.state = f"{self.root}/state"
        self.problems = []
        self.notes = []
        self.known_ids = set()
        self.inv = 0
        self.token = f"CRASHTOK{seed}x{os.getpid()}"

    # ---- helpers
    def env(self, token):
        e = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": self.root, "NO_COLOR": "1", "LANG": "C.UTF-8",
             "FLOW_STATE_DIR": self.state, "MARK": self.mark, "ROOT": self.root}
        if token:
            e["CRASH_TOKEN"] = self.token
        return e

    def flow(self, args, timeout=60):
        p = subprocess.run([FLOW] + args, cwd=self.root, env=self.env(False), capture_output=True, text=True,
                           timeout=timeout, errors="replace")
        return p.returncode, p.stdout, p.stderr

    def problem(self, what):
        self.problems.append(f"[inv {self.inv}] {what}")

    def markers(self):
        out = []
        for line in open(self.mark, errors="replace").read().splitlines():
            parts = line.split(" ")
            if len(parts) >= 3:
                out.append(parts)
        return out

    def leftovers(self, within=5.0):
        deadline = time.time() + within
        needle = self.token.encode()
        while True:
            found = []
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    if needle in open(f"/proc/{pid}/environ", "rb").read():
                        st = open(f"/proc/{pid}/stat").read()
                        state = st[st.rindex(")") + 2]
                        if state != "Z":
                            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
                            comm = open(f"/proc/{pid}/comm").read().strip()
                            found.append(f"{pid} {comm} {state}: {cmd[:80]}")
                except (FileNotFoundError, ProcessLookupError, PermissionError):
                    pass
            if not found or time.time() > deadline:
                return found
            time.sleep(0.02)

    def kill_leftovers(self):
        needle = self.token.encode()
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if needle in open(f"/proc/{pid}/environ", "rb").read():
                        os.kill(int(pid), signal.SIGKILL)
                except (FileNotFoundError, ProcessLookupError, PermissionError):
                    pass

    # ---- one invocation, maybe killed
    def invoke(self, args, kill):
        """kill: None, or (mode, how, param). Returns (exit code or 'killed', stdout, stderr)."""
        self.inv += 1
        base_lines = len(open(self.mark).read().splitlines())
        out = open(f"{self.root}/out{self.inv}", "w+")
        err = open(f"{self.root}/err{self.inv}", "w+")
        reader_stop = threading.Event()
        reader_problems = []

        def reader():
            # (f) a second flow reads the journal while this one is live and killed.
            while not reader_stop.is_set():
                for cmd in (["runs", "--json"], ["show", "last", "--json"]):
                    rc, o, e = self.flow(cmd)
                    if rc != 0 and "no journal" not in e and "no runs" not in e and "no run" not in e:
                        reader_problems.append(f"concurrent flow {' '.join(cmd)}: exit {rc}: {e.strip()[:300]}")
        t = threading.Thread(target=reader)
        p = subprocess.Popen([FLOW] + args + ["--output", "prefixed"], cwd=self.root, env=self.env(True),
                             stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        if self.rng.random() < 0.3:
            t.start()
            self.notes.append(f"inv {self.inv}: concurrent reader")
        killed = False
        if kill:
            mode, how, param = kill
            if how == "time":
                end = time.time() + param
                while time.time() < end and p.poll() is None:
                    time.sleep(0.0005)
            elif how in ("line", "undo", "fin", "bytes"):
                deadline = time.time() + 30
                while p.poll() is None and time.time() < deadline:
                    if how == "bytes":
                        if os.path.getsize(out.name) >= param:
                            break
                    else:
                        lines = open(self.mark).read().splitlines()[base_lines:]
                        if how == "line" and len(lines) >= param:
                            break
                        if how in ("undo", "fin") and any(l.startswith(how + " ") for l in lines):
                            break
                    time.sleep(0.0003)
                jitter = self.rng.random() * 0.004
                end = time.time() + jitter
                while time.time() < end:
                    pass
            if p.poll() is None:
                try:
                    if mode == "group":
                        os.killpg(p.pid, signal.SIGKILL)
                    else:
                        os.kill(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
            self.problem(f"flow {' '.join(args)} did not end in 120s")
        if rc == -signal.SIGKILL:
            killed = True
        left = self.leftovers()
        if left:
            self.problem(f"processes left after flow {'was killed' if killed else 'ended'} ({kill}): {left}")
            self.kill_leftovers()
        reader_stop.set()
        if t.is_alive() or t.ident:
            t.join()
        if killed and self.rng.random() < 0.35:
            # Kill twice: the next flow, which folds the dead run's lock file in, is killed too.
            for _ in range(self.rng.randint(1, 2)):
                cmd = self.rng.choice([["runs"], ["show", "last"], ["logs", "last"], ["runs", "--json"]])
                self.notes.append(f"inv {self.inv}: killed flow {' '.join(cmd)} too")
                q = subprocess.Popen([FLOW] + cmd, cwd=self.root, env=self.env(False), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
                end = time.time() + self.rng.random() * 0.02
                while time.time() < end and q.poll() is None:
                    time.sleep(0.0003)
                if q.poll() is None:
                    q.kill()
                q.wait()
        for rp in reader_problems[:3]:
            self.problem(rp)
        out.seek(0)
        err.seek(0)
        return ("killed" if killed else rc), out.read(), err.read()

    # ---- checks
    def steps_json(self, rid):
        rc, o, e = self.flow(["show", rid, "--json"])
        if rc != 0:
            self.problem(f"flow show {rid} --json: exit {rc}: {e.strip()[:300]}")
            return None
        return json.loads(o)

    def label(self, step, steps):
        if step["name"]:
            same = [s for s in steps if s["name"] == step["name"]]
            return step["name"] if len(same) == 1 else f"{step['name']}@{step['path']}"
        return f"{step['kind']}@{step['path']}"

    def integrity(self):
        db = f"{self.state}/journal.sqlite"
        if not os.path.exists(db):
            return
        try:
            c = sqlite3.connect(db, timeout=10)
            r = c.execute("PRAGMA integrity_check").fetchall()
            c.close()
            if r != [("ok",)]:
                self.problem(f"integrity_check: {r}")
        except Exception as ex:
            self.problem(f"integrity_check failed: {ex}")

    def transitions(self, rid):
        c = sqlite3.connect(f"{self.state}/journal.sqlite", timeout=10)
        r = c.execute("SELECT seq, path, from_state, to_state, reason FROM transitions WHERE run_id=? ORDER BY seq",
                      (rid,)).fetchall()
        c.close()
        return r

    def check_run(self, result, kind, parent=None):
        """After an invocation: find its run and check it. Returns (run id or None, show json)."""
        rc, o, e = self.flow(["runs", "--json"])
        if rc != 0:
            if "no journal" in e and result == "killed":
                return None, None
            self.problem(f"flow runs --json: exit {rc}: {e.strip()[:300]}")
            return None, None
        runs = json.loads(o)
        new = [r for r in runs if r["id"] not in self.known_ids]
        self.known_ids.update(r["id"] for r in runs)
        if len(new) > 1:
            self.problem(f"{len(new)} new runs for one invocation: {[r['id'] for r in new]}")
        if not new:
            if result != "killed" and not (kind == "undo" and result in (0, 2)):
                self.problem(f"{kind} ended {result} but is not in the journal")
            # A killed-before-recorded invocation: nothing of it may be half there.
            return None, None
        run = new[0]
        rid = run["id"]
        if run["kind"] != kind:
            self.problem(f"run {rid} kind {run['kind']}, expected {kind}")
        if parent and run["parent_id"] != parent:
            self.problem(f"run {rid} parent {run['parent_id']}, expected {parent}")
        if run["state"] == "running":
            self.problem(f"run {rid} reads running after its flow is dead")
        if result == "killed":
            if run["state"] not in ("interrupted", "succeeded", "failed"):
                self.problem(f"killed run {rid} reads {run['state']}")
        else:
            want = {0: "succeeded", 1: "failed"}.get(result)
            if want and run["state"] != want:
                self.problem(f"run {rid} exited {result} but reads {run['state']}")
        sj = self.steps_json(rid)
        if sj is None:
            return rid, None
        if sj["state"] != run["state"]:
            self.problem(f"show says {sj['state']}, runs says {run['state']}")
        if sj["counts"] != run["counts"]:
            self.problem(f"show counts {sj['counts']} != runs counts {run['counts']}")
        for cmd in (["show", rid], ["logs", rid], ["show", "last"], ["logs", "last"]):
            rc, o2, e2 = self.flow(cmd)
            if rc != 0:
                self.problem(f"flow {' '.join(cmd)}: exit {rc}: {e2.strip()[:300]}")
        steps = sj["steps"]
        live = [f"{s['path']}={s['state']}" for s in steps if s["state"] in ("running", "retrying", "undoing")]
        if live:
            self.problem(f"dead run {rid} ({sj['state']}) has steps in live states: {live}")
        shown_text = self.flow(["show", rid])[1]
        if run["state"] == "interrupted" and re.search(r"\brunning\b", shown_text.split("\n", 3)[-1]):
            self.notes.append(f"show {rid} text mentions running: {shown_text[:200]}")
        self.check_markers(rid, steps, result, kind)
        if kind != "undo" and result != "killed":
            # The run's own rollback: every success, latest completion first.
            did = [m[1].split("@", 1)[1].rsplit(".u", 1)[0] for m in self.markers() if m[2] == rid and m[0] == "undo"]
            want = self.expected_undo(rid, sj, [], own_rollback=True)[0] if did else []
            if did != want:
                self.problem(f"the rollback of {rid} reversed {did}, expected {want}")
        self.check_logs(rid, steps, result)
        self.integrity()
        return rid, sj

    def check_markers(self, rid, steps, result, kind):
        marks = [m for m in self.markers() if m[2] == rid]
        # A finally step writes one `fin` line: it started and finished.
        marks = marks + [["start"] + m[1:] for m in marks if m[0] == "fin"] + [["done"] + m[1:] for m in marks if m[0] == "fin"]
        by_label = {}
        for m in marks:
            by_label.setdefault(m[1], []).append(m)
        rgroup = self.meta.get("rgroup")
        for s in steps:
            if s["kind"] != "shell" or ".u" in s["path"]:
                continue
            if kind == "undo":
                continue  # an undo run records the steps it reverses as they were, without running them
            lab = self.label(s, steps)
            ms = by_label.get(lab, [])
            starts = sum(1 for m in ms if m[0] == "start")
            dones = sum(1 for m in ms if m[0] == "done")
            st = s["state"]
            reused = s.get("reused_from")
            if st in ("succeeded", "undone", "undo_failed", "undo_interrupted", "undoing"):
                if reused:
                    if starts and not (rgroup and s["path"].startswith("2.")):
                        self.problem(f"{lab} reads reused from {reused} but ran in {rid} ({starts} starts)")
                elif dones == 0:
                    self.problem(f"{lab} reads {st} in {rid} but never finished there (markers: {ms})")
            if st in ("failed", "timed_out") and starts == 0:
                self.problem(f"{lab} reads {st} in {rid} but never started there")
            # A step killed between its spawn and its first line reads interrupted, unstarted.
            if not reused and s["attempts"] > starts + (st == "interrupted") and st != "pending":
                self.problem(f"{lab} has {s['attempts']} attempts in {rid} but started {starts} times")
            in_rgroup = rgroup and s["path"].startswith("2.")  # one instance per group attempt
            if result != "killed" and not reused and not in_rgroup and starts != s["attempts"] and st not in ("pending", "skipped"):
                self.problem(f"{lab}: {s['attempts']} attempts recorded, {starts} started, in finished {rid}")
        want_got = self.meta["expect_got"]
        for m in marks:
            if m[0] == "done":
                got = m[3][4:] if len(m) > 3 else None
                if m[1] in want_got and got != want_got[m[1]]:
                    self.problem(f"{m[1]} in {rid} got {got!r}, expected {want_got[m[1]]!r}")
            if m[0] == "undo":
                path = m[1].split("@", 1)[1].rsplit(".u", 1)[0]
                name = next((s["name"] for s in steps if s["path"] == path), None)
                want = self.meta["v"].get(path, self.meta["v"].get(name))
                v = m[3][2:] if len(m) > 3 else None
                if want is not None and v != want:
                    self.problem(f"undo of {name or path} in {rid} saw v={v!r}, expected {want!r}")

    def check_logs(self, rid, steps, result):
        rc, o, e = self.flow(["logs", rid])
        if rc != 0:
            return
        outs = [l for l in o.splitlines() if re.search(r"\bout \S+ " + re.escape(rid) + r"\b", l)]
        starts = {(m[1]) for m in self.markers() if m[2] == rid and m[0] == "start"}
        for l in outs:
            lab = re.search(r"\bout (\S+) ", l).group(1)
            if lab not in starts:
                self.problem(f"flow logs {rid} shows {l!r}, which no step printed")
        if result != "killed":
            logged = {re.search(r"\bout (\S+) ", l).group(1) for l in outs}
            missing = starts - logged
            if missing:
                self.problem(f"flow logs {rid} lacks the output of {sorted(missing)}")
        if self.shape == "longout":
            nums = [int(x) for x in re.findall(r"\bline (\d+)\b", o)]
            if nums and nums != list(range(1, len(nums) + 1)) and nums != list(range(1, 40001)) * (len(nums) // 40000):
                self.problem(f"flow logs {rid}: stdout lines of big not 1..n in order ({len(nums)} lines)")

    def leaf_state(self, sj):
        """path -> (state, reused) of leaf shell steps, undo steps excluded."""
        return {s["path"]: (s["state"], s["reused_from"]) for s in sj["steps"]
                if s["kind"] == "shell" and ".u" not in s["path"]}

    def ran_paths(self, rid, sj):
        labs = {self.label(s, sj["steps"]): s["path"] for s in sj["steps"]}
        return [labs.get(m[1], m[1]) for m in self.markers() if m[2] == rid and m[0] in ("start", "fin")]

    def check_resume(self, parent_sj, rid, sj, result):
        before = self.leaf_state(parent_sj)
        ran = set(self.ran_paths(rid, sj))
        succeeded_before = {p for p, (st, _) in before.items() if st == "succeeded"}
        again = {p for p in ran & succeeded_before if not p.startswith("f")}  # every finally runs again
        if self.meta.get("rgroup"):
            again = {p for p in again if not p.startswith("2.")}
        if again:
            self.problem(f"resume {rid} ran again steps that had succeeded: {sorted(again)}")
        if result == 0 and self.meta["succeeds"]:
            fin = {p for p in before if p.startswith("f")}
            want = {p for p in before if p not in succeeded_before} | fin
            if self.meta.get("rgroup") and ran >= want:
                return
            if ran != want:
                self.problem(f"resume {rid} ran {sorted(ran)}, expected {sorted(want)} "
                             f"(parent states {sorted(before.items())})")

    def succeeded_time(self, rid, path):
        c = sqlite3.connect(f"{self.state}/journal.sqlite", timeout=10)
        r = c.execute("SELECT time, reason FROM transitions WHERE run_id=? AND path=? AND to_state='succeeded' "
                      "ORDER BY seq DESC LIMIT 1", (rid, path)).fetchone()
        c.close()
        if r and r[1] and r[1].startswith("reused from run "):
            return self.succeeded_time(r[1].split()[-1], path)
        return r[0] if r else 0

    def expected_undo(self, rid, sj, earlier_undos, own_rollback=False):
        """Paths to reverse, in order, for `flow undo rid`: succeeded instances of steps with an undo,
        latest completion first (when they really completed: a resume's reused steps in the run
        that ran them), less those the run's rollback or earlier undos reversed."""
        paths = {s["path"] for s in sj["steps"]}
        with_undo = {p[:-3] for p in paths if p.endswith(".u1")}
        inst = []
        for seq, path, fr, to, reason in self.transitions(rid):
            if path in with_undo and to == "succeeded":
                when = self.succeeded_time(reason.split()[-1], path) if reason and reason.startswith("reused") else None
                inst.append((path, when))
            if path in with_undo and to == "undone" and not own_rollback:
                for i in range(len(inst) - 1, -1, -1):
                    if inst[i][0] == path:
                        del inst[i]
                        break
        c = sqlite3.connect(f"{self.state}/journal.sqlite", timeout=10)
        times = c.execute("SELECT seq, path, time FROM transitions WHERE run_id=? AND to_state='succeeded' "
                          "AND (reason IS NULL OR reason NOT LIKE 'reused from run %') ORDER BY seq",
                          (rid,)).fetchall()
        c.close()
        own = {}
        for seq, path, tm in times:
            own.setdefault(path, []).append(tm)
        timed = []
        for path, when in inst:
            if when is None:
                when = own[path].pop(0)
            timed.append((when, path))
        # A resume's steps it never reached come from the run it resumed.
        if sj["kind"] == "resume" and not own_rollback:
            touched = {t[1] for t in self.transitions(rid)}
            parent = self.steps_json(sj["parent_id"]) if sj.get("parent_id") else None
            if parent:
                carried = [p for p in self.expected_undo(parent["id"], parent, [])[0] if p not in touched]
                if carried:
                    self.notes.append(f"undo of resume {rid} carries on {carried} from {parent['id']}")
                timed += [(self.succeeded_time(parent["id"], p), p) for p in carried]
        order = [p for _, p in sorted(timed, reverse=True)]
        for u in earlier_undos:
            for seq, path, fr, to, reason in self.transitions(u):
                if to == "undone" and path in order:
                    order.remove(path)
        return order, False

    def check_undo(self, target, target_sj, earlier, rid, sj, result, rc_err):
        want, loose = self.expected_undo(target, target_sj, earlier)
        if rid is None:
            if result == "killed":
                return
            if not want and result in (0, 2):
                return  # nothing to roll back (0) or already rolled back (2): not recorded
            self.problem(f"undo of {target} exit {result}, not recorded, expected to reverse {want}: {rc_err[:300]}")
            return
        labs = {}
        for s in target_sj["steps"]:
            labs[f"{s['kind']}@{s['path']}"] = s["path"]
        did = [m[1].split("@", 1)[1].rsplit(".u", 1)[0] for m in self.markers() if m[2] == rid and m[0] == "undo"]
        if result == "killed":
            if did != want[:len(did)] and not (loose and sorted(did) <= sorted(want)):
                # One undo step may have written its marker and been killed before recording.
                self.problem(f"killed undo {rid} of {target} reversed {did}, expected a prefix of {want}")
            return
        if (did != want) and not (loose and sorted(did) == sorted(want)):
            self.problem(f"undo {rid} of {target} reversed {did}, expected {want}")


def pick_kill(t, est, allow_none=False):
    if os.environ.get("EARLY"):
        return ("pid", "time", t.rng.random() * float(os.environ["EARLY"]))
    r = t.rng.random()
    mode = "group" if t.rng.random() < 0.4 else "pid"
    if allow_none and r < 0.35:
        return None
    r = t.rng.random()
    if r < 0.15:
        return (mode, "time", t.rng.random() * 0.015)
    if r < 0.45:
        return (mode, "time", t.rng.random() * est * 1.1)
    if r < 0.80:
        return (mode, "line", t.rng.randint(1, 14))
    if r < 0.90 and t.shape == "rollback":
        return (mode, t.rng.choice(["undo", "fin"]), 0)
    if t.shape == "longout":
        return (mode, "bytes", t.rng.randint(1, 900_000))
    return (mode, "line", t.rng.randint(1, 6))


EST = {"concfail": 0.4, "seq": 0.35, "conc": 0.3, "retry": 0.35, "rollback": 0.5, "action": 0.25, "rgroup": 0.35, "longout": 0.4,
       "grandkids": 0.7}


def run_trial(seed, shape):
    t = Trial(seed, shape)
    est = EST[shape]
    log = []
    try:
        k = pick_kill(t, est)
        res, o, e = t.invoke(["run", "wf.yaml"], k)
        log.append(f"run {k} -> {res}")
        rid, sj = t.check_run(res, "run")
        if rid is None:
            # Killed before it was recorded: the next flow must work on what it left.
            res, o, e = t.invoke(["run", "wf.yaml"], None)
            log.append(f"run again -> {res}")
            if res not in (0, 1) or "journal" in e:
                t.problem(f"run after an unrecorded kill: exit {res}: {e[-400:]}")
            rid, sj = t.check_run(res, "run")
            return t, log
        current, current_sj = rid, sj
        undos = []
        scenario = "undo" if t.rng.random() < 0.35 else "resume"
        if scenario == "resume":
            for attempt in range(4):
                if current_sj["state"] == "succeeded" or (not t.meta["succeeds"] and attempt >= 2):
                    break
                k = pick_kill(t, est, allow_none=(attempt > 0)) if attempt < 2 else None
                res, o, e = t.invoke(["resume", current], k)
                log.append(f"resume {current} {k} -> {res}")
                r2, sj2 = t.check_run(res, "resume", current)
                if r2 is None:
                    if res != "killed":
                        t.problem(f"resume exit {res}: {e[-300:]}")
                        break
                    continue
                if sj2:
                    t.check_resume(current_sj, r2, sj2, res)
                current, current_sj = r2, sj2
            if current_sj["state"] != "succeeded" and t.meta["succeeds"]:
                t.problem(f"not succeeded after resumes: {current} {current_sj['state']}")
        target, target_sj = current, current_sj
        for attempt in range(3):
            k = pick_kill(t, est, allow_none=True) if attempt < 2 else None
            res, o, e = t.invoke(["undo", target], k)
            log.append(f"undo {target} {k} -> {res}")
            ru, sju = t.check_run(res, "undo", target)
            t.check_undo(target, target_sj, undos, ru, sju, res, e)
            if ru:
                undos.append(ru)
            if res != "killed":
                break
    except Exception:
        t.problem("harness exception: " + traceback.format_exc()[-800:])
    finally:
        t.kill_leftovers()
    return t, log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shape")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    names = sorted(shapes.SHAPES)
    seeds = list(range(a.seed, a.seed + a.trials))
    lock = threading.Lock()
    results = []

    def worker():
        while True:
            with lock:
                if not seeds:
                    return
                s = seeds.pop(0)
            shape = a.shape or names[s % len(names)]
            t, log = run_trial(s, shape)
            with lock:
                results.append((s, shape, t.problems, log, t.notes))
                status = "FAIL" if t.problems else "ok"
                print(f"seed {s} {shape}: {status} :: {' | '.join(log)}", flush=True)
                for p in t.problems:
                    print("    " + p, flush=True)
                if t.problems:
                    for n in t.notes:
                        print("    note: " + n, flush=True)
            if not t.problems and not a.keep:
                shutil.rmtree(t.root, ignore_errors=True)

    ths = [threading.Thread(target=worker) for _ in range(a.jobs)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    bad = [r for r in results if r[2]]
    print(f"\n{len(results)} trials, {len(bad)} with problems")
    with open(os.path.join(OUT, "log.md"), "a") as f:
        f.write(f"\n## {time.strftime('%H:%M:%S')} trials {a.seed}..{a.seed + a.trials - 1} shape={a.shape or 'all'}: "
                f"{len(bad)}/{len(results)} with problems\n")
        for s, shape, probs, log, notes in sorted(bad):
            f.write(f"- seed {s} ({shape}): {' | '.join(log)}\n")
            for p in probs:
                f.write(f"  - {p}\n")


if __name__ == "__main__":
    main()
