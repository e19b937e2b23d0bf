# SPDX-License-Identifier: BSD-2-Clause
# Helpers shared by the bench scripts and soak: processes, broker, sysctl, efu, udpgen, iperf3,
# output, options.
"""Shared helpers of scripts/bench-udp-sweep, bench-zero-loss, bench-events, bench-link,
bench-udpmon, bench-view and soak.

- processes: start() records every child; stop() ends one by its PID (signal, then SIGKILL);
  start_broker() starts the dev broker efu-broker and returns its bootstrap address;
  cleanup() stops whatever is left and restores the sysctls apply_sysctl() changed; call it in
  a finally block after install_signal_handlers(), so Ctrl-C and SIGTERM get there too;
- set-up: Debian packages through apt-get, the CMake targets (ensure_build builds them,
  built() takes them as they are), sysctl save/restore;
- a quiet machine: refuse to measure next to other benchmarks or on busy cores, and the CPU
  other processes took during a measurement;
- efu's control port (Control: STAT_GET_NAME, all counters, settle until they stop moving,
  EXIT);
- udpgen's command line; iperf3: a UDP server / client pair and its JSON;
- /proc readers (CPU ticks per core and thread, Udp counters, per-socket queue and drops);
- output: number formatting, CSV, pyplot(), the commit / machine / command-line lines of a
  report;
- options: add_deprecated() keeps an old option spelling for one release; HelpFormatter.

Scripts import it with sys.path.insert(0, <scripts>/lib).
"""
import argparse
import datetime
import json
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAPER_SYSCTL = {"net.core.rmem_max": "12582912", "net.core.wmem_max": "12582912",
                "net.core.netdev_max_backlog": "5000"}
# Where the targets the scripts use land in a build tree.
TARGET_PATHS = {"efu": "efu/efu", "efu-module-udp": "modules/efu-module-udp.so",
                "udpgen": "generators/udpgen/udpgen", "udpecho": "generators/udpecho/udpecho",
                "readoutgen": "generators/readoutgen/readoutgen",
                "efu-broker": "efu/tools/efu-broker", "efu-dump": "efu/tools/efu-dump",
                "efu-view": "efu/tools/efu-view",
                "efu-bench-bare-rx": "tests/bench/efu-bench-bare-rx",
                "efu-bench-stalls": "tests/bench/efu-bench-stalls"}
TARGET_PATHS.update({f"efu-module-{m}": f"modules/efu-module-{m}.so"
                     for m in ("caen", "vmm3", "nmx", "trex", "cbm", "dream", "timepix3",
                               "example", "perfgen")})

started = []          # Popen objects started through start(); stopped by PID in cleanup()
started_pids = set()  # every PID start() ever created (to tell our processes from others)
saved_sysctl = {}     # name -> value before apply_sysctl()


def add_deprecated(parser, old, new, **kwargs):
    """Adds `old` as a hidden spelling of the option `new` for one release: the value goes to
    `new`'s destination and each use warns on stderr (docs/tools.md, "Option vocabulary")."""
    class Deprecated(argparse.Action):
        def __call__(self, _parser, namespace, values, option_string=None):
            print(f"warning: {option_string} is deprecated and goes in the next release; use {new}",
                  file=sys.stderr)
            setattr(namespace, self.dest, values)

    dest = new.lstrip("-").replace("-", "_")
    parser.add_argument(old, dest=dest, action=Deprecated, default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS, **kwargs)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default only where the help text does not already say it."""

    def _get_help_string(self, action):
        if action.default in (None, [], "", False):
            return action.help
        return super()._get_help_string(action)


def log(message):
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- processes and cleanup

def start(argv, **kwargs):
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, **kwargs)
    started.append(proc)
    started_pids.add(str(proc.pid))
    return proc


def forget(proc):
    """The process has been waited for by the caller: no longer ours to stop."""
    if proc in started:
        started.remove(proc)


def stop(proc, sig=signal.SIGTERM, timeout=5.0):
    """Ends one process we started (by its PID): sig, then SIGKILL after timeout."""
    if proc.poll() is None:
        try:
            proc.send_signal(sig)
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except ProcessLookupError:
            pass
    forget(proc)


def wait_with_rusage(proc, timeout):
    """Waits for a child and returns its CPU seconds (user + sys) from wait4."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            forget(proc)
            return usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"{proc.args[0]} did not finish in {timeout:.0f} s")
        time.sleep(0.02)


