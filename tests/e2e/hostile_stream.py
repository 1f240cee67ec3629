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
import sys

# Protocol v2 (src/core/proto.h), one stream: header, plan, join, payload
# (a length, or segments), trailer; the receiver answers the header with an
# accept and the trailer with a reply.
HDR = 48
MSG = 24                        # accept, plan, trailer, reply
JOIN = 32
CTL = HDR + MSG + JOIN          # where the payload starts
SEG = 8
HF_SEGMENTED = 1
TF_HASH = 1
ST_OK = 0

# Mutation kinds, in the order each method's runs walk through them.
KINDS = ["control", "flip-hdr", "flip-payload", "flip-trailer", "truncate",
         "tiny", "stall", "reset", "garbage", "withheld", "flip-seg",
         "flip-ctl"]


class Capture:
    """One captured stream, its structure and the payload it carries."""

    def __init__(self, name, data, payload):
        self.name, self.data, self.payload = name, bytes(data), payload
        magic, _, flags, length = struct.unpack(">4sHHQ", self.data[:16])
        assert magic == b"DNDH", name
        assert self.data[HDR:HDR + 4] == b"DNDP", name
        assert self.data[HDR + MSG:HDR + MSG + 4] == b"DNDJ", name
        self.segmented = bool(flags & HF_SEGMENTED)
        self.segs = []          # offsets of the segment headers
        p = CTL
        if self.segmented:
            while True:
                self.segs.append(p)
                (n,) = struct.unpack(">Q", self.data[p:p + SEG])
                p += SEG + n
                if n == 0:
                    break
        else:
            p += length
        self.trailer = p
        assert p + MSG == len(self.data), name
        magic, _, tflags = struct.unpack(">4sHH", self.data[p:p + 8])
        assert magic == b"DNDT" and tflags & TF_HASH, name
        self.bounds = sorted({0, HDR, HDR + MSG, CTL, p, len(self.data)} |
                             set(self.segs) | {s + SEG for s in self.segs})


class Rx:
    """Reads a capture off a socket exactly as far as asked."""

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


