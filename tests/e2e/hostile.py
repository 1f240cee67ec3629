#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A hostile sender for `dnd recv`: captures real `dnd send` streams, then
# replays them mutated against a fresh receiver per run and checks that the
# exit code, the disk and the reply agree. Driven by 70-hostile.sh.
"""Usage: hostile.py --dnd DND --dir DIR --methods m1,m2 --seeds 1,2 [-n N]"""

import argparse
import concurrent.futures
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

from hostile_stream import (KINDS, MSG, ST_OK, CaptureError, capture_all,
                            plan_for)

TIMEOUT = 1                     # the receivers' --timeout
HASH_RATE = 5e7                 # session_hash_wait: --timeout + bytes/rate
BUFFERS = ["1000", "4Ki", "64Ki", "200000", "1Mi"]
SANITIZER = re.compile(r"Sanitizer|runtime error:|dnd: BUG")


# A refused run of these kinds must name its cause in these words.
CAUSES = {"stall": "--timeout", "truncate": "closed the connection",
          "reset": "reset", "absent": "--timeout", "twice": "came twice"}

# Known receiver defects: a run of that kind (field, method, capture: any
# when left out) whose every problem matches the pattern is reported as
# "known" instead of failing, so the test passes today and still catches any
# other failure; when one no longer shows, the script says so and the entry
# should go.
KNOWN = []


def listening(port):
    want = ":%04X " % port
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                for line in fh:
                    cols = line.split()
                    if len(cols) > 3 and cols[3] == "0A" and \
                            (cols[1] + " ").endswith(want):
                        return True
        except OSError:
            pass
    return False


def free_port(rng):
    for _ in range(100):
        port = rng.randint(20000, 32000)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            s.close()
    raise RuntimeError("no free port")