def log_tail(path, lines=5):
    """The last lines of a process's log file, joined with ' | ' ('' if it cannot be read)."""
    try:
        with open(path, errors="replace") as f:
            return " | ".join(line.strip() for line in f.read().splitlines()[-lines:])
    except OSError:
        return ""


def cleanup():
    """Stops every process still running and restores every sysctl changed; safe to call twice."""
    for proc in list(started):
        stop(proc, timeout=2.0)
    for name, value in saved_sysctl.items():
        subprocess.run(["sysctl", "-q", "-w", f"{name}={value}"], check=False)
        log(f"== restored {name}={value}")
    saved_sysctl.clear()


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def install_signal_handlers():
    """SIGINT and SIGTERM unwind through the caller's finally: cleanup() runs."""
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


def start_broker(path, workdir, cpu=None, topics=(), timeout=10.0):
    """Starts the dev broker efu-broker (pinned to cpu if given; --topic NAME[:PARTITIONS] for
    each of topics) and returns (process, bootstrap address). The address is read from
    --bootstrap-file in workdir, so the broker's stdout can go to /dev/null; cleanup() stops it.
    Exits the script if the broker does not come up within timeout seconds."""
    bootstrap_file = os.path.join(workdir, f"efu-broker-{os.getpid()}-{len(started)}.bootstrap")
    argv = (["taskset", "-c", str(cpu)] if cpu is not None else []) + [
        path, "--bootstrap-file", bootstrap_file, "--log-level", "warn"]
    for topic in topics:
        argv += ["--topic", topic]
    broker = start(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(bootstrap_file):
            with open(bootstrap_file) as f:
                text = f.read().strip()
            if text:
                return broker, text
        if broker.poll() is not None:
            break
        time.sleep(0.05)
    stop(broker)
    sys.exit(f"efu-broker did not start ({path})")


# ---------------------------------------------------------------- /proc readers

def read_cpu_lines():
    """Per-CPU ticks from /proc/stat: {cpu: [user, nice, system, idle, iowait, irq, softirq,
    steal]}."""
    cpus = {}
    with open("/proc/stat") as f:
        for line in f:
            words = line.split()
            if words and words[0].startswith("cpu") and words[0] != "cpu":
                cpus[int(words[0][3:])] = [int(w) for w in words[1:9]]
    return cpus


def cpu_shares(before, after, cpu):
    """(busy %, softirq %) of one core between two read_cpu_lines() samples."""
    delta = [b - a for a, b in zip(before[cpu], after[cpu])]
    total = sum(delta)
    if total <= 0:
        return 0.0, 0.0
    idle = delta[3] + delta[4]
    return 100.0 * (total - idle) / total, 100.0 * delta[6] / total


def task_ticks(pid):
    """{thread name: user+system ticks} for the threads of a process (names from comm)."""
    result = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return result
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                text = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        result[name] = result.get(name, 0) + int(fields[11]) + int(fields[12])
    return result


def process_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except FileNotFoundError:
        return 0
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def all_process_ticks():
    """{pid: (comm, user+system ticks)} of every process."""
    result = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        result[pid] = (text[text.index("(") + 1:text.rindex(")")],
                       int(fields[11]) + int(fields[12]))
    return result


def machine_activity(seconds=1.0):
    """({cpu: busy %}, {cpu: steal %}, ["comm pid (n %)", ...] of the busiest processes) over a
    short sample. Busy includes steal time (the hypervisor running something else); processes
    that both start and end inside the sample are not seen."""
    cpus0, procs0 = read_cpu_lines(), all_process_ticks()
    time.sleep(seconds)
    cpus1, procs1 = read_cpu_lines(), all_process_ticks()
    busy = {cpu: cpu_shares(cpus0, cpus1, cpu)[0] for cpu in cpus1}
    steal = {cpu: 100.0 * (cpus1[cpu][7] - cpus0[cpu][7])
             / max(1, sum(cpus1[cpu]) - sum(cpus0[cpu])) for cpu in cpus1}
    usage = sorted(((ticks - procs0.get(pid, ("", 0))[1], pid, comm)
                    for pid, (comm, ticks) in procs1.items()
                    if ticks > procs0.get(pid, ("", 0))[1]), reverse=True)
    top = [f"{comm} {pid} ({100.0 * ticks / CLK_TCK / seconds:.0f} %)"
           for ticks, pid, comm in usage[:4]]
    return busy, steal, top


def snmp_udp(field):
    with open("/proc/net/snmp") as f:
        lines = [line.split() for line in f if line.startswith("Udp:")]
    return int(lines[1][lines[0].index(field)])


def udp_socket_line(port):
    """The /proc/net/udp words of the socket bound to port (any address), or None."""
    wanted = f":{port:04X}"
    with open("/proc/net/udp") as f:
        next(f)
        for line in f:
            words = line.split()
            if words[1].endswith(wanted):
                return words
    return None


def socket_drops(port):
    """The drops column of /proc/net/udp for the socket bound to port (0 if none)."""
    words = udp_socket_line(port)
    return int(words[-1]) if words else 0


def socket_rx_queue(port):
    """Bytes waiting in the receive queue of the socket bound to port (0 if none)."""
    words = udp_socket_line(port)
    return int(words[4].split(":")[1], 16) if words else 0


def wait_drained(port, moving=None, timeout=5.0):
    """Until the socket's queue is empty and moving() (a counter, if given) stopped changing."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        value = moving() if moving else None
        if socket_rx_queue(port) == 0 and value == last:
            return
        last = value
        time.sleep(0.05)


def backlog_drops():
    """Packets dropped because a CPU's input backlog was full (netdev_max_backlog), all CPUs."""
    with open("/proc/net/softnet_stat") as f:
        return sum(int(line.split()[1], 16) for line in f)


def free_port(kind):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- set-up

def ensure_packages(packages, install):
    """Installs the missing Debian packages with apt-get (through sudo unless root)."""
    missing = [p for p in packages
               if subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True,
                                 text=True).stdout.find("install ok installed") < 0]
    if not missing:
        return
    if not install:
        sys.exit(f"missing packages: {' '.join(missing)} (run without --no-install, or apt-get "
                 "install them)")
    log(f"== installing: {' '.join(missing)}")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing,
                   check=True, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def ensure_build(build_dir, targets, always=False):
    """Paths of the targets (keys of TARGET_PATHS) in build_dir, built (Release) if any is missing
    or, with always, brought up to date (an incremental build). Exits with the build's error."""
    paths = {t: os.path.join(build_dir, TARGET_PATHS[t]) for t in targets}
    if not always and all(os.path.exists(p) for p in paths.values()):
        return paths
    log(f"== building {' '.join(targets)} in {build_dir}")
    configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"]
    if {"efu-bench-bare-rx", "efu-bench-stalls"} & set(targets):  # tests/bench is part of the tree only with both options
        configure += ["-DEFU_BUILD_TESTS=ON", "-DEFU_BUILD_BENCHMARKS=ON"]
    for argv in (configure, ["cmake", "--build", build_dir, "-j2", "--target"] + targets):
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            log(result.stdout[-4000:])
            sys.exit(f"build failed: {' '.join(argv)} (output above; --no-build uses the binaries "
                     "as they are)")
    return paths


