#!/usr/bin/python3
"""attn serve under hostile connections (issue 50; docs/serve.md has the figures and the command).

32 clients translate (bench_serve_load beside --attn: one keep-alive connection each, the next
request sent when the last is answered) for --seconds on a quiet server, then again while --slow
slow-loris connections each send one byte of a never-ending header a second and --idle connections
sit open without a byte (both reconnect when the server closes them, as an attacker would). Prints
the answers, errors and p50/p99 of both runs, their ratio, the slowest of the fresh-connection
GET /health probes made during the hostile run, and how often the server closed a hostile
connection (its deadlines and limits). Loopback only; every loop is bounded in time.

    /usr/bin/python3 bench/serve_hostile.py --attn build/attn --model DIR [--slow 1000] [--idle 300]
        [--clients 32] [--seconds 10] [--server-flags "--max-connections-per-client 5000"]
"""
import argparse
import errno
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_bench  # noqa: E402


class Hostile:
    """--slow trickling and --idle silent connections, kept at their counts by one thread."""

    def __init__(self, port, slow, idle):
        self.port, self.slow, self.idle = port, slow, idle
        self.header = b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
        self.socks = []  # [socket, bytes sent, trickles]
        self.reconnects = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)

    def connect(self):
        s = socket.socket()
        s.settimeout(5)
        try:
            s.connect(("127.0.0.1", self.port))
        except OSError:
            s.close()
            return None
        s.setblocking(False)
        return s

    def closed(self, s):
        try:
            return s.recv(1) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def run(self):
        for i in range(self.slow + self.idle):
            self.socks.append([self.connect(), 0, i < self.slow])
        while not self.stop.is_set():  # once a second: a byte on each slow one, the closed reopened
            for entry in self.socks:
                s, sent, trickles = entry
                if s is None or self.closed(s):
                    if s is not None:
                        s.close()
                        self.reconnects += 1
                    entry[0], entry[1] = self.connect(), 0
                    continue
                if trickles:
                    try:
                        s.send(self.header[sent % len(self.header):][:1])
                        entry[1] += 1
                    except OSError as e:
                        if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                            s.close()
                            entry[0] = None
            self.stop.wait(1.0)
        for s, _, _ in self.socks:
            if s is not None:
                s.close()

    def open_count(self):
        return sum(1 for s, _, _ in self.socks if s is not None)


def load(client, port, bodies, clients, seconds):
    out = subprocess.run([client, "--port", str(port), "--bodies", bodies, "--clients", str(clients),
                          "--seconds", str(seconds)], capture_output=True, text=True, timeout=seconds + 120)
    if out.returncode != 0:
        sys.exit(f"bench_serve_load failed (exit {out.returncode}): {out.stderr[-2000:]} {out.stdout[-500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def health_seconds(port):
    t0 = time.monotonic()
    ok = serve_bench.health(port, 60)
    return time.monotonic() - t0 if ok else float("inf")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--sentences", default=os.path.join(os.path.dirname(__file__), "../../shared/data/mt-ende/test_id.en"))
    ap.add_argument("--count", type=int, default=512)
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--max-len", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--slow", type=int, default=1000, help="slow-loris connections (a byte a second each)")
    ap.add_argument("--idle", type=int, default=300, help="connections that send nothing")
    ap.add_argument("--server-flags", default="", help="more flags for attn serve")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    client = os.path.join(os.path.dirname(a.attn), "bench_serve_load")
    if not os.access(client, os.X_OK):
        sys.exit(f"no {client}: build the bench_serve_load target")
    sentences = [l.rstrip("\n") for l in open(a.sentences, encoding="utf-8") if l.strip()][: a.count]
    with tempfile.NamedTemporaryFile("w", prefix="attn_serve_bodies_", suffix=".jsonl", delete=False) as f:
        f.write("".join(serve_bench.request_body(s, a) + "\n" for s in sentences))
    proc, port, log = serve_bench.launch(a.attn, "m=" + a.model, a.threads, a.server_flags.split())
    try:
        load(client, port, f.name, 8, 2)  # warm-up: shapes, caches
        quiet = load(client, port, f.name, a.clients, a.seconds)
        hostile = Hostile(port, a.slow, a.idle)
        hostile.thread.start()
        time.sleep(3)  # every hostile connection open and trickling
        probes = []

        def probe():
            while not hostile.stop.is_set() and len(probes) < 1000:
                probes.append(health_seconds(port))
                hostile.stop.wait(0.5)

        prober = threading.Thread(target=probe)
        prober.start()
        opened = hostile.open_count()
        loud = load(client, port, f.name, a.clients, a.seconds)
        hostile.stop.set()
        hostile.thread.join()
        prober.join()
    finally:
        serve_bench.stop_server(proc, log)
        os.unlink(f.name)
    print(f"model {a.model}, beam {a.beam}, {a.clients} clients, {a.seconds:.0f} s each; server flags '{a.server_flags}'")
    print(f"hostile: {a.slow} slow-loris (a byte a second) + {a.idle} idle connections, {opened} open when the load "
          f"began; the server closed {hostile.reconnects} of them (reopened)")
    print("| run | answered | errors | p50 ms | p99 ms |\n|---|---|---|---|---|")
    for name, r in (("quiet", quiet), ("hostile", loud)):
        print(f"| {name} | {r['answered']} | {r['errors']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} |")
    print(f"p99 hostile / quiet: {loud['p99_ms'] / quiet['p99_ms']:.2f}; fresh-connection /health during it: "
          f"{len(probes)} probes, slowest {1000 * max(probes):.1f} ms")
    if loud["errors"] or quiet["errors"]:
        print(f"first error: {loud.get('first_error') or quiet.get('first_error')}")


if __name__ == "__main__":
    main()
