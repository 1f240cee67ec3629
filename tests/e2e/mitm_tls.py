#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A man in the middle for dnd's keyed tests (issue 21).

    mitm_tls.py [--conns N] [--timeout SEC] LPORT THOST TPORT MODE [ARG...]

Accepts up to N clients (default 1) on 127.0.0.1:LPORT and relays each to
THOST:TPORT; what it does to the client->server bytes depends on MODE:
  flip OFFSET      flips every bit of the byte at OFFSET
  twin OFFSET FILE overwrites the bytes at OFFSET with FILE's (1 KiB)
  record FILE      passes everything; saves the bytes in FILE
  replay FILE      listens for nobody: connects to the server and sends
                   FILE's bytes (an earlier session's), then reads its answer
  cut              drops the client's last TLS record, its close_notify, and
                   ends the TCP stream without it: after the 8-byte cleartext
                   preamble it parses TLS records (5-byte header: type,
                   version, length) and passes each whole one until an
                   encrypted record (type 23) of 19 bytes: an alert under
                   AES-GCM or ChaCha20-Poly1305 (2 bytes, the inner type, a
                   16-byte tag). That one and all after it are dropped and
                   the server gets a FIN instead. (Holding each record back
                   until the next one comes would stall the handshake,
                   where the client waits on the server.)
  capture FILE     passes everything; saves both directions in FILE
With more than one connection, record and capture write FILE.1, FILE.2...
for the later ones, and flip and twin change each connection at OFFSET.
Prints "ready" once it listens and one line per deed ("flipped", "twinned",
"cut", "replayed N"). Exits when every connection ended, or after --timeout
seconds (default 30) with status 124.
"""
import os
import select
import socket
import sys
import threading
import time

PREAMBLE = 8
ALERT_LEN = 19


def say(msg):
    print(msg, flush=True)


class Relay:
    """One client and its server connection."""

    def __init__(self, cli, srv, mode, args, idx, deadline):
        self.cli, self.srv = cli, srv
        self.mode, self.args, self.idx = mode, args, idx
        self.deadline = deadline
        self.off = 0            # client->server bytes seen so far
        self.out = None
        self.held = b''         # cut: the alert that never goes
        self.tls = b''          # cut: the records not yet whole
        if mode in ('record', 'capture'):
            path = args[0] + ('.%d' % idx if idx else '')
            self.out = open(path, 'wb')
        if mode == 'twin':
            with open(args[1], 'rb') as f:
                self.patch = f.read()
        elif mode == 'flip':
            self.patch = None

    def c2s(self, data):
        """The client's bytes as the server is to see them."""
        start, self.off = self.off, self.off + len(data)
        if self.mode == 'flip':
            at = int(self.args[0]) - start
            if 0 <= at < len(data):
                data = data[:at] + bytes([data[at] ^ 0xff]) + data[at + 1:]
                say('flipped')
        elif self.mode == 'twin':
            at = int(self.args[0])
            lo, hi = max(at, start), min(at + len(self.patch), self.off)
            if lo < hi:
                data = (data[:lo - start] + self.patch[lo - at:hi - at] +
                        data[hi - start:])
                if hi == at + len(self.patch):
                    say('twinned')
        elif self.mode == 'cut':
            return self.cut(start, data)
        if self.out:
            self.out.write(data)
        return data

    def cut(self, start, data):
        """Passes whole records up to the client's first alert."""
        if start < PREAMBLE:
            n = min(PREAMBLE - start, len(data))
            head, data = data[:n], data[n:]
        else:
            head = b''
        self.tls += data
        out = []
        while len(self.tls) >= 5 and not self.held:
            end = 5 + int.from_bytes(self.tls[3:5], 'big')
            if len(self.tls) < end:
                break
            rec, self.tls = self.tls[:end], self.tls[end:]
            if rec[0] == 23 and end == 5 + ALERT_LEN:
                self.held = rec
            else:
                out.append(rec)
        return head + b''.join(out)

    def alert_held(self):
        return self.mode == 'cut' and bool(self.held)

    def run(self):
        socks = [self.cli, self.srv]
        open_ = {self.cli: True, self.srv: True}
        peer = {self.cli: self.srv, self.srv: self.cli}
        cut = False
        while any(open_.values()):
            left = self.deadline - time.monotonic()
            if left <= 0:
                return False
            r, _, _ = select.select([s for s in socks if open_[s]], [], [],
                                    min(left, 1.0))
            for s in r:
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b''
                if not data:
                    open_[s] = False
                    if s is self.cli and self.mode == 'cut' and not cut:
                        cut = self.drop()
                    try:
                        peer[s].shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    continue
                if s is self.cli:
                    if cut:
                        continue
                    data = self.c2s(data)
                elif self.out and self.mode == 'capture':
                    self.out.write(data)
                try:
                    peer[s].sendall(data)
                except OSError:
                    open_[s] = False
                if s is self.cli and self.alert_held():
                    cut = self.drop()
        return True

    def drop(self):
        """cut: the held record never goes; the server sees a FIN."""
        say('cut %d' % len(self.held))
        try:
            self.srv.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        return True

    def close(self):
        if self.out:
            self.out.close()
        self.cli.close()
        self.srv.close()


def replay(thost, tport, path, deadline):
    with open(path, 'rb') as f:
        data = f.read()
    s = socket.create_connection((thost, tport), timeout=5)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    got = 0
    while time.monotonic() < deadline:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            b = s.recv(65536)
        except OSError:
            break
        if not b:
            break
        got += len(b)
    s.close()
    say('replayed %d' % len(data))
    return 0


def main(argv):
    conns, timeout = 1, 30.0
    while argv and argv[0].startswith('--'):
        opt, val, argv = argv[0], argv[1], argv[2:]
        if opt == '--conns':
            conns = int(val)
        elif opt == '--timeout':
            timeout = float(val)
        else:
            sys.exit('mitm_tls.py: unknown option ' + opt)
    need = {'flip': 1, 'twin': 2, 'record': 1, 'replay': 1, 'cut': 0,
            'capture': 1}
    if len(argv) < 4 or argv[3] not in need or \
            len(argv) != 4 + need[argv[3]]:
        sys.exit(__doc__)
    lport, thost, tport, mode, args = (int(argv[0]), argv[1], int(argv[2]),
                                       argv[3], argv[4:])
    deadline = time.monotonic() + timeout
    if mode == 'replay':
        return replay(thost, tport, args[0], deadline)

    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(('127.0.0.1', lport))
    lsock.listen(conns)
    say('ready')
    threads, done = [], []
    for idx in range(conns):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([lsock], [], [], left)[0]:
            break
        cli, _ = lsock.accept()
        srv = socket.create_connection((thost, tport), timeout=5)
        cli.settimeout(timeout)
        srv.settimeout(timeout)
        relay = Relay(cli, srv, mode, args, idx, deadline)

        def one(r=relay):
            done.append(r.run())
            r.close()
        t = threading.Thread(target=one, daemon=True)
        t.start()
        threads.append(t)
    lsock.close()
    for t in threads:
        t.join(max(0, deadline - time.monotonic()))
    if len(done) < conns or not all(done):
        say('timeout')
        os._exit(124)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
