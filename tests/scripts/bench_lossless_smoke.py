#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Smoke test of scripts/bench-lossless against a build tree: 2 µs of work per datagram, the
bare receiver and efu (-d udp with {"work_ns": 2000}), half-second windows, one bisection step.

Asserts what cannot depend on the machine's speed: the script exits 0; its table has one row per
receiver, each with a sustained rate above 0 and a lossless rate no higher than it; the socket
buffer's capacity and the stall probe are reported. No timing threshold.
usage: bench_lossless_smoke.py SOURCE_DIR BUILD_DIR
"""
import os
import re
import subprocess
import sys

source, build = sys.argv[1], sys.argv[2]
result = subprocess.run([sys.executable, os.path.join(source, "scripts", "bench-lossless"),
                         "--work-ns", "2000", "--receivers", "bare,efu", "--rcvbuf", "4194304",
                         "--window", "0.5", "--windows", "1", "--precision", "0.5",
                         "--stall-seconds", "0.2", "--allow-busy", "--no-build",
                         "--build-dir", build], capture_output=True, text=True, timeout=120)
sys.stderr.write(result.stderr)
if result.returncode != 0:
    sys.exit(f"bench-lossless exited with {result.returncode}:\n{result.stdout}")
rows = {}
for m in re.finditer(r"^\| 4194304 \| 2000 \| (\S+) \| ([0-9]+)(?: \(sender\))? \| \*\*([0-9]+)\*\* \|",
                     result.stdout, re.M):
    rows[m.group(1)] = (float(m.group(2)), float(m.group(3)))
if sorted(rows) != ["bare", "efu"]:
    sys.exit("expected one row per receiver (bare, efu) in:\n" + result.stdout)
for name, (sustained, lossless) in rows.items():
    if sustained <= 0 or lossless > sustained:
        sys.exit(f"{name}: sustained {sustained}, lossless {lossless}:\n" + result.stdout)
capacity = re.search(r"SO_RCVBUF 4194304: granted ([0-9]+) B, holds ([0-9]+) datagrams",
                     result.stdout)
if not capacity or int(capacity.group(2)) <= 0:
    sys.exit("no socket buffer capacity in:\n" + result.stdout)
if "stalls of CPU 0 before" not in result.stdout:
    sys.exit("no stall probe in:\n" + result.stdout)
print("ok: " + ", ".join(f"{n} sustained {s:.0f}/s, lossless {l:.0f}/s"
                         for n, (s, l) in sorted(rows.items())))
