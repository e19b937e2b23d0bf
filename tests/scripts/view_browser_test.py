#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""efu-view's page in a real browser, against the real chain:
efu-broker -> efu -d caen (LokiFull.json) <- readoutgen --pattern letters --truth, and efu-view
reading the broker and serving its page to headless Chromium, driven over the W3C WebDriver
protocol (chromedriver; stdlib urllib only).

Checks, all against readoutgen's ground truth (exact counts, no timing thresholds; every wait
is a poll with a deadline):
  1. the page draws the image once every event arrived (the image it drew sums to the truth);
  2. a screenshot of the image canvas: each screen pixel is black exactly where the detector
     pixels it shows (the page's transform, from window.efuView) have no truth event;
  3. the hover tooltip names the pixel id, x, y and its truth count;
  4. a region drawn by real pointer actions (shift + drag) over the letter "E": its row in
     #roi-list shows the truth count of the rectangle it made;
  5. a TOF gate dragged across the spectrum; after a second readoutgen run the gated image sums
     to the second run's events inside the gate, the region's spectrum to its events in the
     rectangle, the source's spectrum to all events, and the region's count to both runs';
  6. the red banner: "no data since ..." once efu stops, "efu-view not answering" once efu-view
     stops.
Screenshots (page and image canvas) go to OUT_DIR. Exits 77 (CTest: skipped) when Chromium or
chromedriver is missing, saying why.

usage: view_browser_test.py --efu BIN --broker BIN --readoutgen BIN --view BIN --module-dir DIR
                            --source-dir DIR --out DIR [--chromium BIN] [--chromedriver BIN]
"""
import argparse
import base64
import csv
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zlib

SKIP = 77
W3C_ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
SHIFT = "\ue008"


class Failure(Exception):
    pass


def log(msg):
    print(f"[view_browser_test {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def eventually(fn, what, timeout=60.0, interval=0.1):
    """Polls fn() until it returns a truthy value (returned) or the deadline passes (Failure)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            value = fn()
            if value:
                return value
            last = value
        except Failure:
            raise
        except Exception as e:  # noqa: BLE001 - keep polling, report the last error
            last = e
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")
        time.sleep(interval)


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A process this test started: output to a log file (stdout optionally also read line by
    line); stopped with SIGTERM at the end."""

    def __init__(self, name, argv, workdir, read_stdout=False):
        self.name = name
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.log = open(self.log_path, "w")
        self.lines = []
        self.cond = threading.Condition()
        log(f"start {name}: {' '.join(argv)}")
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE if read_stdout else self.log,
                                  stderr=self.log, stdin=subprocess.DEVNULL, text=True)
        if read_stdout:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.log.write(line)
            self.log.flush()
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def wait_line(self, prefix, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if line.startswith(prefix):
                        return line
                if self.p.poll() is not None:
                    raise Failure(f"{self.name} exited ({self.p.returncode}) before printing "
                                  f"'{prefix}':\n{self.tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure(f"{self.name} printed no '{prefix}' in {timeout:.0f} s:\n"
                                  f"{self.tail()}")
                self.cond.wait(min(left, 0.2))

    def tail(self, n=30):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-n:])

    def wait_exit(self, timeout):
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            raise Failure(f"{self.name} did not exit in {timeout} s:\n{self.tail()}") from None
        self.stop()
        return self.p.returncode

    def running(self):
        return self.p.poll() is None

    def stop(self, timeout=20):
        if self.log.closed:
            return self.p.returncode
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                log(f"{self.name} ignored SIGTERM for {timeout} s; killing it")
                self.p.kill()
                self.p.wait()
        self.log.close()
        return self.p.returncode


class WebDriver:
    """The few W3C WebDriver commands this test needs, over HTTP with urllib."""

    def __init__(self, base):
        self.base = base
        self.sid = None

    def call(self, method, path, body=None, timeout=120):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:
            raise Failure(f"WebDriver {method} {path}: HTTP {e.code}: "
                          f"{e.read().decode(errors='replace')[:800]}") from None

    def session(self, chromium, args):
        caps = {"browserName": "chrome", "goog:chromeOptions": {"binary": chromium, "args": args}}
        value = self.call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
        self.sid = value["sessionId"]

    def s(self, method, path, body=None):
        return self.call(method, f"/session/{self.sid}{path}", body)

    def viewport(self, w, h):
        """Sizes the window so that the page gets w x h CSS pixels."""
        self.s("POST", "/window/rect", {"width": w, "height": h})
        iw, ih = self.js("return [window.innerWidth, window.innerHeight]")
        self.s("POST", "/window/rect", {"width": 2 * w - iw, "height": 2 * h - ih})

    def go(self, url):
        self.s("POST", "/url", {"url": url})

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def element(self, css):
        return self.s("POST", "/element", {"using": "css selector", "value": css})[W3C_ELEMENT]

    def click(self, css):
        self.s("POST", f"/element/{self.element(css)}/click", {})

    def screenshot(self, css=None):
        path = f"/element/{self.element(css)}/screenshot" if css else "/screenshot"
        return base64.b64decode(self.s("GET", path))

    def actions(self, sources):
        self.s("POST", "/actions", {"actions": sources})
        self.s("DELETE", "/actions")

    def quit(self):
        if self.sid:
            try:
                self.call("DELETE", f"/session/{self.sid}", timeout=30)
            except Exception as e:  # noqa: BLE001 - the browser may be gone already
                log(f"closing the browser session: {e}")
            self.sid = None


def decode_png(data):
    """8-bit RGB/RGBA, non-interlaced PNG (what Chrome's screenshots are) -> (w, h, bpp, rows)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure("screenshot is not a PNG")
    pos, idat, head = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = head
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise Failure(f"unexpected PNG format: depth {depth}, colour type {ctype}")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif f == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 255
        elif f == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
        elif f == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pred) & 255
        elif f != 0:
            raise Failure(f"PNG filter {f}")
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def axis_ranges(n, canvas_n, off, scale):
    """The detector pixels [lo, hi) each canvas pixel shows along one axis: the page's rule
    (app.js axisRanges), written again here from its description."""
    out = []
    for c in range(canvas_n):
        if scale >= 1:
            a = int((c + 0.5 - off) // scale)
            b = a + 1
        else:
            a = -int(((c - off) / scale - 0.5) // -1)  # ceil
            b = -int(((c + 1 - off) / scale - 0.5) // -1)
        out.append((max(0, min(n, a)), max(0, min(n, b))))
    return out


def letter_box(width, height, glyph):
    """Detector pixels [x0, x1) x [y0, y1) of glyph 0..2 of readoutgen's "ESS" (Pattern.cpp:
    17 columns, glyphs of 5 with one between, in the middle 80 % x 60 % of the image)."""
    xs = [x for x in range(width) if 0.1 <= (x + 0.5) / width < 0.9
          and int(((x + 0.5) / width - 0.1) / 0.8 * 17) // 6 == glyph
          and int(((x + 0.5) / width - 0.1) / 0.8 * 17) % 6 != 5]
    ys = [y for y in range(height) if 0.2 <= (y + 0.5) / height < 0.8]
    return xs[0], xs[-1] + 1, ys[0], ys[-1] + 1


def read_truth(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [(int(r["tof_ns"]), int(r["pixel_id"])) for r in rows]


def main():
    ap = argparse.ArgumentParser()
    for name in ("efu", "broker", "readoutgen", "view", "module-dir", "source-dir", "out"):
        ap.add_argument(f"--{name}", required=True)
    ap.add_argument("--chromium")
    ap.add_argument("--chromedriver")
    ap.add_argument("--events", type=int, default=300000, help="events of the first run")
    a = ap.parse_args()

    chromium = a.chromium or next(filter(None, map(shutil.which, (
        "chromium", "chromium-browser", "google-chrome"))), None)
    chromedriver = a.chromedriver or shutil.which("chromedriver")
    # scripts/test installs both and sets EFU_REQUIRE_BROWSER=1: there, a missing browser fails.
    skip = 1 if os.environ.get("EFU_REQUIRE_BROWSER") == "1" else SKIP
    if not chromium or not os.access(chromium, os.X_OK):
        where = chromium or "none of chromium, chromium-browser, google-chrome on PATH"
        print(f"SKIP: no Chromium ({where}; Debian: apt-get install chromium chromium-driver)")
        return skip
    if not chromedriver or not os.access(chromedriver, os.X_OK):
        print(f"SKIP: no chromedriver ({chromedriver or 'not on PATH'}; Debian: apt-get install "
              "chromium-driver)")
        return skip

    os.makedirs(a.out, exist_ok=True)
    config = os.path.join(a.source_dir, "modules", "caen", "configs", "LokiFull.json")
    procs = {}   # the processes this test started, by name
    drivers = []  # the browser sessions, closed before chromedriver stops
    work = tempfile.mkdtemp(prefix="view-browser-test-")
    try:
        return run(a, chromium, chromedriver, config, work, procs, drivers)
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        for name, p in procs.items():
            print(f"--- {name} ({p.log_path}):\n{p.tail()}", file=sys.stderr)
        return 1
    finally:
        for d in drivers:
            d.quit()
        for name in reversed(list(procs)):
            procs[name].stop()
        shutil.rmtree(work, ignore_errors=True)


def run(a, chromium, chromedriver, config, work, procs, drivers):
    mod = ["--module-path", a.module_dir]

    # --- the chain: broker, efu, efu-view
    bootstrap_file = os.path.join(work, "bootstrap")
    procs["efu-broker"] = Proc("efu-broker", [a.broker, "--bootstrap-file", bootstrap_file,
                                              "--log-level", "warn"], work)
    bootstrap = eventually(lambda: open(bootstrap_file).read().strip(), "efu-broker's bootstrap",
                           timeout=30)
    udp, cmd = free_port(socket.SOCK_DGRAM), free_port()
    procs["efu"] = Proc("efu", [a.efu, "-d", "caen", "-f", config, *mod, "--instrument", "loki",
                                "-p", str(udp), "-m", str(cmd), "-b", bootstrap,
                                "--stats-interval", "1"], work)

    def efu_answers():
        if not procs["efu"].running():
            raise Failure("efu exited:\n" + procs["efu"].tail())
        with socket.create_connection(("127.0.0.1", cmd), timeout=2) as s:
            s.sendall(b"VERSION_GET\n")
            return s.recv(256)
    eventually(efu_answers, "efu's control port", timeout=30)

    view = Proc("efu-view", [a.view, "-b", bootstrap, "-t", "loki_detector", "-t", "loki_stats",
                             "-t", "loki_status", "--geometry", config, "-d", "caen", *mod,
                             "--from", "beginning", "--http-port", "0"], work, read_stdout=True)
    procs["efu-view"] = view
    line = view.wait_line("efu-view: serving http://", timeout=30)
    url = line.split("serving ", 1)[1].strip()
    if not url.startswith("http://127.0.0.1:"):
        raise Failure(f"efu-view serves on a non-loopback address: {line}")
    log(f"efu-view at {url}")

    # --- the browser
    wd_port = free_port()
    procs["chromedriver"] = Proc("chromedriver", [chromedriver, f"--port={wd_port}"], work)
    wd = WebDriver(f"http://127.0.0.1:{wd_port}")
    eventually(lambda: wd.call("GET", "/status", timeout=5)["ready"], "chromedriver", timeout=30)

    def browser_args(profile):
        return ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--force-device-scale-factor=1", "--hide-scrollbars",
                f"--user-data-dir={os.path.join(work, profile)}"]
    wd.session(chromium, browser_args("profile-1"))
    drivers.append(wd)
    wd.viewport(1400, 1000)
    wd.go(url)
    eventually(lambda: wd.js("return !!(window.efuView && window.efuView.lastState)"),
               "the page's first /api/state", timeout=30)
    program = wd.js("return window.efuView.lastState.program")
    if program != "efu-view":
        raise Failure(f"/api/state program is {program!r}")

    # --- run 1: the letters, with truth
    truth1_path = os.path.join(work, "truth1.csv")
    n1 = run_readoutgen(a, config, udp, truth1_path, a.events, seed=1, work=work, procs=procs)
    truth1 = read_truth(truth1_path)
    if len(truth1) != n1:
        raise Failure(f"readoutgen said {n1} events, its truth has {len(truth1)} lines")
    geometry = wd.js("return window.efuView.lastState.geometry")
    width, height, first = geometry["width"], geometry["height"], geometry["first_pixel"]
    per_pixel = {}
    for _, pixel in truth1:
        per_pixel[pixel] = per_pixel.get(pixel, 0) + 1
    outside = [p for p in per_pixel if not first <= p < first + width * height]
    if outside:
        raise Failure(f"truth pixels outside the geometry {geometry}: {outside[:5]}")
    log(f"run 1: {n1} events on {len(per_pixel)} pixels of {width} x {height}")

    # 1. the image drawn with every event
    def drawn_all():
        d = wd.js("const v = window.efuView; return document.body.dataset.imageDrawn === '1' && "
                  "v.drawn && !v.drawn.gated ? v.drawn : null")
        return d if d and d["sum"] == n1 else None
    drawn = eventually(drawn_all, f"the page to draw an image of all {n1} events", timeout=90)
    src = state_source(wd)
    if src["events"] != n1 or src["outside_image"] != 0:
        raise Failure(f"efu-view's source: {src['events']} events, {src['outside_image']} outside "
                      f"the image; truth {n1}")
    log(f"image drawn: {drawn}")

    # 2. black exactly where the truth has nothing
    compare_canvas(wd, a.out, "image-run1", per_pixel, width, height, first)

    # 3. the tooltip over a pixel the truth hit
    check_tooltip(wd, per_pixel, width, height, first)

    # 4. a region over the letter E by shift + drag
    roi = draw_roi(wd, width, height)
    in_roi = lambda truth: sum(1 for _, p in truth if in_rect(p, roi, width, first))  # noqa: E731
    want = in_roi(truth1)
    eventually(lambda: roi_row_counts(wd, roi["id"]) == (want, f"{want:,}"),
               f"#roi-list row {roi['id']} to show {want:,} (truth in {rect_text(roi)})",
               timeout=30)
    log(f"region {roi['id']} {rect_text(roi)}: row shows the truth, {want:,} events")
    # A second browser at the same time sees the same region and count (no per-client state).
    wd2 = WebDriver(wd.base)
    wd2.session(chromium, browser_args("profile-2"))
    drivers.append(wd2)
    wd2.viewport(1100, 800)
    wd2.go(url)
    eventually(lambda: roi_row_counts(wd2, roi["id"]) == (want, f"{want:,}"),
               f"a second browser's #roi-list row {roi['id']} to show {want:,}", timeout=30)
    wd2.quit()
    drivers.remove(wd2)
    log("a second browser shows the same region and count")
    wd.js("window.scrollTo(0, 0)")
    with open(os.path.join(a.out, "page-run1-roi.png"), "wb") as f:
        f.write(wd.screenshot())

    # 5. a TOF gate, then run 2 into the gate and the region
    gate = drag_gate(wd, 30e6, 50e6)
    wd.click("#show-gated")
    truth2_path = os.path.join(work, "truth2.csv")
    n2 = run_readoutgen(a, config, udp, truth2_path, a.events * 2 // 3, seed=2, work=work,
                        procs=procs)
    truth2 = read_truth(truth2_path)
    gated = [(t, p) for t, p in truth2 if gate["tof_min_ns"] <= t < gate["tof_max_ns"]]
    eventually(lambda: state_source(wd)["events"] == n1 + n2, f"{n1 + n2} events in efu-view",
               timeout=90)
    d = eventually(lambda: (lambda d: d if d and d["gated"] and d["sum"] == len(gated) else None)(
        wd.js("return window.efuView.drawn")),
        f"the gated image to sum to {len(gated)} (run 2 inside the gate)", timeout=60)
    log(f"gated image: {d['sum']} events, as the truth inside {gate}")
    gated_pixels = {}
    for _, p in gated:
        gated_pixels[p] = gated_pixels.get(p, 0) + 1
    compare_canvas(wd, a.out, "image-gated", gated_pixels, width, height, first)

    want_roi = in_roi(truth1) + in_roi(truth2)
    eventually(lambda: roi_row_counts(wd, roi["id"]) == (want_roi, f"{want_roi:,}"),
               f"region {roi['id']} to show {want_roi:,} after run 2", timeout=30)
    tof_max = wd.js("return window.efuView.lastState.tof.max_ns")
    roi_tof_want = sum(1 for t, p in truth2 if in_rect(p, roi, width, first) and 0 <= t < tof_max)
    all_tof_want = n1 + n2

    def spectra_match():
        tof = wd.js("return window.efuView.tof")
        if not tof or not tof.get("main") or str(roi["id"]) not in tof.get("rois", {}):
            return None
        main = tof["main"]
        main_sum = sum(main["bins"]) + main["negative"] + main["above_range"]
        roi_sum = sum(tof["rois"][str(roi["id"])]["bins"])
        return (main_sum, roi_sum) if (main_sum, roi_sum) == (all_tof_want, roi_tof_want) else None
    eventually(spectra_match, f"spectra: source {all_tof_want}, region {roi_tof_want} events",
               timeout=30)
    log(f"spectra: source {all_tof_want}, region {roi['id']} {roi_tof_want} (run 2 in it)")

    # the page as the README shows it: all events, the region, the gate, both spectra
    wd.click("#show-gated")
    eventually(lambda: (lambda d: d and not d["gated"] and d["sum"] == n1 + n2)(
        wd.js("return window.efuView.drawn")), "the ungated image again", timeout=30)
    compare_canvas(wd, a.out, "image-run2", merge(per_pixel, truth2), width, height, first)
    eventually(lambda: wd.js("return document.getElementById('banner').hidden"),
               "no banner while efu publishes", timeout=30)
    with open(os.path.join(a.out, "page.png"), "wb") as f:
        f.write(wd.screenshot())

    # the region's delete button and "Clear gate": gone from /api/state and from the page
    wd.click(f"#roi-list tr[data-roi-id='{roi['id']}'] button")
    eventually(lambda: wd.js("return window.efuView.lastState.rois.length === 0 && "
                             "!document.querySelector('#roi-list tr')"),
               "the region to be deleted", timeout=20)
    wd.click("#btn-clear-gate")
    eventually(lambda: wd.js("return window.efuView.lastState.gate === null && "
                             "document.getElementById('show-gated').disabled"),
               "the gate to be cleared", timeout=20)
    log("region deleted and gate cleared from the page")

    # 6. the banner: efu stops (no more messages), then efu-view stops (no answer)
    procs["efu"].stop()
    text = eventually(lambda: (lambda t: t if t.startswith("no data since") else None)(
        wd.js("const b = document.getElementById('banner'); return b.hidden ? '' : b.textContent")),
        "the 'no data since' banner after efu stopped", timeout=60)
    log(f"banner: {text}")
    with open(os.path.join(a.out, "page-no-data.png"), "wb") as f:
        f.write(wd.screenshot())
    if procs["efu-view"].stop() != 0:
        raise Failure("efu-view did not exit 0 on SIGTERM:\n" + procs["efu-view"].tail())
    text = eventually(lambda: (lambda t: t if t.startswith("efu-view not answering") else None)(
        wd.js("const b = document.getElementById('banner'); return b.hidden ? '' : b.textContent")),
        "the 'efu-view not answering' banner", timeout=60)
    log(f"banner: {text}")
    log(f"ok; screenshots in {a.out}")
    return 0


def merge(per_pixel, truth):
    out = dict(per_pixel)
    for _, p in truth:
        out[p] = out.get(p, 0) + 1
    return out


def in_rect(pixel, r, width, first):
    x, y = (pixel - first) % width, (pixel - first) // width
    return r["x0"] <= x < r["x1"] and r["y0"] <= y < r["y1"]


def rect_text(r):
    return f"[{r['x0']},{r['x1']}) x [{r['y0']},{r['y1']})"


def state_source(wd):
    st = wd.js("return window.efuView.lastState")
    srcs = [s for s in st["sources"] if s["topic"] == "loki_detector"]
    if len(srcs) != 1:
        raise Failure(f"expected one ev44 source on loki_detector, got {st['sources']}")
    return srcs[0]


def run_readoutgen(a, config, udp, truth, events, seed, work, procs):
    p = Proc(f"readoutgen-{seed}", [a.readoutgen, "-d", "caen", "-f", config, "--module-path",
                                    a.module_dir, "-p", str(udp), "--pattern", "letters",
                                    "--truth", truth, "--eps", "100000", "-n", str(events),
                                    "--tof", "gauss:40:10", "--seed", str(seed), "-q", "--json"],
             work, read_stdout=True)
    procs["readoutgen"] = p
    line = p.wait_line('{"events"', timeout=120)
    if p.wait_exit(timeout=60) != 0:
        raise Failure(f"readoutgen exited {p.p.returncode}:\n{p.tail()}")
    del procs["readoutgen"]
    return int(json.loads(line)["events"])


def canvas_rect(wd, css):
    return wd.js("const r = document.querySelector(arguments[0]).getBoundingClientRect();"
                 "return {x: r.left, y: r.top, w: r.width, h: r.height};", css)


def compare_canvas(wd, out, name, counts, width, height, first):
    """Screenshot of #image-canvas; each screen pixel black <=> no count in what it shows."""
    wd.js("document.getElementById('image-tip').hidden = true")

    # The page's transform before and after the screenshot: the same, or the layout moved
    # meanwhile (a resize redraws) and the screenshot is taken again.
    def shot():
        before = wd.js("return [window.efuView.transform(), window.efuView.drawn.imageSeq]")
        png = wd.screenshot("#image-canvas")
        after = wd.js("return [window.efuView.transform(), window.efuView.drawn.imageSeq]")
        return (before[0], png) if before == after else None
    t, png = eventually(shot, "a screenshot of the image canvas while the page holds still",
                        timeout=30)
    rois = wd.js("return window.efuView.lastState.rois")
    with open(os.path.join(out, f"{name}.png"), "wb") as f:
        f.write(png)
    cw, ch, bpp, rows = decode_png(png)
    dpr = t["dpr"]
    if abs(cw - t["cssWidth"] * dpr) > 1 or abs(ch - t["cssHeight"] * dpr) > 1:
        raise Failure(f"canvas screenshot {cw} x {ch}, the page says {t}")
    xs = axis_ranges(width, cw, t["offX"] * dpr, t["scaleX"] * dpr)
    ys = axis_ranges(height, ch, t["offY"] * dpr, t["scaleY"] * dpr)
    # Counts per detector row, then per screen pixel: is anything there?
    rows_hit = {}
    for pixel in counts:
        x, y = (pixel - first) % width, (pixel - first) // width
        rows_hit.setdefault(y, set()).add(x)
    # Region outlines and labels are drawn over the image: leave a band around them out.
    def near_roi(cx, cy):
        for r in rois:
            x0 = (t["offX"] + r["x0"] * t["scaleX"]) * dpr
            x1 = (t["offX"] + r["x1"] * t["scaleX"]) * dpr
            y0 = (t["offY"] + r["y0"] * t["scaleY"]) * dpr
            y1 = (t["offY"] + r["y1"] * t["scaleY"]) * dpr
            if x0 - 4 <= cx <= x1 + 4 and y0 - 18 <= cy <= y1 + 4 and not (
                    x0 + 4 < cx < x1 - 4 and y0 + 4 < cy < y1 - 4):
                return True
        return False
    checked = lit = 0
    bad = []
    for cy in range(ch):
        y0, y1 = ys[cy]
        if y1 <= y0:
            continue
        cols = set()
        for y in range(y0, y1):
            cols |= rows_hit.get(y, set())
        line = rows[cy]
        for cx in range(cw):
            x0, x1 = xs[cx]
            if x1 <= x0 or near_roi(cx, cy):
                continue
            want = any(x in cols for x in range(x0, x1))
            r, g, b = line[cx * bpp], line[cx * bpp + 1], line[cx * bpp + 2]
            got = (r, g, b) != (0, 0, 0)
            checked += 1
            lit += want
            if want != got:
                bad.append((cx, cy, (r, g, b), want, (x0, x1, y0, y1)))
    if checked < cw * ch // 4 or lit == 0:
        raise Failure(f"{name}: only {checked} screen pixels show the detector ({lit} lit)")
    if bad:
        raise Failure(f"{name}: {len(bad)} of {checked} screen pixels disagree with the truth "
                      f"(screen x, y, colour, truth has counts, detector [x0,x1) [y0,y1)): "
                      f"{bad[:8]}")
    log(f"{name}: {checked} screen pixels agree with the truth ({lit} lit, "
        f"{t['scaleX']:.3f} x {t['scaleY']:.4f} screen px per detector px)")


def check_tooltip(wd, counts, width, height, first):
    t = wd.js("return window.efuView.transform()")
    box = canvas_rect(wd, "#image-canvas")
    # a viewport point (whole CSS pixels, as pointer events report them) over a pixel the
    # truth hit, away from the pixel's edges
    for pixel, n in sorted(counts.items()):
        x, y = (pixel - first) % width, (pixel - first) // width
        vx = int(box["x"] + t["offX"] + (x + 0.5) * t["scaleX"])
        vy = int(box["y"] + t["offY"] + (y + 0.5) * t["scaleY"])
        fx = (vx - box["x"] - t["offX"]) / t["scaleX"]
        fy = (vy - box["y"] - t["offY"]) / t["scaleY"]
        if 0.1 < fx - x < 0.9 and 0.1 < fy - y < 0.9:
            break
    else:
        raise Failure("no screen point lands inside a hit pixel")
    wd.actions([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                 "actions": [{"type": "pointerMove", "duration": 0, "x": vx, "y": vy,
                              "origin": "viewport"}]}])
    want = f"pixel  {pixel}\nx {x}  y {y}\ncounts {n:,}"
    tip = lambda: wd.js("const t = document.getElementById('image-tip');"  # noqa: E731
                        "return t.hidden ? '' : t.textContent")
    seen = [""]
    try:
        eventually(lambda: seen.append(tip()) or seen[-1].startswith(want), "", timeout=15)
    except Failure:
        raise Failure(f"the tooltip at ({vx}, {vy}) reads {seen[-1]!r}, not {want!r}") from None
    log(f"tooltip over pixel {pixel}: x {x} y {y} counts {n}")
    # move off the canvas so the tooltip does not cover the next screenshots
    wd.actions([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                 "actions": [{"type": "pointerMove", "duration": 0, "x": 1, "y": 1,
                              "origin": "viewport"}]}])


def draw_roi(wd, width, height):
    """Shift + drag from just outside the letter E's top-left to just outside its bottom-right."""
    ex0, ex1, ey0, ey1 = letter_box(width, height, 0)
    sx0 = letter_box(width, height, 1)[0]  # the first S starts here
    t = wd.js("return window.efuView.transform()")
    box = canvas_rect(wd, "#image-canvas")
    margin_x = min(4, (sx0 - ex1) * t["scaleX"] / 3)
    to_x = lambda x: box["x"] + t["offX"] + x * t["scaleX"]  # noqa: E731 - viewport px
    to_y = lambda y: box["y"] + t["offY"] + y * t["scaleY"]  # noqa: E731
    a = (to_x(ex0) - margin_x, to_y(ey0) - 4)
    b = (to_x(ex1) + margin_x, to_y(ey1) + 4)
    a, b = (int(a[0]), int(a[1])), (int(b[0] + 1), int(b[1] + 1))
    before = len(wd.js("return window.efuView.lastState.rois"))
    pause = {"type": "pause", "duration": 0}
    wd.actions([
        {"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": SHIFT}, pause, pause, pause, pause,
            {"type": "keyUp", "value": SHIFT}]},
        {"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
            pause,
            {"type": "pointerMove", "duration": 0, "x": a[0], "y": a[1], "origin": "viewport"},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerMove", "duration": 250, "x": b[0], "y": b[1], "origin": "viewport"},
            {"type": "pointerUp", "button": 0}]},
    ])
    rois = eventually(lambda: (lambda r: r if len(r) > before else None)(
        wd.js("return window.efuView.lastState.rois")), "the region in /api/state", timeout=20)
    roi = rois[-1]
    if not (roi["x0"] <= ex0 and roi["x1"] >= ex1 and roi["y0"] <= ey0 and roi["y1"] >= ey1
            and roi["x1"] <= sx0):
        raise Failure(f"region {rect_text(roi)} does not hold the letter E "
                      f"[{ex0},{ex1}) x [{ey0},{ey1}) alone (S from x {sx0})")
    log(f"region {roi['id']} drawn by shift+drag: {rect_text(roi)} (E: [{ex0},{ex1}) x "
        f"[{ey0},{ey1}))")
    return roi