def built(build_dir, targets):
    """Paths of the targets (keys of TARGET_PATHS) in build_dir as they are; exits naming the
    missing ones."""
    paths = {t: os.path.join(build_dir, TARGET_PATHS[t]) for t in targets}
    missing = [p for p in paths.values() if not os.path.exists(p)]
    if missing:
        sys.exit(f"missing: {' '.join(missing)} (build them: cmake --build {build_dir} -j2)")
    return paths


def sysctl_value(name):
    return subprocess.run(["sysctl", "-n", name], capture_output=True, text=True,
                          check=True).stdout.strip()


def sysctl_int(name):
    return int(sysctl_value(name))


def apply_sysctl(values):
    """Sets each sysctl (name -> value), remembering the old value; cleanup() restores them."""
    for name, value in values.items():
        current = sysctl_value(name)
        if current == value:
            continue
        result = subprocess.run(["sysctl", "-q", "-w", f"{name}={value}"], capture_output=True,
                                text=True)
        if result.returncode != 0:
            sys.exit(f"cannot set {name}={value} ({result.stderr.strip() or 'not root?'})")
        saved_sysctl.setdefault(name, current)
        log(f"== set {name}={value} (was {current}; restored on exit)")


# ---------------------------------------------------------------- a quiet machine

BENCHMARKS = ("efu", "udpgen", "iperf3", "sockperf", "readoutgen")
KERNEL_THREADS = ("ksoftirqd", "kworker", "migration", "rcu_", "cpuhp", "idle_inject")


