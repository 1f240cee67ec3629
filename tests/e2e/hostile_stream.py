#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The streams hostile.py replays: real `dnd send` output captured by a
# listener that plays the receiver's part, and the mutations made of them.
"""Captures of dnd's wire protocol and their mutations, for hostile.py."""

import os
import random
import socket
import struct
import subprocess
import threading

# Protocol v5 (src/core/proto.h). Stream 0: header, plan, join, payload (a
# range, or segments), trailer, and with -P N > 1 and a hash the ranges'
# hashes (RANGES); the receiver answers the header with an accept and the
# trailer with a reply. Stream i > 0 (-P): join, its range.
HDR = 48
MSG = 24                        # accept, plan, trailer, reply
JOIN = 32
CTL = HDR + MSG + JOIN          # where stream 0's payload starts
SEG = 8
RANGES_HEAD = 8                 # "DNDK", u16 N, u16 zero; then N + 1 u64
HF_SEGMENTED = 1
AF_VERIFY = 2                   # the receiver compares: the sender hashes
TF_HASH = 1
ST_OK = 0

# Mutation kinds, in the order each method's runs walk through them;
# "absent" and "twice" need a capture of several streams.
KINDS = ["control", "flip-hdr", "flip-payload", "flip-trailer", "truncate",
         "tiny", "stall", "reset", "garbage", "withheld", "flip-seg",
         "flip-ctl", "absent", "twice"]


class CaptureError(Exception):
    """A real dnd send could not be captured: the test cannot run."""


class Capture:
    """One captured transfer: its streams' bytes, their structure, and the
    payload they carry."""

    def __init__(self, name, streams, payload):
        self.name, self.payload = name, payload
        self.streams = [bytes(s) for s in streams]
        s0 = self.streams[0]
        magic, _, flags, length = struct.unpack(">4sHHQ", s0[:16])
        assert magic == b"DNDH", name
        assert s0[HDR:HDR + 4] == b"DNDP", name
        assert s0[HDR + MSG:HDR + MSG + 4] == b"DNDJ", name
        self.segmented = bool(flags & HF_SEGMENTED)
        self.segs = []          # offsets of the segment headers
        self.start = [CTL] + [JOIN] * (len(streams) - 1)
        p = CTL
        if self.segmented:
            while True:
                self.segs.append(p)
                (n,) = struct.unpack(">Q", s0[p:p + SEG])
                p += SEG + n
                if n == 0:
                    break
        else:
            p += struct.unpack(">Q", s0[CTL - 8:CTL])[0]
        self.trailer = p
        magic, _, tflags = struct.unpack(">4sHH", s0[p:p + 8])
        assert magic == b"DNDT" and tflags & TF_HASH, name
        self.ranges = p + MSG   # where RANGES starts (-P N > 1)
        if len(self.streams) > 1:
            magic, n, z = struct.unpack(">4sHH", s0[p + MSG:p + MSG + 8])
            assert magic == b"DNDK" and n == len(self.streams) and z == 0, name
            p += RANGES_HEAD + 8 * (n + 1)
        assert p + MSG == len(s0), name
        for s in self.streams[1:]:
            assert s[:4] == b"DNDJ", name
            assert JOIN + struct.unpack(">Q", s[24:32])[0] == len(s), name

    @classmethod
    def parse(cls, name, streams, payload):
        """A Capture, or CaptureError when the bytes are not the protocol
        this script knows (it follows src/core/proto.h)."""
        try:
            return cls(name, streams, payload)
        except (AssertionError, struct.error, IndexError) as e:
            raise CaptureError("capture %s: not the protocol hostile_stream"
                               ".py knows (%r); update it to proto.h" %
                               (name, e))

    def bounds(self, i):
        """Where stream i changes from one message to the next."""
        s = self.streams[i]
        b = {0, self.start[i], len(s)}
        if i == 0:
            b |= {HDR, HDR + MSG, self.trailer, self.ranges}
            b |= set(self.segs) | {x + SEG for x in self.segs}
        return sorted(b)

    def describe(self):
        return "%s %d bytes%s" % (
            self.name, sum(map(len, self.streams)),
            " in %d segments" % (len(self.segs) - 1) if self.segmented else
            " over %d streams" % len(self.streams) if len(self.streams) > 1
            else "")


