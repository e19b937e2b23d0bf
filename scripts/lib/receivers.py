# SPDX-License-Identifier: BSD-2-Clause
# One measuring window of a UDP receiver on loopback, fed by udpgen (scripts/bench-zero-loss).
"""The receivers of scripts/bench-zero-loss, one window each: start the receiver afresh, send
with udpgen (or iperf3's client) for the window, and count what arrived.

  bare   tests/bench/efu-bench-bare-rx (recvmmsg x 64, counting only), optionally with UDP_GRO
  efu    efu -d udp --no-kafka with the variant's extra arguments, counters over the control port
  iperf3 an iperf3 UDP pair

A window function takes the script's options (args: paths, rx_cpu, proc_cpu, tx_cpu, rcvbuf,
efu_args, logdir; optionally bare_args), the receiver's name (a key of RECEIVERS), the datagram size, the offered
rate in bits/s and the seconds, and returns {sent, send_errors, seconds, received,
kernel_drops, ...}; WindowError when a process fails. preflight() starts each receiver once.
"""
import json
import os
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

from efubench import (Control, forget, free_port, gso_segments, iperf3_client_argv, log,
                      log_tail, parse_iperf3, socket_drops, start, start_iperf3_server, stop,
                      udpgen_argv, wait_drained)

# Receivers: kind, extra efu arguments, whether they use GRO (then only at --gro-sizes).
RECEIVERS = {
    "bare": {"kind": "bare", "gro": False},
    "bare-gro": {"kind": "bare", "gro": True},
    "efu": {"kind": "efu", "args": []},
    "efu-2t": {"kind": "efu", "args": ["--threads", "2"]},
    "efu-gro": {"kind": "efu", "args": ["--gro"], "gro": True},
    "iperf3": {"kind": "iperf3"},
}
EFU_COUNTERS = ["receive.packets", "receive.bytes", "processing.packets", "receive.dropped",
                "rx.dropped.ring_full", "receive.truncated", "udp.seq.lost",
                "udp.seq.expected"]


class WindowError(RuntimeError):
    """A window could not be measured (a process failed); the message says which and why."""



def run_udpgen(args, port, size, rate_bps, seconds):
    """udpgen pinned to --tx-cpu, paced with GSO; returns its JSON summary."""
    argv = udpgen_argv(args.paths["udpgen"], port, size, args.tx_cpu, seconds, rate_bps,
                       gso_segments(size))
    sender = start(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = sender.communicate(timeout=seconds + 30)
    finally:
        stop(sender)
    if sender.returncode != 0 or not out.strip():
        raise WindowError(f"udpgen exited with code {sender.returncode}: {err.strip()[-500:]}")
    summary = json.loads(out.strip().splitlines()[-1])
    return {"sent": summary["sent"], "send_errors": summary["errors"]["total"],
            "seconds": summary["seconds"]}


def window_bare(args, receiver, size, rate_bps, seconds):
    log_path = os.path.join(args.logdir, f"{receiver}.log")
    argv = ["taskset", "-c", str(args.rx_cpu), args.paths["efu-bench-bare-rx"], "--cpu",
            str(args.rx_cpu), "--address", "127.0.0.1", "--port", "0", "--rcvbuf",
            str(args.rcvbuf)] + (["--gro"] if RECEIVERS[receiver]["gro"] else []) \
        + getattr(args, "bare_args", [])
    with open(log_path, "w") as log_file:
        rx = start(argv, stdout=subprocess.PIPE, stderr=log_file, text=True)
    try:
        ready, _, _ = select.select([rx.stdout], [], [], 10.0)
        first = rx.stdout.readline() if ready else ""
        if not first:
            rx.poll()
            raise WindowError(f"efu-bench-bare-rx did not start (code {rx.returncode}): "
                              f"{log_tail(log_path)}")
        port = json.loads(first)["port"]
        sent = run_udpgen(args, port, size, rate_bps, seconds)
        wait_drained(port)
        drops = socket_drops(port)
        rx.send_signal(signal.SIGTERM)
        out, _ = rx.communicate(timeout=10)
        forget(rx)
    finally:
        stop(rx)
    if rx.returncode != 0 or not out.strip():
        raise WindowError(f"efu-bench-bare-rx exited with code {rx.returncode}: "
                          f"{log_tail(log_path)}")
    counts = json.loads(out.strip().splitlines()[-1])
    return dict(sent, received=counts["packets"],
                kernel_drops=max(counts["kernel_drops"], drops))


def efu_argv(args, receiver, data_port, cmd_port):
    # Its other threads share the rx core; efu's --threads auto sees both cores if they differ.
    cpus = ",".join(sorted({str(args.rx_cpu), str(args.proc_cpu)}))
    return (["taskset", "-c", cpus, args.paths["efu"], "-d", "udp", "--module-path",
             os.path.dirname(args.paths["efu-module-udp"]), "-i", "127.0.0.1", "-p",
             str(data_port), "-m", str(cmd_port), "--rx-cpu", str(args.rx_cpu), "--proc-cpu",
             str(args.proc_cpu), "--no-kafka", "--rcvbuf", str(args.rcvbuf)]
            + RECEIVERS[receiver]["args"] + args.efu_args)


def start_efu(args, receiver):
    """efu for one receiver variant, ready (control port answering): (proc, control, port)."""
    data_port, cmd_port = free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_STREAM)
    log_path = os.path.join(args.logdir, f"{receiver}.log")
    with open(log_path, "w") as log_file:
        rx = start(efu_argv(args, receiver, data_port, cmd_port), stdout=log_file,
                   stderr=subprocess.STDOUT)
    control = Control(cmd_port)
    try:
        control.wait_ready(rx, describe=lambda: log_tail(log_path))
    except RuntimeError as error:
        stop(rx)
        raise WindowError(str(error)) from None
    time.sleep(0.1)  # threads named and pinned
    return rx, control, data_port