def run_sender(args, dnd, tmp, name, feed=None):
    """Runs `dnd send ARGS` into a capturing listener; returns the stream.

    feed(proc, rx) drives a pipe source in lockstep with the capture."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    ls.settimeout(20)
    port = ls.getsockname()[1]
    log = open(os.path.join(tmp, "capture-%s.log" % name), "w+")
    cmd = ["timeout", "-k", "2", "30", dnd, "send", "-c", "127.0.0.1",
           "-p", str(port), "--timeout", "10"] + args
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if feed else
                            subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        conn, _ = ls.accept()
        conn.settimeout(20)
        rx = Rx(conn)
        rx.need(HDR)
        conn.sendall(struct.pack(">4sHHQQ", b"DNDA", ST_OK, 0, 0, 0))
        rx.need(CTL)
        if feed:
            feed(proc, rx)
        else:
            rx.need(CTL + rx.u64(8) + MSG)
        end = len(rx.data) - MSG
        _, _, flags, nbytes, h = struct.unpack(">4sHHQQ", rx.data[end:])
        conn.sendall(struct.pack(">4sHHQQ", b"DNDR", ST_OK, flags, nbytes,
                                 h))
        conn.settimeout(5)
        extra = conn.recv(1)
        conn.close()
        rc = proc.wait(timeout=20)
    finally:
        ls.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log.seek(0)
    if rc != 0 or extra:
        sys.exit("capture %s: dnd send exited %d (extra bytes %r): %s" %
                 (name, rc, extra, log.read()))
    return rx.data


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
    """The streams every run picks from; contents fixed, so runs replay."""
    rng = random.Random("dnd-hostile-captures")
    caps = []
    for name, size in (("small", 5000), ("big", 3 * 1024 * 1024 + 4097)):
        path = os.path.join(tmp, name)
        body = rng.randbytes(size)
        with open(path, "wb") as f:
            f.write(body)
        data = run_sender(["-m", "rw", path], dnd, tmp, name)
        caps.append(Capture(name, data, body))
    data = run_sender(["-m", "rw", "-l", "1Mi", "/dev/zero"], dnd, tmp, "zero")
    caps.append(Capture("zero", data, bytes(1 << 20)))
    sizes = [rng.choice([1, 7, 512, 4096, rng.randint(1, 4096)])
             for _ in range(60)]
    chunks = [rng.randbytes(n) for n in sizes]
    data = run_sender(["-m", "rw", "-"], dnd, tmp, "pipe", feed_pipe(chunks))
    caps.append(Capture("pipe", data, b"".join(chunks)))
    return caps


class Plan:
    """What one run sends and how it ends, and what the receiver may do."""

    def __init__(self, data, mode="full", cut=None, expect=(1,), where=""):
        self.data, self.mode, self.expect = data, mode, expect
        self.where = where
        self.cut = len(data) if cut is None else cut
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


def flip(cap, rng, lo, hi):
    pos, bit = rng.randrange(lo, hi), rng.randrange(8)
    data = bytearray(cap.data)
    data[pos] ^= 1 << bit
    return data, pos, bit


def plan_flip(kind, cap, rng, null):
    """Bit flips. Where the receiver cannot tell (no hash at a /dev/null
    sink) 0 is allowed; everywhere else the run must fail."""
    if kind == "flip-hdr":
        data, pos, bit = flip(cap, rng, 0, HDR)
        p = Plan(data)
        p.field = field_of(HDR_FIELDS, pos)
        if p.field == "ident":
            # The source's identity matters only to --resume.
            p.expect = (0, 1)
    elif kind == "flip-ctl":
        data, pos, bit = flip(cap, rng, HDR, CTL)
        p = Plan(data)
        if pos < HDR + MSG:
            p.field = "plan " + field_of(PLAN_FIELDS, pos - HDR)
            if pos == HDR + 7 and bit == 0:
                # "The kept prefix differs" with nothing kept: starting
                # over from 0 is what happens anyway.
                p.expect = (0, 1)
        else:
            p.field = "join " + field_of(JOIN_FIELDS, pos - HDR - MSG)
    elif kind == "flip-seg":
        s = rng.choice(cap.segs)
        data, pos, bit = flip(cap, rng, s, s + SEG)
        p = Plan(data)
        p.field = "segment %d of %d" % (cap.segs.index(s) + 1, len(cap.segs))
    elif kind == "flip-payload":
        data, pos, bit = flip(cap, rng, CTL, cap.trailer)
        p = Plan(data, expect=(0, 1) if null else (1,))
        p.field = "payload"
    else:
        data, pos, bit = flip(cap, rng, cap.trailer, len(cap.data))
        p = Plan(data)
        p.field = field_of(END_FIELDS, pos - cap.trailer)
        if p.field == "flags" and pos == cap.trailer + 7 and bit == 0:
            # The hash withheld: see "withheld" below.
            p.field = "hash flag"
            p.expect = (0, 1) if null else (1,)
        elif p.field == "hash" and null:
            p.expect = (0, 1)
    p.where = "bit %d of byte %d (%s)" % (bit, pos, p.field)
    return p


def tiny_chunks(cap, rng):
    """Writes of 1..7 bytes near every boundary (header, segment headers,
    trailer), larger ones in between, so each read sees a piece."""
    sizes, p = [], 0
    while p < len(cap.data):
        near = any(abs(p - b) < 256 for b in cap.bounds)
        n = rng.randint(1, 7) if near else rng.randint(1, 1 << 16)
        nb = min((b for b in cap.bounds if b >= p + 256),
                 default=len(cap.data))
        if not near:
            n = min(n, nb - 256 - p)
        sizes.append(max(1, min(n, len(cap.data) - p)))
        p += sizes[-1]
    return sizes


def plan_for(kind, cap, rng, null):
    n = len(cap.data)
    if kind == "control":
        return Plan(cap.data, expect=(0,), where="unchanged")
    if kind.startswith("flip-"):
        return plan_flip(kind, cap, rng, null)
    if kind == "truncate":
        cut = rng.randrange(n)
        return Plan(cap.data, "close", cut, where="FIN after %d of %d" %
                    (cut, n))
    if kind == "tiny":
        p = Plan(cap.data, expect=(0,))
        p.chunks = tiny_chunks(cap, rng)
        p.where = "%d writes" % len(p.chunks)
        return p
    if kind == "stall":
        cut = rng.randrange(n)
        return Plan(cap.data, "stall", cut, where="stall after %d of %d" %
                    (cut, n))
    if kind == "reset":
        # Mostly inside the stream (must fail); sometimes right after its
        # last byte, where landing or not are both right if disk agrees.
        cut = n if rng.random() < 0.25 else rng.randrange(n)
        p = Plan(cap.data, "reset", cut, expect=(1,) if cut < n else (0, 1))
        p.where = "RST after %d of %d" % (cut, n)
        p.field = "end" if cut == n else "inside"
        return p
    if kind == "garbage":
        # Bytes after the trailer are malformed: nothing lands.
        g = rng.randbytes(rng.choice([1, 23, 24, 4096, 100000]))
        return Plan(cap.data + g, where="%d bytes after the trailer" % len(g))
    if kind == "withheld":
        # A receiver that verifies lands nothing without the sender's hash;
        # /dev/null cannot verify, so there it is only counted.
        data = bytearray(cap.data)
        t = cap.trailer
        data[t + 7] &= ~TF_HASH & 0xff
        data[t + 16:t + 24] = bytes(8)
        return Plan(data, expect=(0, 1) if null else (1,),
                    where="trailer without its hash")
    raise ValueError(kind)