class Rx:
    """Reads one stream off a socket exactly as far as asked."""

    def __init__(self, conn):
        self.conn, self.data = conn, bytearray()

    def need(self, n):
        while len(self.data) < n:
            b = self.conn.recv(1 << 16)
            if not b:
                raise EOFError("sender closed after %d bytes" %
                               len(self.data))
            self.data += b

    def u64(self, at):
        self.need(at + 8)
        return struct.unpack(">Q", self.data[at:at + 8])[0]

    def rest(self, errs):
        """Everything until the sender's FIN (a thread's body)."""
        try:
            while True:
                b = self.conn.recv(1 << 16)
                if not b:
                    return
                self.data += b
        except OSError as e:
            errs.append(e)


def capture_streams(ls, proc, feed):
    """Plays the receiver's part; returns every stream's bytes."""
    conn, _ = ls.accept()
    conns, rxs, threads, errs = [conn], [Rx(conn)], [], []
    conn.settimeout(20)
    rx = rxs[0]
    rx.need(HDR)
    conn.sendall(struct.pack(">4sHHQQ", b"DNDA", ST_OK, AF_VERIFY, 0, 0))
    rx.need(CTL)
    for _ in range(1, struct.unpack(">H", rx.data[32:34])[0]):
        c, _ = ls.accept()
        c.settimeout(20)
        conns.append(c)
        rxs.append(Rx(c))
        threads.append(threading.Thread(target=rxs[-1].rest, args=(errs,)))
        threads[-1].start()
    try:
        if feed:
            feed(proc, rx)
            end = len(rx.data) - MSG
        else:
            end = CTL + rx.u64(CTL - 8)     # the trailer
            rx.need(end + MSG)
        if len(conns) > 1:
            rx.need(end + MSG + RANGES_HEAD + 8 * (len(conns) + 1))
        _, _, flags, nbytes, h = struct.unpack(">4sHHQQ",
                                               rx.data[end:end + MSG])
        conn.sendall(struct.pack(">4sHHQQ", b"DNDR", ST_OK, flags, nbytes,
                                 h))
        conn.settimeout(5)
        if conn.recv(1):
            raise ValueError("bytes after the trailer")
    finally:
        for t in threads:
            t.join(20)
        for c in conns:
            c.close()
    if errs or any(t.is_alive() for t in threads):
        raise ValueError("a stream did not end: %s" % errs)
    # The others in the order of their index, whatever order they came in.
    rxs[1:] = sorted(rxs[1:], key=lambda r: r.data[4:6])
    return [r.data for r in rxs]