def roi_row_counts(wd, roi_id):
    return tuple(wd.js(
        "const c = document.querySelector("
        "  `#roi-list tr[data-roi-id='${arguments[0]}'] .roi-counts`);"
        "return c ? [Number(c.dataset.value), c.textContent] : [null, null];", roi_id))


def drag_gate(wd, lo_ns, hi_ns):
    """Drags across the spectrum from lo_ns to hi_ns; returns the gate /api/state reports."""
    plot = eventually(lambda: wd.js("return window.efuView.tofPlot"), "the spectrum", timeout=30)
    box = canvas_rect(wd, "#tof-canvas")

    def to_px(ns):
        return int(box["x"] + plot["x"] + (ns - plot["minNs"]) / (plot["maxNs"] - plot["minNs"])
                   * plot["w"])
    y = int(box["y"] + plot["y"] + plot["h"] / 2)
    wd.actions([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                 "actions": [
                     {"type": "pointerMove", "duration": 0, "x": to_px(lo_ns), "y": y,
                      "origin": "viewport"},
                     {"type": "pointerDown", "button": 0},
                     {"type": "pointerMove", "duration": 200, "x": to_px(hi_ns), "y": y,
                      "origin": "viewport"},
                     {"type": "pointerUp", "button": 0},
                     {"type": "pointerMove", "duration": 0, "x": 1, "y": 1,
                      "origin": "viewport"}]}])
    gate = eventually(lambda: wd.js("return window.efuView.lastState.gate"),
                      "the gate in /api/state",
                      timeout=20)
    ns_per_px = (plot["maxNs"] - plot["minNs"]) / plot["w"]
    if (abs(gate["tof_min_ns"] - lo_ns) > 2 * ns_per_px
            or abs(gate["tof_max_ns"] - hi_ns) > 2 * ns_per_px):
        raise Failure(f"gate {gate} is not the dragged [{lo_ns}, {hi_ns}) ns")
    eventually(lambda: not wd.js("return document.getElementById('show-gated').disabled"),
               "the gated-image switch", timeout=20)
    log(f"gate dragged: [{gate['tof_min_ns']}, {gate['tof_max_ns']}) ns")
    return gate


if __name__ == "__main__":
    sys.exit(main())