class Run:
    """One receiver, one mutated stream, and the verdict on both."""

    def __init__(self, cfg, caps, seed, method, idx):
        self.cfg, self.seed, self.method, self.idx = cfg, seed, method, idx
        self.rng = random.Random("%d/%s/%d" % (seed, method, idx))
        self.kind = KINDS[idx % len(KINDS)]
        if self.kind == "flip-seg":
            caps = [c for c in caps if c.segmented]
        elif self.kind in ("absent", "twice"):
            caps = [c for c in caps if len(c.streams) > 1]
        self.cap = self.rng.choice(caps)
        self.null = method == "null"
        self.plan = plan_for(self.kind, self.cap, self.rng, self.null)
        self.name = "s%d-%s-%d" % (seed, method, idx)
        self.dir = os.path.join(cfg.dir, self.name)
        self.target = "/dev/null" if self.null else os.path.join(self.dir,
                                                                 "dst")
        self.args = ["-m", method, "--timeout", str(TIMEOUT),
                     "-b", self.rng.choice(BUFFERS)]
        if self.rng.random() < 0.25:
            self.args += ["--sync", "stream"]
        self.exists = None
        if not self.null and self.rng.random() < 0.4:
            self.exists = self.rng.choice(["-t", "-o"])
            self.args.append(self.exists)
        self.problems, self.notes = [], []
        self.reply, self.rc, self.stall_secs = None, None, None
        self.stall_from = None
        self.proc = None

    def describe(self):
        return ("seed %d %s run %d: %s, %s on '%s' capture, recv %s" %
                (self.seed, self.method, self.idx, self.kind, self.plan.where,
                 self.cap.name, " ".join(self.args)))

    def problem(self, what):
        self.problems.append(what)

    def start(self):
        os.makedirs(self.dir)
        if self.exists:
            self.old = self.rng.randbytes(self.rng.randint(0, 400000))
            with open(self.target, "wb") as f:
                f.write(self.old)
        self.log = os.path.join(self.cfg.dir, self.name + ".log")
        for _ in range(5):
            self.port = free_port(self.rng)
            cmd = ["timeout", "-k", "2", str(self.cfg.limit), self.cfg.dnd,
                   "recv", "--bind", "127.0.0.1", "-p", str(self.port)] + \
                self.args + [self.target]
            with open(self.log, "w") as log:
                self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=log)
            self.cfg.track(self.proc)
            t_end = time.monotonic() + 10 + self.cfg.slack
            while time.monotonic() < t_end and self.proc.poll() is None:
                if listening(self.port):
                    return True
                time.sleep(0.01)
            if self.proc.poll() is None:
                self.problem("not listening after %.0f s" % (10 +
                                                            self.cfg.slack))
                return False
            if "cannot listen" not in self.stderr():
                self.problem("exited %d before it listened: %s" %
                             (self.proc.returncode, self.stderr()))
                return False
        self.problem("no port to listen on after 5 tries")
        return False

    def stderr(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def connect(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.settimeout(10 + self.cfg.slack)
        return s

    def send(self, s, data, chunks):
        """Sends data (in chunks when given); False when the peer went."""
        try:
            if chunks is None:
                s.sendall(data)
                return True
            p = 0
            for i, n in enumerate(chunks):
                s.sendall(data[p:p + n])
                p += n
                if i % 64 == 63:
                    time.sleep(0.0005)
            return True
        except OSError as e:
            self.notes.append("send: %s" % e)
            return False

    def stream(self, i, socks, ctl_sent):
        """Sends stream i as planned (stream 0 first says what the others
        join), then ends it the planned way. A thread's body."""
        p, start = self.plan, self.cap.start[i]
        data, chunks = p.datas[i], None
        end = p.cut if i == p.target else len(data)
        if i == p.target:
            if p.mode == "absent":
                return
            chunks = p.chunks
        if i and not ctl_sent.wait(10 + self.cfg.slack):
            return
        try:
            socks[i] = s = self.connect()
        except OSError as e:
            self.notes.append("connect stream %d: %s" % (i, e))
            return
        if i == 0 and chunks is None:
            ok = self.send(s, data[:min(start, end)], None)
            ctl_sent.set()
            ok = ok and self.send(s, data[min(start, end):end], None)
        else:
            ctl_sent.set()
            ok = self.send(s, data[:end], chunks)
        mode = p.mode if i == p.target else "full"
        if mode == "stall":
            self.stall_from = time.monotonic()
        elif mode == "reset":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                         struct.pack("ii", 1, 0))
            s.close()
            socks[i] = None
        elif ok:
            # A FIN; what the receiver says is read before closing, so that
            # closing with it unread sends no RST.
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError as e:
                self.notes.append("shutdown stream %d: %s" % (i, e))

    def read_reply(self, s):
        """The accept, then the reply: whatever comes until the end."""
        s.settimeout(10 + self.cfg.slack +
                     sum(map(len, self.plan.datas)) / HASH_RATE)
        buf = b""
        try:
            while len(buf) < 2 * MSG:
                b = s.recv(2 * MSG - len(buf))
                if not b:
                    break
                buf += b
        except OSError as e:
            self.notes.append("reply: %s" % e)
        for at in range(0, len(buf) - MSG + 1, MSG):
            if buf[at:at + 4] == b"DNDR":
                self.reply = struct.unpack(">4sHHQQ", buf[at:at + MSG])[1:]

    def stall(self):
        """Waits, with the stalled stream held open, for the receiver to
        give up; it may take --timeout and the hashing of what came."""
        allowed = TIMEOUT + sum(map(len, self.plan.datas)) / HASH_RATE + \
            self.cfg.slack
        try:
            self.proc.wait(timeout=allowed)
            self.stall_secs = time.monotonic() - self.stall_from
        except subprocess.TimeoutExpired:
            self.problem("still running %.1f s into a stall with "
                         "--timeout %d (hang)" % (allowed, TIMEOUT))

    def drive(self):
        """Every stream in its own thread, as dnd send does."""
        n = len(self.plan.datas)
        socks, ctl_sent = [None] * n, threading.Event()
        threads = [threading.Thread(target=self.stream,
                                    args=(i, socks, ctl_sent))
                   for i in range(n)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join(30 + self.cfg.slack)
            if any(t.is_alive() for t in threads):
                self.problem("a stream could not be sent in %d s" %
                             (30 + self.cfg.slack))
            if self.plan.mode == "stall" and self.stall_from is not None:
                self.stall()
            if socks[0] is not None:
                self.read_reply(socks[0])
        finally:
            for s in socks:
                if s is not None:
                    s.close()

    def finish(self):
        if self.proc is None:
            return
        try:
            self.rc = self.proc.wait(timeout=10 + self.cfg.slack)
        except subprocess.TimeoutExpired:
            self.problem("still running %d s after the peer was done (hang)"
                         % (10 + self.cfg.slack))
            self.proc.terminate()
            try:
                self.rc = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.rc = self.proc.wait()

    def check_disk(self):
        """0: the file is the source. Otherwise nothing new is left; -t
        leaves the old file exactly as it was, -o removes it unless it was
        refused before writing began."""
        if self.null:
            return
        left = sorted(os.listdir(self.dir))
        if self.rc == 0:
            if left != ["dst"]:
                self.problem("exit 0 but the directory holds %s" % left)
            elif self.content() != self.cap.payload:
                self.problem("exit 0 but %s differs from the source" %
                             self.target)
        elif self.exists == "-t":
            if left != ["dst"] or self.content() != self.old:
                self.problem("exit %s and -t did not leave the old file "
                             "as it was: %s" % (self.rc, left))
        elif self.exists == "-o" and left == ["dst"]:
            if self.content() != self.old:
                self.problem("exit %s and -o left %s neither removed nor "
                             "as it was" % (self.rc, self.target))
        elif left:
            self.problem("exit %s but left behind: %s" % (self.rc, left))

    def content(self):
        with open(self.target, "rb") as f:
            return f.read()

    def check(self):
        err = self.stderr()
        rc = self.rc
        if rc is not None and rc < 0:
            self.problem("killed by signal %s" % signal.Signals(-rc).name)
        elif rc == 124 or rc == 137:
            self.problem("killed by its own time limit (hang)")
        elif rc not in (0, 1):
            self.problem("exit %s (wanted 0 or 1)" % rc)
        if SANITIZER.search(err):
            self.problem("sanitizer report")
        if rc == 1 and "dnd: " not in err:
            self.problem("exit 1 without naming a cause")
        elif rc == 1 and CAUSES.get(self.kind, "dnd: ") not in err:
            self.problem("exit 1 without saying '%s'" % CAUSES[self.kind])
        if rc in (0, 1):
            self.check_disk()
        if self.reply and self.reply[0] == ST_OK and rc != 0:
            self.problem("replied ok to the sender, then exit %s" % rc)
        if rc == 0 and self.plan.mode == "full" and self.plan.expect == (0,) \
                and not (self.reply and self.reply[0] == ST_OK):
            self.problem("exit 0 without an ok reply (%s)" % (self.reply,))
        if self.stall_secs is not None and self.stall_secs < 0.9 * TIMEOUT:
            self.problem("gave up %.2f s into a stall, before its --timeout"
                         % self.stall_secs)
        if rc in (0, 1) and rc not in self.plan.expect:
            self.problem("exit %d, wanted %s" %
                         (rc, " or ".join(map(str, self.plan.expect))))

    def known(self):
        for k in KNOWN:
            if k["kind"] == self.kind and \
                    k.get("field", self.plan.field) == self.plan.field and \
                    k.get("method", self.method) == self.method and \
                    k.get("cap", self.cap.name) == self.cap.name and \
                    all(re.search(k["problems"], p) for p in self.problems):
                return k["reason"]
        return None

    def __call__(self):
        t0 = time.monotonic()
        try:
            if self.start():
                self.drive()
            self.finish()
            self.check()
        except Exception as e:          # a harness fault is a failure too
            self.problem("harness: %r" % e)
            if self.proc and self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.secs = time.monotonic() - t0
        if self.cfg.verbose:
            print("%5.2fs exit %s %s" % (self.secs, self.rc, self.describe()))
        return self


class Config:
    def __init__(self, a):
        self.dnd, self.dir = a.dnd, a.dir
        self.slack, self.verbose = a.slack, a.verbose
        self.limit = int(30 + a.slack)
        self._procs, self._lock = [], threading.Lock()

    def track(self, proc):
        with self._lock:
            self._procs.append(proc)

    def kill_all(self):
        for p in self._procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def report(runs):
    failed, known = 0, {}
    for r in runs:
        if not r.problems:
            continue
        reason = r.known()
        if reason:
            known.setdefault(reason, []).append(r)
            continue
        failed += 1
        print("FAIL %s\n     %s\n     replay: DND_HOSTILE_SEED=%d "
              "DND_HOSTILE_RANDOM=0 DND_HOSTILE_ONLY=%s:%d "
              "tests/e2e/70-hostile.sh\n     peer saw: %s\n"
              "     receiver said: %s" %
              (r.describe(), "; ".join(r.problems), r.seed, r.method, r.idx,
               "; ".join(r.notes) or "nothing odd",
               r.stderr().strip().replace("\n", "\n       ")[:2000]))
    for reason, rs in known.items():
        print("known defect (%d runs, e.g. %s): %s\n     %s" %
              (len(rs), rs[0].describe(), reason, "; ".join(rs[0].problems)))
    for reason in sorted({k["reason"] for k in KNOWN} - set(known)):
        print("note: known defect not seen in this run (if it is gone, "
              "drop it from KNOWN): %s" % reason)
    by = {}
    for r in runs:
        by.setdefault(r.method, [0, 0, 0])
        by[r.method][0] += 1
        by[r.method][1 if r.rc == 0 else 2] += 1
    for m, (n, ok, bad) in by.items():
        print("%-13s %3d runs: %3d landed, %3d refused" % (m, n, ok, bad))
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dnd", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--methods", required=True)
    ap.add_argument("--seeds", required=True)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--slack", type=float, default=5.0)
    ap.add_argument("--only", default="")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    cfg = Config(a)
    try:
        caps = capture_all(a.dnd, a.dir)
    except CaptureError as e:
        print(e)
        return 2
    print("captures: " + ", ".join(c.describe() for c in caps))
    runs = []
    for seed in map(int, a.seeds.split(",")):
        for m in a.methods.split(","):
            for i in range(a.n):
                if a.only and a.only != "%s:%d" % (m, i):
                    continue
                runs.append(Run(cfg, caps, seed, m, i))
    t0 = time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            done = list(ex.map(lambda r: r(), runs))
    finally:
        cfg.kill_all()
    failed = report(done)
    print("hostile: %d runs in %.1f s, %d failed" %
          (len(done), time.monotonic() - t0, failed))
    return 1 if failed or not done else 0


if __name__ == "__main__":
    sys.exit(main())