def other_benchmarks():
    """'PID comm' of every benchmark process running (efu, udpgen, iperf3, ...)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm in BENCHMARKS or comm.startswith("efu-bench-bare"):
            found.append(f"{pid} {comm}")
    return found


def busy_cores(cpus):
    """'' if the cores were at most 25 % busy over 2 s, else which were busy and who was."""
    busy, steal, top = machine_activity(2.0)
    loaded = {cpu: share for cpu, share in busy.items() if cpu in cpus and share > 25.0}
    if not loaded:
        return ""
    return (", ".join(f"CPU {cpu} {share:.0f} %" + (f" (steal {steal[cpu]:.0f} %)"
                                                     if steal[cpu] > 5 else "")
                      for cpu, share in sorted(loaded.items()))
            + "; busiest: " + ", ".join(top))


def check_quiet(cpus):
    """Exits if other benchmarks run or the cores are busy (a compiler, say): a second runnable
    thread on the receiver's core halves a one-thread receiver and flatters a two-thread one."""
    others = other_benchmarks()
    if others:
        sys.exit("other benchmark processes are running (" + ", ".join(others) + "): they would "
                 "disturb the measurement. Wait for them, or pass --allow-busy.")
    activity = busy_cores(cpus)
    if activity:
        sys.exit(f"the benchmark's cores are busy ({activity}). Wait until the machine is quiet, "
                 "or pass --allow-busy.")


def others_cpu(before, after, seconds):
    """CPU (% of one core) that processes took between two all_process_ticks() samples: those
    alive at the end that are not ours, not this script and not kernel threads (ksoftirqd does
    our packets' work)."""
    ticks = 0
    for pid, (comm, value) in after.items():
        if pid in started_pids or int(pid) == os.getpid() or comm.startswith(KERNEL_THREADS):
            continue
        ticks += value - before.get(pid, ("", 0))[1]
    return 100.0 * ticks / CLK_TCK / seconds


# ---------------------------------------------------------------- arithmetic

def theory_bps(size, link_bps):
    """Largest user-data rate (the paper's Table 1; common/net/LineRate.h)."""
    frame = max(size + 46, 64)
    return link_bps * size / (frame + 20)


