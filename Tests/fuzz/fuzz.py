#!/usr/bin/env python3
"""A mutation fuzzer for flow's static commands (validate, plan, graph, run --dry-run).

Seeds are the valid workflows in workflows/*.yaml and the YAML fixtures under Tests/.
Each input is a seed with one to four mutations applied (byte flips, truncation at a
structural point, subtrees spliced in from another seed, lines duplicated or deleted,
indentation changed, YAML features inserted, line ends and encodings changed, expression
edge cases). Every input is run through the built binary, and anything a compiler must
never do is flagged: an exit status outside 0/1/2, death by a signal, a Swift runtime trap
message, a timeout, output that is not UTF-8, JSON that does not parse, a diagnostic whose
line or column lies outside the file or whose excerpt is not the file's line, and
`validate` and `plan` disagreeing on whether a file is valid.

A failing input is minimised (delta debugging on lines, then bytes, keeping the same
failure) and saved under the crash directory with a `.txt` saying what failed.

Standard library only. See Tests/fuzz/README.md.
"""

import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What each command may exit with on any file (2 is an invalid workflow for all but
# validate, whose invalid is 1).
COMMANDS = {
    "validate": (["validate", "{f}"], {0, 1}),
    "validate-json": (["validate", "--format", "json", "{f}"], {0, 1}),
    "validate-github": (["validate", "--format", "github", "{f}"], {0, 1}),
    "plan": (["plan", "{f}"], {0, 2}),
    "graph-dot": (["graph", "--format", "dot", "{f}"], {0, 2}),
    "dry-run": (["run", "{f}", "--dry-run", "--no-journal"], {0, 2}),
}

TRAPS = ["Fatal error", "Stack dump", "Illegal instruction", "Segmentation fault",
         "Current stack trace", "Program crashed", "Assertion failed", "Precondition failed",
         "AddressSanitizer", "UndefinedBehaviorSanitizer"]

# ---------------------------------------------------------------------------------------
# Seeds


def load_seeds(limit_bytes=64 * 1024):
    # Tests/ includes the regression corpus (Fixtures/fuzz-corpus): hostile seeds too.
    paths = sorted(ROOT.glob("workflows/*.yaml")) + sorted(ROOT.glob("Tests/**/*.yaml"))
    seeds = []
    for path in paths:
        data = path.read_bytes()
        if 0 < len(data) <= limit_bytes:
            seeds.append((str(path.relative_to(ROOT)), data))
    return seeds


# ---------------------------------------------------------------------------------------
# Mutations: each takes (rng, data, seeds) and returns new bytes.

STRUCTURAL = set(b":-[]{},'\"\n|>&*!#?%")

KEYS = [b"version", b"name", b"description", b"env", b"vars", b"defaults", b"steps", b"actions",
        b"finally", b"undo", b"shell", b"print", b"delay", b"use", b"with", b"params", b"if",
        b"timeout", b"retry", b"limit", b"delay", b"backoff", b"exit_codes", b"tags", b"concurrent",
        b"sequential", b"max_parallel", b"continue_on_error", b"dir", b"outputs", b"required",
        b"default", b"allowed", b"<<", b"on", b"runs-on", b"jobs", b"tasks", b"cmds", b"hosts"]

VALUES = [b"", b"~", b"null", b"true", b"no", b"0", b"-0", b"0x10", b"0o17", b"1_000", b".inf", b"-.inf",
          b".nan", b"1e400", b"99999999999999999999999999999999", b"-9223372036854775808",
          b"9223372036854775807", b"0s", b"-1s", b"1e400d", b"999999999999999d", b"5m30s", b"1.5h",
          b"P1D", b"[]", b"{}", b"[a, b]", b"{a: 1}", b"\"\"", b"''", b"\"\\u0000\"", b"\"\\x1b[2J\"",
          b"\"\\uD800\"", b"\"\\U0010FFFF\"", b"\"\\N\\L\\P\\_\"", b"'it''s'", b"|\n  block\n",
          b">-\n  folded\n", b"|+\n\n", b"|9\n  x\n", b"*undefined", b"&a x", b"!!binary aGVsbG8=",
          b"!foo bar", b"!!int 1", b"!!str 1", b"!<tag:yaml.org,2002:str> x", b"!!map {}", b"!!seq []",
          b"@at", b"`tick`", b"%pct", b"- - -", b"? ? ?", b"\"unterminated", b"'unterminated", b"[unclosed",
          b"{unclosed", b"\xf0\x9f\x98\x80", b"\xe2\x80\xa8", b"\xc2\x85", b"\xef\xbf\xbf", b"\xed\xa0\x80"]

EXPRESSIONS = [
    b"${{", b"${{ vars.x", b"${{ }}", b"${{ ${{ vars.a }} }}", b"${{ '${{' }}", b"${{ }} }}",
    b"${{ 99999999999999999999999999999999999 }}", b"${{ 1e999 }}", b"${{ -1e-999 }}", b"${{ 0x }}",
    b"${{ 1.7976931348623157e309 }}", b"${{ -9223372036854775808 }}", b"${{ 9223372036854775808 }}",
    b"${{ " + b"(" * 300 + b"1" + b")" * 300 + b" }}", b"${{ " + b"(" * 5000 + b" }}",
    b"${{ " + b"!" * 5000 + b"true }}", b"${{ " + b"-" * 5000 + b"1 }}",
    b"${{ " + b"a." * 3000 + b"b }}", b"${{ " + b"[0]" * 3000 + b" }}", b"${{ format(" * 200 + b" }}",
    b"${{ steps. }}", b"${{ steps.x.outputs. }}", b"${{ steps['a'] }}", b"${{ vars[ }}",
    b"${{ 'unclosed }}", b"${{ \"dq\" }}", b"${{ a == }}", b"${{ == }}", b"${{ && || }}",
    b"${{ contains( }}", b"${{ toJSON(vars) }}", b"${{ fromJSON('[') }}", b"${{ success() }}",
    b"${{ steps.a.status == 'succeeded' }}", b"${{ \x00 }}", b"${{ \xe2\x80\xa8 }}", b"${{ \t }}",
    b"${{ vars.\xf0\x9f\x98\x80 }}", b"${{ env.PATH }}", b"${{ params.x }}", b"${{ run.status }}",
    b"$${{ vars.a }}", b"${{{ vars.a }}}", b"{{ .Var }}", b"{{ vars.a }}", b"$(echo)", b"${ var }",
    b"${{ 1 < 2 }}", b"${{ !steps }}", b"${{ null }}", b"${{ true ? 1 : 2 }}", b"${{ '' + '' }}",
]

FEATURES = [
    b"&anchor ", b"*anchor", b"<<: *anchor\n", b"<<: [*a, *b]\n", b"<<: {}\n", b"<<: 5\n", b"!!binary ",
    b"!foo ", b"!!str ", b"!<!> ", b"!e!x ", b"[", b"]", b"{", b"}", b", ", b"---\n", b"...\n",
    b"%YAML 1.2\n---\n", b"%YAML 1.1\n", b"%TAG !e! tag:example.com,2000:\n---\n", b"%FOO bar\n",
    b"? complex\n: value\n", b"? [a, b]\n: c\n", b"? {a: 1}\n", b"- ", b": ", b"# comment\n",
    b"\x00", b"\x01", b"\x1b", b"\x7f", b"\r", b"\r\n", b"\t", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff",
    b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80",
    b"\xcc\x81", b"\xef\xbf\xbd", b"\xe3\x81\x82", b"|", b">", b"|-", b"'", b"\"", b"\\", b"@", b"`",
]


def lines_of(data):
    return data.splitlines(keepends=True) or [b""]


def m_byte_flip(rng, data, seeds):
    if not data:
        return bytes([rng.randrange(256)])
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def m_byte_set(rng, data, seeds):
    b = bytearray(data)
    i = rng.randrange(len(b) + 1)
    op = rng.randrange(3)
    value = rng.choice([0, 9, 10, 13, 0x1B, 0x7F, 0x80, 0xC2, 0xE2, 0xED, 0xFF, rng.randrange(256)])
    if op == 0 or i == len(b):
        b.insert(i, value)
    elif op == 1:
        b[i] = value
    else:
        del b[i]
    return bytes(b)


def m_truncate(rng, data, seeds):
    points = [i for i, c in enumerate(data) if c in STRUCTURAL]
    if not points:
        return data[: rng.randrange(len(data) + 1)]
    i = rng.choice(points)
    return data[: i + rng.choice([0, 1])]


def subtree(lines, start):
    """Line `start` and the lines after it indented deeper (its YAML subtree, roughly)."""
    def indent(line):
        return len(line) - len(line.lstrip(b" -"))
    base = indent(lines[start])
    end = start + 1
    while end < len(lines) and (lines[end].strip() == b"" or indent(lines[end]) > base):
        end += 1
    return lines[start:end], base


def m_splice(rng, data, seeds):
    other = lines_of(rng.choice(seeds)[1])
    block, base = subtree(other, rng.randrange(len(other)))
    lines = lines_of(data)
    at = rng.randrange(len(lines) + 1)
    target = lines[at - 1] if at > 0 else b""
    new_indent = len(target) - len(target.lstrip(b" ")) + rng.choice([0, 0, 2, 4, -2])
    shift = max(new_indent, 0) - base
    moved = []
    for line in block:
        if shift >= 0:
            moved.append(b" " * shift + line)
        else:
            moved.append(line[min(-shift, len(line) - len(line.lstrip(b" "))):])
    return b"".join(lines[:at] + moved + lines[at:])


def m_lines(rng, data, seeds):
    lines = lines_of(data)
    i = rng.randrange(len(lines))
    op = rng.randrange(4)
    if op == 0:
        lines.insert(i, lines[i])
    elif op == 1 and len(lines) > 1:
        del lines[i]
    elif op == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines[i:i + 1] = [lines[i]] * rng.randint(2, 200)
    return b"".join(lines)


def m_indent(rng, data, seeds):
    lines = lines_of(data)
    i = rng.randrange(len(lines))
    line = lines[i]
    stripped = line.lstrip(b" ")
    indent = len(line) - len(stripped)
    op = rng.randrange(4)
    if op == 0:
        lines[i] = b" " * (indent + rng.randint(1, 4)) + stripped
    elif op == 1:
        lines[i] = b" " * max(0, indent - rng.randint(1, 4)) + stripped
    elif op == 2:
        lines[i] = b"\t" + line
    else:
        lines[i] = b" " * (indent + rng.randint(1, 3)) + b"\t" + stripped
    return b"".join(lines)


def insert_at_random_point(rng, data, piece):
    # Favour positions after a structural character, where a feature means something.
    points = [i + 1 for i, c in enumerate(data) if c in b": -\n[{,"]
    i = rng.choice(points) if points and rng.random() < 0.8 else rng.randrange(len(data) + 1)
    return data[:i] + piece + data[i:]


def m_feature(rng, data, seeds):
    return insert_at_random_point(rng, data, rng.choice(FEATURES))


def m_anchor_alias(rng, data, seeds):
    lines = lines_of(data)
    values = [i for i, line in enumerate(lines) if b": " in line]
    if not values:
        return m_feature(rng, data, seeds)
    name = rng.choice([b"a", b"x", b"base", b"\xc3\xa9", b"a" * 300])
    i = rng.choice(values)
    key, _, value = lines[i].partition(b": ")
    lines[i] = key + b": &" + name + b" " + value
    j = rng.randrange(len(lines) + 1)
    use = rng.choice([b"*" + name, b"<<: *" + name, b"[*" + name + b", *" + name + b"]"])
    target = lines[j - 1] if j > 0 else b""
    indent = len(target) - len(target.lstrip(b" -"))
    if use.startswith(b"<<"):
        piece = b" " * indent + use + b"\n"
    else:
        piece = b" " * indent + rng.choice([b"- ", b"k: "]) + use + b"\n"
    lines.insert(j, piece)
    return b"".join(lines)


def m_key(rng, data, seeds):
    lines = lines_of(data)
    keyed = [i for i, line in enumerate(lines) if re.match(rb"^\s*(- )?[\w<-]+:", line)]
    if not keyed:
        return m_feature(rng, data, seeds)
    i = rng.choice(keyed)
    lines[i] = re.sub(rb"[\w<-]+:", rng.choice(KEYS) + b":", lines[i], count=1)
    return b"".join(lines)


def m_value(rng, data, seeds):
    lines = lines_of(data)
    valued = [i for i, line in enumerate(lines) if b": " in line]
    if not valued:
        return m_feature(rng, data, seeds)
    i = rng.choice(valued)
    key, _, _ = lines[i].partition(b": ")
    lines[i] = key + b": " + rng.choice(VALUES) + b"\n"
    return b"".join(lines)


def m_expression(rng, data, seeds):
    lines = lines_of(data)
    valued = [i for i, line in enumerate(lines) if b": " in line]
    expr = rng.choice(EXPRESSIONS)
    if not valued:
        return insert_at_random_point(rng, data, expr)
    i = rng.choice(valued)
    key, _, value = lines[i].partition(b": ")
    value = value.rstrip(b"\r\n")
    if rng.random() < 0.5 and b"${{" in value:
        value = value.replace(b"${{", expr + b" ${{", 1)
    elif rng.random() < 0.5:
        value = b"\"" + expr.replace(b"\\", b"\\\\").replace(b"\"", b"\\\"") + b"\""
    else:
        value = value + b" " + expr
    if rng.random() < 0.3:
        key = re.sub(rb"[\w-]+$", rng.choice([b"if", b"print", b"shell", b"dir", b"timeout"]), key)
    lines[i] = key + b": " + value + b"\n"
    return b"".join(lines)


def m_long_scalar(rng, data, seeds):
    size = rng.choice([161, 1000, 70_000, 300_000])
    piece = rng.choice([b"x", b"\xe3\x81\x82", b"a ", b"${{ 1 }}", b"\\u0041", b"\x1b"]) * (size // 2)
    return insert_at_random_point(rng, data, piece)


def m_line_ends(rng, data, seeds):
    op = rng.randrange(4)
    if op == 0:
        return data.replace(b"\n", b"\r\n")
    if op == 1:
        return data.replace(b"\n", b"\r")
    if op == 2:
        return data.replace(b"\n", rng.choice([b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9"]))
    # Mixed: one line end changed.
    ends = [i for i, c in enumerate(data) if c == 10]
    if not ends:
        return data + b"\r"
    i = rng.choice(ends)
    return data[:i] + rng.choice([b"\r", b"\r\n", b"\r\r\n", b"\n\r", b"\xe2\x80\xa8"]) + data[i + 1:]


def m_encoding(rng, data, seeds):
    text = data.decode("utf-8", errors="replace")
    op = rng.randrange(5)
    if op == 0:
        return b"\xff\xfe" + text.encode("utf-16-le", errors="surrogatepass")
    if op == 1:
        return b"\xfe\xff" + text.encode("utf-16-be", errors="surrogatepass")
    if op == 2:
        return text.encode("utf-16-le", errors="surrogatepass")
    if op == 3:
        return b"\xef\xbb\xbf" + rng.choice([b"", b"\xef\xbb\xbf"]) + data
    return b"\x00\x00\xfe\xff" + text.encode("utf-32-be", errors="surrogatepass")


def m_flow_style(rng, data, seeds):
    """Rewrites a block list or mapping line into flow style, or breaks a flow collection."""
    lines = lines_of(data)
    i = rng.randrange(len(lines))
    line = lines[i]
    if b"[" in line or b"{" in line:
        cut = max(line.rfind(b"]"), line.rfind(b"}"))
        if cut >= 0:
            lines[i] = line[:cut] + line[cut + 1:]
        return b"".join(lines)
    stripped = line.strip()
    indent = line[: len(line) - len(line.lstrip(b" "))]
    if stripped.startswith(b"- "):
        lines[i] = indent + b"- [" + stripped[2:] + b", " + stripped[2:] + b"]\n"
    elif b": " in stripped:
        k, _, v = stripped.partition(b": ")
        lines[i] = indent + b"{" + k + b": " + v + b"}: x\n" if rng.random() < 0.3 else indent + k + b": {" + k + b": " + v + b"}\n"
    return b"".join(lines)


def m_amplify(rng, data, seeds):
    """Small text that every later phase reads many times: nested aliases of a long scalar,
    thousands of expressions or duplicate keys on one line (each once slow)."""
    op = rng.randrange(3)
    if op == 0:
        size = rng.choice([1000, 100_000, 500_000])
        out = [b"steps:", b"  - &s0 {print: &a \"" + b"x" * size + b"\"}"]
        for level in range(1, rng.randint(2, 6)):
            out.append(b"  - &s%d {sequential: [" % level + b", ".join([b"*s%d" % (level - 1)] * 10) + b"]}")
        return b"\n".join(out) + b"\n"
    count = rng.choice([100, 5000, 30_000])
    if op == 1:
        step = rng.choice([b'{print: "${{ vars.x%d }}"}', b'{shell: "echo ${{ steps.s%d.outputs.o }}"}',
                           b'{if: "${{ %d == 1 }}", print: x}', b'{print: "{{ .V%d }}"}'])
        return b"steps: [" + b", ".join(step % i if b"%d" in step else step for i in range(count)) + b"]\n"
    pad = b"x" * rng.choice([10, 100_000, 1_000_000])
    return b"steps:\n  - {print: " + pad + b", a: 1,\n     " + b", ".join([b"a: 1"] * count) + b"}\n"


MUTATORS = [
    (m_byte_flip, 3), (m_byte_set, 3), (m_truncate, 3), (m_splice, 4), (m_lines, 3), (m_indent, 3),
    (m_feature, 4), (m_anchor_alias, 3), (m_key, 4), (m_value, 4), (m_expression, 5), (m_long_scalar, 1),
    (m_line_ends, 2), (m_encoding, 1), (m_flow_style, 2), (m_amplify, 1),
]


MAX_INPUT = 4 << 20


def mutate(rng, seeds):
    name, data = rng.choice(seeds)
    applied = []
    for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
        mutator = rng.choices([m for m, _ in MUTATORS], weights=[w for _, w in MUTATORS])[0]
        data = mutator(rng, data, seeds)
        applied.append(mutator.__name__[2:])
        if len(data) > MAX_INPUT:
            # Stacked amplifying mutations (a 1 MB line copied 200 times): cut, keep going.
            data = data[:MAX_INPUT]
    return name, applied, data


# ---------------------------------------------------------------------------------------
# Checks


def line_starts(data):
    """Line starts as flow (and libyaml) count them: LF, CR LF, CR, NEL, LS, PS."""
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    starts = [start]
    i, n = start, len(data)
    while i < n:
        c = data[i]
        if c == 0x0A:
            i += 1
        elif c == 0x0D:
            i += 2 if i + 1 < n and data[i + 1] == 0x0A else 1
        elif c == 0xC2 and i + 1 < n and data[i + 1] == 0x85:
            i += 2
        elif c == 0xE2 and i + 2 < n and data[i + 1] == 0x80 and data[i + 2] in (0xA8, 0xA9):
            i += 3
        else:
            i += 1
            continue
        starts.append(i)
    return starts


class SourceLines:
    def __init__(self, data):
        self.data = data
        self.starts = line_starts(data)
        self.column_counts = {}
        self.shown_lines = {}
        self.count = len(self.starts) - 1 if len(self.starts) > 1 and self.starts[-1] == len(data) else len(self.starts)

    def line_bytes(self, line):
        if line < 1 or line > len(self.starts):
            return b""
        start = self.starts[line - 1]
        if line < len(self.starts):
            end = self.starts[line]
            d = self.data
            if d[end - 1] == 0x0A:
                end -= 2 if end >= 2 and d[end - 2] == 0x0D else 1
            elif d[end - 1] == 0x0D:
                end -= 1
            elif d[end - 1] == 0x85:
                end -= 2
            else:
                end -= 3
        else:
            end = len(self.data)
        return self.data[start:max(start, end)]

    def columns(self, line):
        # Thousands of diagnostics may share one long line: count it once.
        if line not in self.column_counts:
            self.column_counts[line] = self.count_columns(line)
        return self.column_counts[line]

    def shown(self, line, column):
        """Line `line` as flow's excerpt shows it for a span starting at `column`."""
        if line not in self.shown_lines:
            self.shown_lines[line] = self.line_bytes(line).decode("utf-8", errors="replace")
        return shown_line(self.shown_lines[line], column)

    def count_columns(self, line):
        raw = self.line_bytes(line)
        # Columns count scalars; a stray continuation byte of a file that is not UTF-8 is
        # one (shown as U+FFFD) too.
        return max(sum(1 for c in raw if c & 0xC0 != 0x80), len(raw.decode("utf-8", errors="replace")))


# Lines longer than this many scalars are shown as a window around the span
# (`DiagnosticRenderer.maxLineWidth`).
MAX_LINE_WIDTH = 160


def shown_line(text, column):
    """The excerpt line as flow renders it (docs/diagnostics.md, `DiagnosticRenderer.excerpt`):
    invalid UTF-8 replaced by U+FFFD, a tab as `→`, other control characters and the
    bidirectional overrides and isolates escaped as `\\u{X}` (`ControlEscaping`); a line
    longer than 160 scalars cut to the 160 from 40 before the span's start column (or the
    last 160), with `…` where it was cut."""
    prefix = suffix = ""
    if len(text) > MAX_LINE_WIDTH:
        start = max(column - 1, 0)
        first = max(0, min(start - 40, len(text) - MAX_LINE_WIDTH))
        last = min(len(text), first + MAX_LINE_WIDTH)
        prefix = "…" if first > 0 else ""
        suffix = "…" if last < len(text) else ""
        text = text[first:last]
    out = [prefix]
    for ch in text:
        v = ord(ch)
        if ch == "\t":
            out.append("→")
        elif v < 0x20 or 0x7F <= v <= 0x9F or 0x202A <= v <= 0x202E or 0x2066 <= v <= 0x2069:
            out.append("\\u{%X}" % v)
        else:
            out.append(ch)
    out.append(suffix)
    return "".join(out)


def check_position(src, where, line, column, problems, end=False):
    last = max(src.count, 1)
    if end:
        # An end is exclusive: one past a line's last column, or column 1 of the next line;
        # a point just past a line's end (a value missing there) is one column wide, so its
        # end is the line's length + 2.
        if not (1 <= line <= last + 1) or column < 1 or (line <= last and column > src.columns(line) + 2) \
                or (line == last + 1 and column != 1):
            problems.append(f"{where}: end {line}:{column} outside the file ({last} lines)")
        return
    if not 1 <= line <= last:
        problems.append(f"{where}: line {line} outside the file ({last} lines)")
    elif not 1 <= column <= src.columns(line) + 1:
        problems.append(f"{where}: column {column} outside line {line} ({src.columns(line)} columns)")


HEADER = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<kind>error|warning|note): ")


def check_text(src, name, stderr, problems):
    lines = stderr.split("\n")
    count = 0
    i = 0
    while i < len(lines):
        m = HEADER.match(lines[i])
        if not m or m.group("file") != name:
            i += 1
            continue
        if m.group("kind") != "note":
            count += 1
        line, col = int(m.group("line")), int(m.group("col"))
        check_position(src, f"text {m.group('kind')} {line}:{col}", line, col, problems)
        if src.data and 1 <= line <= max(src.count, 1):
            expected_gutter = f"{line} | "
            if i + 3 >= len(lines) or not lines[i + 2].startswith(expected_gutter):
                problems.append(f"text {line}:{col}: no excerpt of line {line}")
            else:
                shown = lines[i + 2][len(expected_gutter):]
                want = src.shown(line, col)
                if shown != want:
                    problems.append(f"text {line}:{col}: excerpt {shown[:80]!r} is not line {line} {want[:80]!r}")
                carets = lines[i + 3]
                if "^" not in carets:
                    problems.append(f"text {line}:{col}: no caret")
            i += 4
        else:
            i += 1
    return count


def check_json(src, name, stdout, problems):
    try:
        value = json.loads(stdout)
    except ValueError as error:
        problems.append(f"json: does not parse: {error}")
        return None
    if not isinstance(value, list):
        problems.append("json: not an array")
        return None
    for d in value:
        try:
            where = f"json {d['code']} {d['line']}:{d['column']}"
            check_position(src, where, d["line"], d["column"], problems)
            check_position(src, where, d["end_line"], d["end_column"], problems, end=True)
            if (d["end_line"], d["end_column"]) < (d["line"], d["column"]):
                problems.append(f"{where}: end {d['end_line']}:{d['end_column']} before the start")
            for note in d["notes"]:
                check_position(src, f"{where} note", note["line"], note["column"], problems)
            if d["file"] != name or d["severity"] not in ("error", "warning"):
                problems.append(f"{where}: file or severity wrong")
        except (KeyError, TypeError) as error:
            problems.append(f"json: malformed diagnostic {d!r:.200}: {error}")
    return len(value)


GITHUB = re.compile(r"^::(error|warning) file=([^,]*),line=(\d+),col=(\d+),endLine=(\d+),endColumn=(\d+),title=[^:]*::")


def check_github(src, stdout, problems):
    count = 0
    for line in stdout.split("\n"):
        if not line:
            continue
        m = GITHUB.match(line)
        if not m:
            problems.append(f"github: malformed line {line[:120]!r}")
            continue
        count += 1
        check_position(src, f"github {m.group(3)}:{m.group(4)}", int(m.group(3)), int(m.group(4)), problems)
    return count


def limit_resources(memory_mb):
    def apply():
        # 0: no limit (a sanitizer build reserves terabytes of address space for its shadow).
        if memory_mb > 0:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.setsid()
    return apply


class Runner:
    def __init__(self, binary, timeout, memory_mb, workdir):
        self.binary = binary
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.workdir = Path(workdir)
        self.runs = 0

    def run(self, command, data):
        """Runs one command on `data`; returns (problems, status)."""
        args, allowed = COMMANDS[command]
        path = self.workdir / "input.yaml"
        path.write_bytes(data)
        env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "FLOW_STATE_DIR": str(self.workdir / "state"),
               "HOME": str(self.workdir)}
        argv = [self.binary] + [a.replace("{f}", "input.yaml") for a in args]
        self.runs += 1
        timeout = self.timeout if len(data) < (1 << 20) else self.timeout * 6
        proc = subprocess.Popen(argv, cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, preexec_fn=limit_resources(self.memory_mb))
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return [f"{command}: timeout after {timeout} s"], None
        problems = []
        status = proc.returncode
        if status < 0:
            problems.append(f"{command}: killed by signal {-status} ({signal.Signals(-status).name})")
        elif status not in allowed:
            problems.append(f"{command}: exit status {status}")
        texts = []
        for stream, raw in (("stdout", out), ("stderr", err)):
            try:
                texts.append(raw.decode("utf-8"))
            except UnicodeDecodeError as error:
                problems.append(f"{command}: {stream} is not UTF-8 ({error})")
                texts.append(raw.decode("utf-8", errors="replace"))
        for trap in TRAPS:
            if trap in texts[0] or trap in texts[1]:
                problems.append(f"{command}: runtime trap message `{trap}`")
        src = SourceLines(data)
        detail = []
        if command == "validate":
            count = check_text(src, "input.yaml", texts[1], detail)
            self.counts["text"] = count
        elif command == "validate-json":
            self.counts["json"] = check_json(src, "input.yaml", texts[0], detail)
        elif command == "validate-github":
            self.counts["github"] = check_github(src, texts[0], detail)
        elif command == "plan" and status in (0, 2):
            check_text(src, "input.yaml", texts[1], detail)
        problems += [f"{command}: {p}" for p in detail]
        return problems, status

    def check(self, data, commands=None):
        """Every problem of `data` over the commands, as a list of strings."""
        self.counts = {}
        problems = []
        statuses = {}
        for command in commands or COMMANDS:
            found, status = self.run(command, data)
            problems += found
            statuses[command] = status
        if commands is None:
            if statuses.get("validate") is not None and statuses.get("plan") is not None:
                valid = statuses["validate"] == 0
                planned = statuses["plan"] == 0
                if valid != planned:
                    problems.append(f"consistency: validate exit {statuses['validate']}, plan exit {statuses['plan']}")
            counts = {k: v for k, v in self.counts.items() if v is not None}
            if len(set(counts.values())) > 1:
                problems.append(f"consistency: diagnostic counts differ {counts}")
        return problems


def signature(problem):
    """What a failure is, without numbers that change as the input shrinks."""
    return re.sub(r"\d+", "N", re.sub(r"'.*|`[^`]*`|\{.*\}|\(.*\)", "", problem))


# ---------------------------------------------------------------------------------------
# Minimisation


def minimise(runner, data, problem, commands, budget_seconds):
    target = signature(problem)
    deadline = time.monotonic() + budget_seconds

    def fails(candidate):
        if time.monotonic() > deadline:
            return False
        return any(signature(p) == target for p in runner.check(candidate, commands))

    def ddmin(units):
        n = 2
        while len(units) >= 2 and time.monotonic() < deadline:
            chunk = max(1, len(units) // n)
            reduced = False
            for start in range(0, len(units), chunk):
                complement = units[:start] + units[start + chunk:]
                if complement and fails(b"".join(complement)):
                    units = complement
                    n = max(n - 1, 2)
                    reduced = True
                    break
            if not reduced:
                if n >= len(units):
                    break
                n = min(len(units), n * 2)
        return units

    data = b"".join(ddmin(lines_of(data)))
    if len(data) <= 4096:
        data = b"".join(ddmin([bytes([c]) for c in data]))
    return data


# ---------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=str(ROOT / ".build/release/flow"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--time-limit", type=float, default=0, help="stop after this many seconds (0: no limit)")
    parser.add_argument("--timeout", type=float, default=10)
    parser.add_argument("--memory-mb", type=int, default=2048, help="address-space limit per run (0: none)")
    parser.add_argument("--crashes", default="/tmp/fuzz-hostile/crashes")
    parser.add_argument("--minimise-seconds", type=float, default=120)
    parser.add_argument("--replay", nargs="*", help="check these files instead of fuzzing")
    options = parser.parse_args()

    if not os.access(options.binary, os.X_OK):
        sys.exit(f"fuzz.py: no executable at {options.binary}; build it with `swift build -c release --product flow`")
    workdir = tempfile.mkdtemp(prefix="flow-fuzz-")
    runner = Runner(os.path.abspath(options.binary), options.timeout, options.memory_mb, workdir)
    try:
        if options.replay is not None:
            bad = 0
            for name in options.replay:
                problems = runner.check(Path(name).read_bytes())
                for p in problems:
                    print(f"{name}: {p}")
                bad += bool(problems)
            print(f"{len(options.replay)} files, {bad} failing")
            sys.exit(1 if bad else 0)

        seeds = load_seeds()
        rng = random.Random(options.seed)
        crashes = Path(options.crashes)
        crashes.mkdir(parents=True, exist_ok=True)
        seen = set()
        started = time.monotonic()
        failing = 0
        print(f"{len(seeds)} seeds, seed {options.seed}, {options.iterations} iterations", flush=True)
        for iteration in range(options.iterations):
            if options.time_limit and time.monotonic() - started > options.time_limit:
                break
            name, applied, data = mutate(rng, seeds)
            problems = runner.check(data)
            if iteration % 200 == 0:
                elapsed = time.monotonic() - started
                print(f"[{iteration}] {elapsed:.0f} s, {runner.runs} runs, {failing} failing, {len(seen)} distinct",
                      flush=True)
            if not problems:
                continue
            failing += 1
            first = problems[0]
            key = signature(first)
            if key in seen:
                continue
            seen.add(key)
            command = first.split(":")[0]
            commands = None if command == "consistency" else [command]
            small = minimise(runner, data, first, commands, options.minimise_seconds)
            stem = f"seed{options.seed}-{iteration}"
            (crashes / f"{stem}.yaml").write_bytes(small)
            (crashes / f"{stem}.orig.yaml").write_bytes(data)
            report = "\n".join([f"seed file: {name}", f"mutations: {', '.join(applied)}",
                                f"iteration: {iteration} (--seed {options.seed})", "problems:"]
                               + [f"  {p}" for p in problems]
                               + ["after minimising:"] + [f"  {p}" for p in runner.check(small)])
            (crashes / f"{stem}.txt").write_text(report + "\n")
            print(f"FAIL {stem}: {first}", flush=True)
        elapsed = time.monotonic() - started
        print(f"done: {iteration + 1} inputs, {runner.runs} runs, {elapsed:.0f} s, {failing} failing, "
              f"{len(seen)} distinct", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