def run_sender(args, dnd, tmp, name, feed=None):
    """Runs `dnd send ARGS` into a capturing listener; returns the streams.

    feed(proc, rx) drives a pipe source in lockstep with the capture."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    ls.settimeout(20)
    port = ls.getsockname()[1]
    log = open(os.path.join(tmp, "capture-%s.log" % name), "w+")
    cmd = ["timeout", "-k", "2", "30", dnd, "send", "-c", "127.0.0.1",
           "-p", str(port), "--timeout", "10"] + args
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if feed else
                            subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        streams = capture_streams(ls, proc, feed)
        rc = proc.wait(timeout=20)
    except (OSError, ValueError, EOFError, subprocess.TimeoutExpired) as e:
        streams, rc = None, "error: %r" % e
    finally:
        ls.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log.seek(0)
    if rc != 0:
        raise CaptureError("capture %s: dnd send %s: %s" % (
            name, "exited %d" % rc if isinstance(rc, int) else rc,
            log.read()))
    return streams


def feed_pipe(chunks):
    """A pipe source: one chunk (<= PIPE_BUF, so written whole) at a time,
    the next only once the last arrived, so each is exactly one segment."""

    def feed(proc, rx):
        p, got, fed = CTL, 0, 0
        for c in chunks:
            proc.stdin.write(c)
            proc.stdin.flush()
            fed += len(c)
            while got < fed:
                n = rx.u64(p)
                p += SEG + n
                rx.need(p)
                got += n
        proc.stdin.close()
        if rx.u64(p) != 0:
            raise ValueError("no end-of-segments marker")
        rx.need(p + SEG + MSG)
    return feed


def capture_all(dnd, tmp):
    """The transfers every run picks from; contents fixed, so runs replay
    (how -P splits a file depends on its size alone)."""
    rng = random.Random("dnd-hostile-captures")
    caps = []
    for name, size, par in (("small", 5000, "1"),
                            ("big", 3 * 1024 * 1024 + 4097, "1"),
                            ("big-P2", 3 * 1024 * 1024 + 4097, "2"),
                            ("small-P3", 5000, "3")):
        path = os.path.join(tmp, name)
        body = rng.randbytes(size)
        with open(path, "wb") as f:
            f.write(body)
        streams = run_sender(["-m", "rw", "-P", par, path], dnd, tmp, name)
        caps.append(Capture.parse(name, streams, body))
    streams = run_sender(["-m", "rw", "-l", "1Mi", "/dev/zero"], dnd, tmp,
                         "zero")
    caps.append(Capture.parse("zero", streams, bytes(1 << 20)))
    sizes = [rng.choice([1, 7, 512, 4096, rng.randint(1, 4096)])
             for _ in range(60)]
    chunks = [rng.randbytes(n) for n in sizes]
    streams = run_sender(["-m", "rw", "-"], dnd, tmp, "pipe",
                         feed_pipe(chunks))
    caps.append(Capture.parse("pipe", streams, b"".join(chunks)))
    return caps


class Plan:
    """What one run sends on each stream, how the mutated one (target)
    ends, and what the receiver may do about it."""

    def __init__(self, cap, target=0, mode="full", cut=None, expect=(1,),
                 where=""):
        self.datas = list(cap.streams)
        self.target, self.mode, self.expect = target, mode, expect
        self.where = where
        self.cut = len(self.datas[target]) if cut is None else cut
        self.chunks = None
        self.field = None


HDR_FIELDS = [(4, "magic"), (6, "version"), (8, "flags"), (16, "length"),
              (24, "xfer_id"), (32, "ident"), (34, "streams"),
              (48, "reserved")]
PLAN_FIELDS = [(4, "magic"), (6, "reserved"), (8, "flags"), (16, "start"),
               (24, "reserved")]
JOIN_FIELDS = [(4, "magic"), (6, "index"), (8, "streams"), (16, "xfer_id"),
               (24, "offset"), (32, "len")]
END_FIELDS = [(4, "magic"), (6, "status"), (8, "flags"), (16, "bytes"),
              (24, "hash")]


def field_of(fields, off):
    for end, name in fields:
        if off < end:
            return name
    raise ValueError(off)


def flip(p, rng, lo, hi):
    """Flips one bit of the target stream in [lo, hi)."""
    pos, bit = rng.randrange(lo, hi), rng.randrange(8)
    data = bytearray(p.datas[p.target])
    data[pos] ^= 1 << bit
    p.datas[p.target] = bytes(data)
    return pos, bit


def with_payload(cap, rng):
    """A stream that carries payload bytes."""
    return rng.choice([i for i, s in enumerate(cap.streams)
                       if (cap.trailer if i == 0 else len(s)) > cap.start[i]])


def flip_ctl(cap, rng):
    """A bit of stream 0's plan or any stream's join."""
    t = rng.randrange(len(cap.streams))
    p = Plan(cap, t)
    pos, bit = flip(p, rng, HDR if t == 0 else 0, cap.start[t])
    if t == 0 and pos < HDR + MSG:
        p.field = "plan " + field_of(PLAN_FIELDS, pos - HDR)
        if pos == HDR + 7 and bit in (0, 1):
            # "The kept prefix differs" with nothing kept: starting over
            # from 0 is what happens anyway. "ACK at once" (DND_PF_ACKNOW)
            # changes only when the receiver ACKs.
            p.expect = (0, 1)
    else:
        p.field = "join " + field_of(JOIN_FIELDS, pos - cap.start[t] + JOIN)
    return p, pos, bit


def plan_flip(kind, cap, rng, null):
    """Bit flips. Where the receiver cannot tell (no hash at a /dev/null
    sink) 0 is allowed; everywhere else the run must fail."""
    if kind == "flip-ctl":
        p, pos, bit = flip_ctl(cap, rng)
    elif kind == "flip-hdr":
        p = Plan(cap)
        pos, bit = flip(p, rng, 0, HDR)
        p.field = field_of(HDR_FIELDS, pos)
        if p.field == "ident":
            # The source's identity matters only to --resume.
            p.expect = (0, 1)
    elif kind == "flip-seg":
        p = Plan(cap)
        s = rng.choice(cap.segs)
        pos, bit = flip(p, rng, s, s + SEG)
        p.field = "segment %d of %d" % (cap.segs.index(s) + 1, len(cap.segs))
    elif kind == "flip-payload":
        t = with_payload(cap, rng)
        p = Plan(cap, t, expect=(0, 1) if null else (1,))
        pos, bit = flip(p, rng, cap.start[t],
                        cap.trailer if t == 0 else len(cap.streams[t]))
        p.field = "payload"
    else:
        p = Plan(cap)
        pos, bit = flip(p, rng, cap.trailer, cap.trailer + MSG)
        p.field = field_of(END_FIELDS, pos - cap.trailer)
        if p.field == "flags" and pos == cap.trailer + 7 and bit == 0:
            # The hash withheld: see "withheld" below.
            p.field = "hash flag"
            p.expect = (0, 1) if null else (1,)
        elif p.field == "hash" and null:
            p.expect = (0, 1)
    p.where = "bit %d of byte %d (%s) of stream %d" % (bit, pos, p.field,
                                                      p.target)
    return p


def tiny_chunks(cap, t, rng):
    """Writes of 1..7 bytes near every boundary of stream t (header, plan,
    join, segment headers, trailer), larger ones in between."""
    bounds, n = cap.bounds(t), len(cap.streams[t])
    sizes, p = [], 0
    while p < n:
        near = any(abs(p - b) < 256 for b in bounds)
        k = rng.randint(1, 7) if near else rng.randint(1, 1 << 16)
        if not near:
            nb = min((b for b in bounds if b >= p + 256), default=n)
            k = min(k, nb - 256 - p)
        sizes.append(max(1, min(k, n - p)))
        p += sizes[-1]
    return sizes


def plan_end(kind, cap, rng, null):
    """The mutations of how a stream ends, and of the trailer's end."""
    t = rng.randrange(len(cap.streams))
    n = len(cap.streams[t])
    if kind in ("truncate", "stall"):
        cut = rng.randrange(n)
        mode = "close" if kind == "truncate" else "stall"
        return Plan(cap, t, mode, cut, where="%s after %d of %d on stream %d"
                    % ("FIN" if mode == "close" else "stall", cut, n, t))
    if kind == "reset":
        # Mostly inside the stream (must fail); sometimes right after the
        # last byte, where landing or not are both right if disk agrees.
        cut = n if rng.random() < 0.25 else rng.randrange(n)
        p = Plan(cap, t, "reset", cut, expect=(1,) if cut < n else (0, 1))
        p.where = "RST after %d of %d on stream %d" % (cut, n, t)
        p.field = "end" if cut == n else "inside"
        return p
    if kind == "garbage":
        # Bytes after the trailer are malformed: nothing lands.
        p = Plan(cap)
        g = rng.randbytes(rng.choice([1, 23, 24, 4096, 100000]))
        p.datas[0] += g
        p.cut = len(p.datas[0])
        p.where = "%d bytes after the trailer" % len(g)
        return p
    # withheld: a receiver that verifies lands nothing without the
    # sender's hash; /dev/null cannot verify, so there it is only counted.
    # A sender with no hash sends no ranges' hashes either.
    p = Plan(cap, expect=(0, 1) if null else (1,),
             where="trailer without its hash")
    t = cap.trailer
    d = bytearray(p.datas[0][:t + MSG])
    d[t + 7] &= ~TF_HASH & 0xff
    d[t + 16:t + 24] = bytes(8)
    p.datas[0] = bytes(d)
    p.cut = len(p.datas[0])
    return p


def plan_for(kind, cap, rng, null):
    if kind == "control":
        return Plan(cap, expect=(0,), where="unchanged")
    if kind.startswith("flip-"):
        return plan_flip(kind, cap, rng, null)
    if kind == "tiny":
        t = rng.randrange(len(cap.streams))
        p = Plan(cap, t, expect=(0,))
        p.chunks = tiny_chunks(cap, t, rng)
        p.where = "%d writes on stream %d" % (len(p.chunks), t)
        return p
    if kind == "absent":
        # A stream that never comes: the receiver waits --timeout for it.
        t = rng.randrange(1, len(cap.streams))
        return Plan(cap, t, "absent", 0, where="stream %d never connects" % t)
    if kind == "twice":
        # Another connection claims to be a stream that already joined.
        t = rng.randrange(1, len(cap.streams))
        p = Plan(cap, t, where="stream %d sends stream 0's join" % t)
        p.datas[t] = cap.streams[0][HDR + MSG:CTL] + cap.streams[t][JOIN:]
        p.cut = len(p.datas[t])
        return p
    return plan_end(kind, cap, rng, null)