def parse_rate(text):
    """Bits/s from '10G', '500M', '2.5e9'; 'max' is None (unpaced)."""
    if text == "max":
        return None
    units = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
    if text[-1] in units:
        return float(text[:-1]) * units[text[-1]]
    return float(text)


def rate_for_size(text, size):
    """User-data bits/s from '2G', '500M' or a datagram rate '200kpps', '0.2Mpps'."""
    if text.endswith("pps"):
        units = {"k": 1e3, "M": 1e6, "G": 1e9}
        number = text[:-3]
        scale = units.get(number[-1:], 1.0)
        value = float(number[:-1]) if number[-1:] in units else float(number)
        return value * scale * 8 * size
    return parse_rate(text)


def gbps(bps):
    return bps / 1e9


def mpps(bps, size):
    return bps / (8 * size) / 1e6


def gso_segments(size):
    """Datagrams per UDP GSO message for udpgen --gso (0 = the size does not allow GSO)."""
    return min(64, 65507 // size) if size * 2 <= 65507 else 0


def median_of(results):
    """Per-key medians of a list of result dicts (numeric keys only); None for no results."""
    results = [r for r in results if r]
    if not results:
        return None
    keys = set().union(*results)
    return {k: statistics.median(r[k] for r in results if k in r) for k in keys
            if all(isinstance(r.get(k, 0), (int, float)) for r in results)}


# ---------------------------------------------------------------- efu's control port

class Control:
    """The efu control port (text protocol, docs/control.md)."""

    def __init__(self, port):
        self.port = port

    def ask(self, lines, timeout=2.0):
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall("".join(line + "\n" for line in lines).encode())
            s.shutdown(socket.SHUT_WR)
            data = b""
            while data.count(b"\n") < len(lines):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return data.decode().splitlines()

    def counters(self):
        """Every counter: {name: value}."""
        count = int(self.ask(["STAT_GET_COUNT"])[0].split()[1])
        values = {}
        for line in self.ask([f"STAT_GET {i}" for i in range(1, count + 1)]):
            words = line.split()
            if len(words) == 3 and words[0] == "STAT_GET":
                values[words[1]] = int(words[2])
        return values

    def get(self, names):
        """The named counters (STAT_GET_NAME); unknown names are left out."""
        values = {}
        for line in self.ask([f"STAT_GET_NAME {name}" for name in names]):
            words = line.split()
            if len(words) == 3 and words[0] == "STAT_GET_NAME":
                values[words[1]] = int(words[2])
        return values

    def settle(self, names, moving, kafka, still=4, interval=0.25, timeout=20.0):
        """The named counters once those in moving have not changed for `still` polls interval s
        apart and, with kafka, every message produced so far is answered (delivered or failed):
        (values, whether that happened within timeout s)."""
        last, unchanged, deadline = None, 0, time.monotonic() + timeout
        values = {}
        while time.monotonic() < deadline:
            values = self.get(names)
            key = tuple(values.get(name) for name in moving)
            answered = not kafka or (values.get("kafka.delivered", 0)
                                     + values.get("kafka.failed", 0)
                                     >= values.get("kafka.produced", 0))
            unchanged = unchanged + 1 if key == last and answered else 0
            if unchanged >= still:
                return values, True
            last = key
            time.sleep(interval)
        return values, False

    def wait_ready(self, proc, timeout=10.0, describe=None):
        """Waits until the control port answers; raises RuntimeError if proc exits first."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.ask(["STAT_GET_COUNT"])
                return
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"efu exited with code {proc.returncode} at start"
                                       + (f": {describe()}" if describe else ""))
                if time.monotonic() > deadline:
                    raise RuntimeError(f"efu's control port {self.port} did not answer in "
                                       f"{timeout:.0f} s")
                time.sleep(0.05)

    def exit(self, proc, timeout=10.0):
        """EXIT, then wait for proc; returns its exit code (stops it by PID if EXIT fails)."""
        try:
            self.ask(["EXIT"])
            code = proc.wait(timeout=timeout)
            forget(proc)
            return code
        except (OSError, subprocess.TimeoutExpired):
            stop(proc)
            return proc.returncode


# ---------------------------------------------------------------- udpgen and iperf3

def udpgen_argv(path, port, size, cpu, seconds, rate_bps=None, gso=0):
    """udpgen pinned to cpu sending size-byte datagrams to 127.0.0.1:port for seconds, paced
    to rate_bps of user data (None = unpaced), gso datagrams a message, one JSON summary out."""
    argv = ["taskset", "-c", str(cpu), path, "-i", "127.0.0.1", "-p", str(port), "-s", str(size),
            "--cpu", str(cpu), "--stopafter", f"{seconds:g}", "--gso", str(gso), "--json", "-q"]
    return argv + (["--bitrate", f"{rate_bps:.0f}"] if rate_bps else [])


def start_iperf3_server(port, cpu):
    """iperf3 -s for one test on 127.0.0.1:port (TCP control, UDP data), pinned to cpu."""
    server = start(["iperf3", "-s", "-1", "-p", str(port), "-A", str(cpu), "-B", "127.0.0.1"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)  # it has no readiness signal; 0.3 s is ample on loopback
    return server


def iperf3_client_argv(port, cpu, size, rate_bps, seconds, buffer_bytes):
    """iperf3 -c -u: size-byte datagrams at rate_bps of user data (None = unpaced), JSON out;
    -w sets the socket buffers of both ends."""
    return ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-u", "-b",
            f"{rate_bps:.0f}" if rate_bps else "0", "-l", str(size), "-t", f"{seconds:g}",
            "-A", str(cpu), "-w", f"{buffer_bytes // 1024}K", "--json"]


def parse_iperf3(out, size):
    """{sent, delivered, lost, seconds} from the client's JSON; RuntimeError on an iperf3 error."""
    result = json.loads(out)
    if "error" in result:
        raise RuntimeError("iperf3: " + result["error"])
    end = result["end"]
    sent_sum, received_sum = end["sum_sent"], end["sum_received"]
    sent = sent_sum["packets"]
    delivered = received_sum["bytes"] // size
    return {"sent": sent, "delivered": delivered, "seconds": sent_sum["seconds"],
            "lost": max(received_sum["lost_packets"], sent - delivered, 0),
            "lost_packets": received_sum["lost_packets"],
            "cpu": end["cpu_utilization_percent"]}


# ---------------------------------------------------------------- output

def fmt(value, digits=3):
    if value is None:
        return "–"
    if value == 0:
        return "0"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e-2 and value != 0 else f"{value:.{digits}f}"
    return str(value)


def ratio(a, b):
    return a / b if a is not None and b else None


def csv_line(row, columns):
    return ",".join("" if row.get(c) is None else
                    (f"{row[c]:.6g}" if isinstance(row[c], float) else str(row[c]))
                    for c in columns) + "\n"


def write_csv(path, rows, columns):
    with open(path, "w") as f:
        f.write(",".join(columns) + "\n")
        for row in rows:
            f.write(csv_line(row, columns))


def pyplot():
    """matplotlib.pyplot drawing into files only (the Agg backend: no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def commit_id():
    """git rev-parse --short HEAD, plus -dirty if tracked files differ from it."""
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return commit + ("-dirty" if dirty else "")


def cpu_model():
    return next((line.split(":", 1)[1].strip() for line in
                 subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
                 if line.startswith("Model name")), "?")


def machine():
    """'<lscpu model name>, <n> CPUs, kernel <release>'."""
    return f"{cpu_model()}, {os.cpu_count()} CPUs, kernel {os.uname().release}"


def now():
    return datetime.datetime.now().strftime('%Y-%m-%d %H:%M')


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def command_line():
    """The command as typed, with the script's path relative to the repository."""
    return shlex.join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])
