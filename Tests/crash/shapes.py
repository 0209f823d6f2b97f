"""Workflow shapes for the crash audit. Every shell step writes marker lines to $MARK:

    start <FLOW_STEP> <FLOW_RUN_ID>
    done  <FLOW_STEP> <FLOW_RUN_ID> got=<value of the outputs it consumed>
    undo  <FLOW_STEP of the undo step, KIND@PATH.uN> <FLOW_RUN_ID> v=<output of the step reversed>
and prints `out <FLOW_STEP> <FLOW_RUN_ID>` to stdout (checked against `flow logs`).
`expect_got[name]` is what a step must have been given; `expect_v[path]` what its undo sees.
"""


def shell(name, body="", got="-", out=None, undo=True, sleep="0.02", extra=""):
    lines = [
        f'echo "start $FLOW_STEP $FLOW_RUN_ID" >> "$MARK"',
        f'echo "out $FLOW_STEP $FLOW_RUN_ID"',
    ]
    if body:
        lines.append(body)
    if sleep:
        lines.append(f"sleep {sleep}")
    if out is not None:
        lines.append(f'echo "v={out}" >> "$FLOW_OUTPUT"')
    lines.append(f'echo "done $FLOW_STEP $FLOW_RUN_ID got={got}" >> "$MARK"')
    text = f"  - name: {name}\n    shell: |\n" + "".join(f"      {l}\n" for l in lines)
    if extra:
        text += extra
    if undo:
        ref = f"${{{{ steps.{name}.outputs.v }}}}"
        text += (f"    undo:\n      shell: |\n"
                 f'        echo "undo $FLOW_STEP $FLOW_RUN_ID v={ref}" >> "$MARK"\n'
                 f"        sleep 0.02\n")
    return text


def indent(text, n):
    pad = " " * n
    return "".join(pad + l + "\n" if l else "\n" for l in text.splitlines())


def seq():
    steps = shell("s1", out="a1", got="-")
    prev = "a1"
    for i in range(2, 8):
        steps += shell(f"s{i}", out=f"a{i}", got=f"${{{{ steps.s{i-1}.outputs.v }}}}")
        prev = f"a{i}"
    fin = ("finally:\n  - name: f1\n    shell: |\n"
           '      echo "fin $FLOW_STEP $FLOW_RUN_ID" >> "$MARK"\n      sleep 0.02\n')
    wf = "name: seq\nsteps:\n" + steps + fin
    expect_got = {f"s{i}": f"a{i-1}" for i in range(2, 8)}
    expect_got["s1"] = "-"
    return wf, {"expect_got": expect_got, "v": {f"s{i}": f"a{i}" for i in range(1, 8)}, "succeeds": True}


def conc():
    steps = shell("s0", out="zero")
    inner = ""
    for i in range(1, 7):
        inner += shell(f"c{i}", out=f"k{i}", got="${{ steps.s0.outputs.v }}", sleep=f"0.0{i % 4 + 1}")
    steps += "  - name: grp\n    max_parallel: 2\n    concurrent:\n" + indent(inner, 4)
    steps += shell("after", out="end", got="${{ steps.c3.outputs.v }}")
    fin = ("finally:\n  - name: f1\n    shell: |\n"
           '      echo "fin $FLOW_STEP $FLOW_RUN_ID" >> "$MARK"\n')
    wf = "name: conc\nsteps:\n" + steps + fin
    got = {f"c{i}": "zero" for i in range(1, 7)}
    got.update({"s0": "-", "after": "k3"})
    v = {f"c{i}": f"k{i}" for i in range(1, 7)}
    v.update({"s0": "zero", "after": "end"})
    return wf, {"expect_got": got, "v": v, "succeeds": True}


def retry():
    # r1 fails its first two attempts in each run (a counter per run id).
    body = ('n=$(cat "$ROOT/cnt-$FLOW_RUN_ID" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$ROOT/cnt-$FLOW_RUN_ID"\n'
            '      if [ $n -lt 3 ]; then echo "fail $FLOW_STEP $FLOW_RUN_ID" >> "$MARK"; exit 7; fi')
    steps = shell("s1", out="one")
    steps += shell("r1", body=body, out="rv", got="${{ steps.s1.outputs.v }}",
                   extra="    retry: { limit: 3, delay: 60ms }\n")
    steps += shell("s2", out="two", got="${{ steps.r1.outputs.v }}")
    wf = "name: retry\nsteps:\n" + steps
    return wf, {"expect_got": {"s1": "-", "r1": "one", "s2": "rv"}, "v": {"s1": "one", "r1": "rv", "s2": "two"},
                "succeeds": True, "retries": True}


