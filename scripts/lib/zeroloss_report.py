# SPDX-License-Identifier: BSD-2-Clause
# The outputs of scripts/bench-zero-loss: results.csv, summary.md, zero-loss.png.
"""What scripts/bench-zero-loss writes into --out: results.csv one line a window as the run goes
(Recorder), and per finished size summary.md (commit, machine, command line, a table per size
with the ratios to bare and iperf3) and zero-loss.png (write_reports).

rows: {size: {receiver: {achieved_bps, min_bps, max_bps, limited, reps, errors,
lowest_fail_bps, confirm}}}, as run_size() of the script returns them.
"""
import os
import shlex
import time

from efubench import (command_line, csv_line, fmt, gbps, load_average, machine, mpps, now,
                      pyplot, ratio, sysctl_int)
from receivers import RECEIVERS

DISTURBED_PCT = 10.0  # a window is marked disturbed when other processes used more CPU than this
CSV_COLUMNS = ["time", "size", "receiver", "rep", "phase", "step", "window", "offered_gbps",
               "offered_mpps", "seconds", "sent", "send_errors", "received", "lost",
               "kernel_drops", "seq_lost", "ring_drops", "truncated", "backlog_drops",
               "rcvbuf_errors", "other_cpu_pct", "achieved_gbps", "achieved_mpps",
               "sender_limited", "passed", "error"]


class Recorder:
    """results.csv, one line per window, written as the run goes."""

    def __init__(self, path):
        self.file = open(path, "w")
        self.file.write(",".join(CSV_COLUMNS) + "\n")
        self.file.flush()

    def window(self, size, receiver, rep, phase, step, index, rate_bps, r, error=None):
        row = {"time": time.strftime("%H:%M:%S"), "size": size, "receiver": receiver,
               "rep": rep, "phase": phase, "step": step, "window": index,
               "offered_gbps": gbps(rate_bps), "offered_mpps": mpps(rate_bps, size),
               "error": error}
        if r:
            row.update({k: r.get(k) for k in CSV_COLUMNS if k in r})
            row["achieved_gbps"] = gbps(r["achieved_bps"])
            row["achieved_mpps"] = mpps(r["achieved_bps"], size)
            row["sender_limited"] = int(r["sender_limited"])
            row["passed"] = int(r["passed"])
        self.file.write(csv_line(row, CSV_COLUMNS))
        self.file.flush()


def value_text(entry, key="achieved_bps", size=None):
    if not entry or not entry.get(key):
        return "–"
    figure = gbps(entry[key]) if size is None else mpps(entry[key], size)
    return ("≥ " if entry.get("limited") else "") + fmt(figure)