def window_efu(args, receiver, size, rate_bps, seconds):
    rx, control, port = start_efu(args, receiver)
    try:
        sent = run_udpgen(args, port, size, rate_bps, seconds)
        wait_drained(port, lambda: tuple(
            control.get(["receive.packets", "processing.packets"]).values()))
        values = control.get(EFU_COUNTERS)
        drops = socket_drops(port)
    finally:
        code = control.exit(rx)
    if code != 0:
        raise WindowError(f"efu ({receiver}) exited with code {code}: "
                          f"{log_tail(os.path.join(args.logdir, f'{receiver}.log'))}")
    ring_drops = values.get("rx.dropped.ring_full")  # counted in receive.packets, never processed
    return dict(sent, received=values.get("receive.packets", 0) - (ring_drops or 0),
                kernel_drops=max(values.get("receive.dropped", 0), drops),
                seq_lost=values.get("udp.seq.lost"), ring_drops=ring_drops,
                truncated=values.get("receive.truncated"))


def window_iperf3(args, receiver, size, rate_bps, seconds):
    port = free_port(socket.SOCK_STREAM)
    out_path = os.path.join(args.logdir, f"{receiver}.json")
    log_path = os.path.join(args.logdir, f"{receiver}.log")
    server = start_iperf3_server(port, args.rx_cpu)
    drops = 0
    try:
        with open(out_path, "w") as out_file, open(log_path, "w") as log_file:
            client = start(iperf3_client_argv(port, args.tx_cpu, size, rate_bps, seconds,
                                              args.rcvbuf), stdout=out_file, stderr=log_file)
        deadline = time.monotonic() + seconds + 30
        try:
            while client.poll() is None:
                # The server's UDP socket (same port) vanishes at the end: sample it meanwhile.
                drops = max(drops, socket_drops(port))
                if time.monotonic() > deadline:
                    raise WindowError("iperf3 did not finish")
                time.sleep(0.2)
        finally:
            stop(client)
        server.wait(timeout=5)
        forget(server)
    except subprocess.TimeoutExpired:
        raise WindowError("iperf3 server did not finish") from None
    finally:
        stop(server)
    try:
        with open(out_path) as f:
            r = parse_iperf3(f.read(), size)
    except (ValueError, KeyError, RuntimeError) as error:
        raise WindowError(f"iperf3: {error} {log_tail(log_path)}") from None
    return {"sent": r["sent"], "send_errors": 0, "seconds": r["seconds"],
            "received": r["delivered"], "lost_reported": r["lost"], "kernel_drops": drops}


WINDOW = {"bare": window_bare, "efu": window_efu, "iperf3": window_iperf3}


def window(args, receiver, size, rate_bps, seconds):
    """One window of the named receiver at rate_bps for seconds: its figures."""
    return WINDOW[RECEIVERS[receiver]["kind"]](args, receiver, size, rate_bps, seconds)


def preflight(args):
    """Starts each receiver once, so a variant efu does not accept fails now, not in an hour."""
    for receiver in args.receivers:
        kind = RECEIVERS[receiver]["kind"]
        if kind == "efu":
            try:
                rx, control, _ = start_efu(args, receiver)
            except WindowError as error:
                sys.exit(f"receiver {receiver}: efu does not start with "
                         f"`{shlex.join(efu_argv(args, receiver, 9000, 8888)[3:])}`: {error}\n"
                         f"(an option this efu build does not know? rebuild, or leave "
                         f"{receiver} out of --receivers)")
            code = control.exit(rx)
            if code != 0:
                sys.exit(f"receiver {receiver}: efu exited with code {code} after EXIT")
        elif kind == "bare":
            try:
                window_bare(args, receiver, 1472, 8 * 1472 * 1000, 0.05)
            except WindowError as error:
                sys.exit(f"receiver {receiver}: {error}")
        elif kind == "iperf3" and shutil.which("iperf3") is None:
            sys.exit("receiver iperf3: iperf3 is not installed")
    log(f"== preflight: {', '.join(args.receivers)} start and stop cleanly")
