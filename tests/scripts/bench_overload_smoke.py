#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Smoke test of scripts/bench-overload against a build tree: one 1-s window per receiver at
50 000 datagrams/s (far below any receiver's capacity).

Asserts what cannot depend on the machine's speed: the script exits 0 and its table has one row
per receiver (bare, efu, efu-2t), each with datagrams sent, some delivered, and no more
delivered than sent (a receiver that took nothing, or counted wrong, fails). No timing threshold.
usage: bench_overload_smoke.py SOURCE_DIR BUILD_DIR
"""
import os
import re
import subprocess
import sys

source, build = sys.argv[1], sys.argv[2]
result = subprocess.run([sys.executable, os.path.join(source, "scripts", "bench-overload"),
                         "--rates", "0.05", "--reps", "1", "--seconds", "1", "--build-dir",
                         build], capture_output=True, text=True, timeout=120)
sys.stderr.write(result.stderr)
if result.returncode != 0:
    sys.exit(f"bench-overload exited with {result.returncode}:\n{result.stdout}")
rows = {}
for m in re.finditer(r"^\| 0\.05 \| (\S+) \| ([0-9.]+) \| (-?[0-9.]+) \| ([0-9.]+) \|$",
                     result.stdout, re.M):
    rows[m.group(1)] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
if sorted(rows) != ["bare", "efu", "efu-2t"]:
    sys.exit("expected one row per receiver (bare, efu, efu-2t) in:\n" + result.stdout)
for name, (sent, lost, delivered) in rows.items():
    if sent <= 0 or delivered <= 0 or not 0 <= lost < 100 or delivered > sent + 1e-9:
        sys.exit(f"{name}: sent {sent} Mpps, lost {lost} %, delivered {delivered} Mpps:\n"
                 + result.stdout)
print("ok: " + ", ".join(f"{n} {d:.3f} of {s:.3f} Mpps" for n, (s, _, d) in sorted(rows.items())))