def rollback():
    steps = ""
    for i in range(1, 5):
        steps += shell(f"s{i}", out=f"b{i}", got="-" if i == 1 else f"${{{{ steps.s{i-1}.outputs.v }}}}")
    steps += shell("bad", body='exit 3', undo=True, got="${{ steps.s4.outputs.v }}")
    fin = ("finally:\n")
    for i in range(1, 4):
        fin += (f"  - name: f{i}\n    shell: |\n"
                '      echo "fin $FLOW_STEP $FLOW_RUN_ID" >> "$MARK"\n      sleep 0.03\n')
    wf = "name: rollback\nsteps:\n" + steps + fin
    got = {"s1": "-", "s2": "b1", "s3": "b2", "s4": "b3", "bad": "b4"}
    return wf, {"expect_got": got, "v": {f"s{i}": f"b{i}" for i in range(1, 5)}, "succeeds": False}


def action():
    act = ("actions:\n  dep:\n    params:\n      env: { required: true }\n    steps:\n"
           + indent(shell("d1", out="${{ params.env }}-1", got="${{ params.env }}"), 4)
           + indent(shell("d2", out="${{ params.env }}-2", got="${{ steps.d1.outputs.v }}"), 4))
    steps = shell("s0", out="zero")
    steps += "  - name: ua\n    use: dep\n    with: { env: stage }\n"
    steps += "  - name: ub\n    use: dep\n    with: { env: prod }\n"
    steps += shell("s9", out="nine", got="${{ steps.s0.outputs.v }}")
    wf = "name: action\n" + act + "steps:\n" + steps
    return wf, {"expect_got": {"s0": "-", "s9": "zero"}, "v": {"s0": "zero", "s9": "nine"}, "succeeds": True,
                "action": True}


def rgroup():
    # A retried sequential group whose last child fails in the group's first attempt of each run.
    body = ('n=$(cat "$ROOT/gcnt-$FLOW_RUN_ID" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$ROOT/gcnt-$FLOW_RUN_ID"\n'
            '      if [ $n -lt 2 ]; then echo "fail $FLOW_STEP $FLOW_RUN_ID" >> "$MARK"; exit 5; fi')
    inner = shell("g1", out="g1v") + shell("g2", out="g2v", got="${{ steps.g1.outputs.v }}")
    inner += shell("g3", body=body, out="g3v", got="${{ steps.g2.outputs.v }}")
    steps = shell("s0", out="zero")
    steps += "  - name: grp\n    retry: { limit: 2, delay: 50ms }\n    sequential:\n" + indent(inner, 4)
    steps += shell("s9", out="nine", got="${{ steps.g3.outputs.v }}")
    wf = "name: rgroup\nsteps:\n" + steps
    return wf, {"expect_got": {"s0": "-", "g1": "-", "g2": "g1v", "g3": "g2v", "s9": "g3v"},
                "v": {"s0": "zero", "g1": "g1v", "g2": "g2v", "g3": "g3v", "s9": "nine"}, "succeeds": True,
                "retries": True, "rgroup": True}


def longout():
    steps = shell("s1", out="one")
    steps += shell("big", body='seq 1 40000 | sed "s/^/line /"', out="bigv", got="${{ steps.s1.outputs.v }}", sleep="")
    steps += shell("big2", body='seq 1 20000 | sed "s/^/row /" >&2', out="big2v", got="${{ steps.big.outputs.v }}",
                   sleep="")
    steps += shell("s2", out="two", got="${{ steps.big2.outputs.v }}")
    wf = "name: longout\nsteps:\n" + steps
    return wf, {"expect_got": {"s1": "-", "big": "one", "big2": "bigv", "s2": "big2v"},
                "v": {"s1": "one", "big": "bigv", "big2": "big2v", "s2": "two"}, "succeeds": True}


def grandkids():
    # Steps that leave background grandchildren in their group (and one in a subshell).
    steps = shell("s1", out="one", body='sleep 30 &\n      (sleep 31 &)')
    steps += shell("s2", out="two", got="${{ steps.s1.outputs.v }}", body='sh -c "sleep 32" &', sleep="0.3")
    steps += "  - name: par\n    concurrent:\n" + indent(
        shell("p1", out="p1v", body="sleep 33 &", sleep="0.2") + shell("p2", out="p2v", sleep="0.25"), 4)
    wf = "name: grandkids\nsteps:\n" + steps
    return wf, {"expect_got": {"s1": "-", "s2": "one", "p1": "-", "p2": "-"},
                "v": {"s1": "one", "s2": "two", "p1": "p1v", "p2": "p2v"}, "succeeds": True}


def concfail():
    wf, meta = conc()
    wf = wf.replace("name: conc", "name: concfail").replace("finally:", shell("bad", body="exit 4", got="${{ steps.after.outputs.v }}").rstrip("\n") + "\nfinally:", 1)
    meta["expect_got"]["bad"] = "end"
    meta["succeeds"] = False
    return wf, meta


SHAPES = {"concfail": concfail, "seq": seq, "conc": conc, "retry": retry, "rollback": rollback, "action": action, "rgroup": rgroup,
          "longout": longout, "grandkids": grandkids}