def summary(args, rows, started_at):
    out = ["<!-- SPDX-License-Identifier: BSD-2-Clause -->",
           "# Zero-loss rates: udpgen → bare receiver, efu, iperf3 (loopback)", "",
           f"- commit `{args.commit}`, started {started_at}, written {now()}",
           f"- machine: {machine()}; load average at the end {load_average()}",
           f"- command: `{command_line()}`",
           f"- receivers pinned to CPU {args.rx_cpu} (efu's processing thread to "
           f"{args.proc_cpu}), udpgen / iperf3 client to CPU {args.tx_cpu}; socket buffers "
           f"{args.rcvbuf} B (rmem_max {sysctl_int('net.core.rmem_max')}, netdev_max_backlog "
           f"{sysctl_int('net.core.netdev_max_backlog')}); udpgen with UDP GSO, paced",
           f"- a rate is lossless when {args.windows} consecutive windows of {args.window:g} s "
           f"each lose 0 datagrams; search from the starting rate ×{args.growth:g} up/down, then "
           f"bisection to {args.precision * 100:g} % (at most {args.max_steps} trials); "
           f"median of {args.reps} search(es); confirmation {args.confirm:g} s at that rate",
           "- efu variants: " + ("; ".join(
               f"`{r}`: `" + shlex.join(["efu", "-d", "udp", "--no-kafka", "--rx-cpu",
                                         str(args.rx_cpu), "--proc-cpu", str(args.proc_cpu)]
                                        + RECEIVERS[r]["args"] + args.efu_args) + "`"
               for r in args.receivers if RECEIVERS[r]["kind"] == "efu") or "none"),
           ""]
    warnings = list(args.warnings)
    disturbed = [w for w in args.windows_seen if w > DISTURBED_PCT]
    if disturbed:
        warnings.append(f"{len(disturbed)} of {len(args.windows_seen)} windows ran while other "
                        f"processes used more than {DISTURBED_PCT:g} % of a core (up to "
                        f"{max(disturbed):.0f} %; column other_cpu_pct of results.csv)")
    if warnings:
        out += ["**Disturbed:** " + "; ".join(warnings) + ". Other processes competed for the "
                "cores: these figures are not trustworthy.", ""]
    for size, row in rows.items():
        out += [f"## {size} B", "",
                "| receiver | lossless Gb/s | lossless Mpps | min–max Gb/s | trials | "
                "confirmation lost | ×bare | ×iperf3 | note |",
                "|---|---|---|---|---|---|---|---|---|"]
        bare = (row.get("bare") or {}).get("achieved_bps")
        peer = (row.get("iperf3") or {}).get("achieved_bps")
        for receiver, entry in row.items():
            value = entry.get("achieved_bps")
            conf = entry.get("confirm") or {}
            if "lost" in conf:
                conf_text = f"{conf['lost']} of {conf['sent']}" + \
                    ("" if conf["passed"] else " (not clean)")
            else:
                conf_text = conf.get("error", "–") if conf else "–"
            notes = []
            if entry.get("limited"):
                notes.append("sender limit: a lower bound")
            if not value and entry.get("lowest_fail_bps"):
                notes.append(f"lost even at {gbps(entry['lowest_fail_bps']):.3f} Gb/s")
            notes += [f"error: {e}" for e in entry["errors"]]
            spread = (f"{gbps(entry['min_bps']):.3f}–{gbps(entry['max_bps']):.3f}"
                      if value and args.reps > 1 else "–")
            trials = "/".join(str(r["steps"]) for r in entry["reps"])
            ratio_bare = fmt(ratio(value, bare), 2) if receiver != "bare" else "–"
            ratio_peer = fmt(ratio(value, peer), 2) if receiver != "iperf3" else "–"
            out.append(f"| {receiver} | {value_text(entry)} | {value_text(entry, size=size)} "
                       f"| {spread} | {trials} | {conf_text} | {ratio_bare} | {ratio_peer} "
                       f"| {'; '.join(notes)} |")
        out.append("")
    out += ["Lossless rate: the median over the windows of the user-data rate udpgen (or "
            "iperf3's client) actually sent at the highest offered rate that passed. Every window "
            "starts the receiver afresh. Loss = sent − received (bare: its count; efu: "
            "receive.packets less rx.dropped.ring_full where the build has it, or udp.seq.lost if "
            "larger; iperf3: or its lost_packets if larger); a window also fails on kernel "
            "socket drops, ring drops and send errors. "
            "Every window is in results.csv.", ""]
    return "\n".join(out)


def plot(args, rows, path):
    plt = pyplot()
    sizes = list(rows)
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 4.2), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, size in zip(axes[0], sizes):
        names = list(rows[size])
        values = [gbps(rows[size][n].get("achieved_bps") or 0) for n in names]
        low = [v - gbps(rows[size][n].get("min_bps") or 0) if v else 0
               for v, n in zip(values, names)]
        high = [gbps(rows[size][n].get("max_bps") or 0) - v if v else 0
                for v, n in zip(values, names)]
        bars = ax.bar(range(len(names)), values,
                      color=[colours[args.receivers.index(n) % len(colours)] for n in names],
                      yerr=[low, high] if args.reps > 1 else None, capsize=3)
        for bar, name, value in zip(bars, names, values):
            if rows[size][name].get("limited"):
                bar.set_hatch("//")
            label = f"{mpps(value * 1e9, size):.3f}\nMpps" if value else "–"
            ax.annotate(label, (bar.get_x() + bar.get_width() / 2, value), ha="center",
                        va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points")
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_title(f"{size} B")
        ax.set_ylabel("lossless user data [Gb/s]")
        ax.margins(y=0.15)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"Highest rate with 0 datagrams lost in {args.windows} × {args.window:g} s "
                 f"(loopback; hatched: sender limit)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_reports(args, rows, started_at):
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(summary(args, rows, started_at))
    if not args.no_plots and rows:
        plot(args, rows, os.path.join(args.out, "zero-loss.png"))
