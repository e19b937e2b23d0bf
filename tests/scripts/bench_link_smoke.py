#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Smoke test of scripts/bench-link against a build tree: `--quick` (LoKI, Kafka off, 1-s steps),
then `--at-link --pin threads` (one step per mode at a low rate, Kafka off and on, the CPU time
of efu's pinned threads only; where CPUs 0 and 1 are both usable, the processing thread on a
CPU of its own, --proc-cpu 1).

Asserts what cannot depend on the machine's speed: the script exits 0, its table has the loki
no-kafka row with a lossless rate > 0, and every step it reports lossless really had every
datagram counted (sent > 0, formed events == published); --at-link's table has both modes with
a CPU time per datagram > 0 (so the pinned threads were found by name) and their ratio,
matching its steps, and with --proc-cpu 1 the processing thread's share of it. No timing
threshold.
usage: bench_link_smoke.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

source, build = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory(prefix="bench-link-test-") as work:
    steps_path, out_path = os.path.join(work, "steps.jsonl"), os.path.join(work, "link.md")
    result = subprocess.run([sys.executable, os.path.join(source, "scripts", "bench-link"),
                             "--quick", "--no-build", "--build-dir", build, "--json", steps_path,
                             "--out", out_path], capture_output=True, text=True, timeout=240)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        sys.exit(f"bench-link exited with {result.returncode}")
    with open(out_path) as f:
        table = f.read()
    row = re.search(r"^\| loki \| no-kafka \|.*?\| \*\*(\d+)\*\*", table, re.M)
    if not row or int(row.group(1)) <= 0:
        sys.exit("no loki no-kafka row with a lossless rate > 0 in:\n" + table)
    with open(steps_path) as f:
        steps = [json.loads(line) for line in f]
    lossless = [s for s in steps if s["lossless"]]
    if not lossless:
        sys.exit("no lossless step")
    for s in lossless:
        if s["sent"] <= 0 or s["formed"] != s["published"] or s["formed"] <= 0:
            sys.exit(f"a step called lossless that is not: {s}")
    best = max(lossless, key=lambda s: s["offered"])  # the rate it shows: what was sent
    if abs(min(best["offered"], best["achieved"]) - int(row.group(1))) > 1:
        sys.exit(f"the table's rate {row.group(1)} is not the highest lossless step's")
    print(f"ok: loki no-kafka lossless at {row.group(1)} datagrams/s, {len(steps)} steps")

    cost_steps, cost_out = os.path.join(work, "cost.jsonl"), os.path.join(work, "cost.md")
    two_cpus = {0, 1} <= os.sched_getaffinity(0)
    result = subprocess.run([sys.executable, os.path.join(source, "scripts", "bench-link"),
                             "--no-build", "--build-dir", build, "--instruments", "loki",
                             "--at-link", "0.05", "--reps", "1", "--step-seconds", "1",
                             "--pin", "threads"] + (["--proc-cpu", "1"] if two_cpus else []) + [
                             "--datagrams", "500", "--json", cost_steps, "--out", cost_out],
                            capture_output=True, text=True, timeout=240)
    sys.stderr.write(result.stderr)
    if result.returncode != 0:
        sys.exit(f"bench-link --at-link exited with {result.returncode}")
    with open(cost_out) as f:
        table = f.read()
    with open(cost_steps) as f:
        steps = {s["mode"]: s for s in map(json.loads, f)}
    for mode in ("no-kafka", "kafka"):
        row = re.search(rf"^\| loki \| {mode} \| \d+ \| \d of 1 \| ([0-9.]+) \|", table, re.M)
        if not row or float(row.group(1)) <= 0:
            sys.exit(f"no loki {mode} row with a CPU time per datagram > 0 in:\n" + table)
        if abs(float(row.group(1)) - steps[mode]["cpu_us_per_datagram"]) > 0.01:
            sys.exit(f"{mode}: the table's {row.group(1)} us is not its step's: {steps[mode]}")
    pinned = "threads on CPUs 0 and 1" if two_cpus else "threads on CPU 0"
    if f"receive and processing {pinned}" not in table:
        sys.exit(f"the report does not say '{pinned}':\n" + table)
    rows = {cells[1]: cells for cells in (line.split(" | ") for line in table.splitlines()
                                          if line.startswith("| loki | "))}
    if not re.fullmatch(r"[0-9.]+", rows.get("kafka", [""] * 9)[8].rstrip(" |")):
        sys.exit("no kafka / no-kafka ratio in:\n" + table)
    if two_cpus:
        # The processing thread's own share: in the table as in its step, within the total.
        for mode, cells in rows.items():
            proc = steps[mode]["proc_us_per_datagram"]
            if (proc is None or not 0 <= proc <= steps[mode]["cpu_us_per_datagram"]
                    or abs(float(cells[9]) - proc) > 0.01):
                sys.exit(f"{mode}: processing thread {cells[9]} us in the table, step: "
                         f"{steps[mode]}")
    print("ok: --at-link, " + ", ".join(f"{m} {s['cpu_us_per_datagram']:.2f} us/datagram"
                                        for m, s in steps.items()))
