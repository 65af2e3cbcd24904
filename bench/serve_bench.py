#!/usr/bin/python3
"""attn serve under load (docs/serve.md has the figures and the commands).

Throughput (sentences/s by the clock, and per second of the server's CPU time, which a load on
the machine from other processes changes less) and p50/p99 latency of single-sentence translation requests sent by 1, 8,
32 and 64 concurrent clients (threads with keep-alive connections) for a fixed time each, with
batching across requests on (attn serve's defaults), off (--no-batching: one request at a time,
one thread) and off on two threads; the mean batch formed at each point (/metrics); and, for the
same sentences, `attn translate` on them as one file with --threads 1 and 2. The load comes from
bench_serve_load (C++, beside --attn) or, with --client python or without it, from this script's
threads; either way the client's CPU time per second is reported ("client cores"), CPU the server
does not have on a machine of two cores. With --rss N: the server's resident memory after each 1,000 of N requests
sent by 64 clients. Loopback only; every loop is bounded in requests and time. Standard library only.

    /usr/bin/python3 bench/serve_bench.py --attn build/attn --model DIR [--sentences FILE] [--seconds 10] [--beam 4]
    /usr/bin/python3 bench/serve_bench.py --attn build/attn --model DIR --clients 32 --rounds 5   # medians
    /usr/bin/python3 bench/serve_bench.py --attn build/attn --model DIR --rss 10000
"""
import argparse
import http.client
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def launch(attn, spec, threads, extra=()):
    """`attn serve --model SPEC --port 0` (any free port); returns (process, port, its stderr file).
    tests/serve/page_browser_test.py starts its server with this too."""
    log = tempfile.NamedTemporaryFile(prefix="attn_serve_", suffix=".log", delete=False)
    cmd = [attn, "serve", "--model", spec, "--port", "0", *(["--threads", str(threads)] if threads else []), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(600):
        time.sleep(0.1)
        m = re.search(r"listening on http://[^:]+:(\d+)/", open(log.name).read())
        if m:
            wait_ready(int(m.group(1)), proc, log.name)
            return proc, int(m.group(1)), log.name
        if proc.poll() is not None:
            sys.exit(f"FAIL: attn serve exited {proc.returncode}: {open(log.name).read()}")
    sys.exit("FAIL: attn serve did not start within 60 s")


def health(port, timeout):
    """Whether GET /health answers 200 within `timeout` seconds (503 while the models warm)."""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request("GET", "/health")
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except OSError:
        return False


def wait_ready(port, proc, log):
    """Until GET /health is 200: 503 {"status": "loading"} while the batchers warm their models."""
    for _ in range(600):
        if health(port, 5):
            return
        if proc.poll() is not None:
            sys.exit(f"FAIL: attn serve exited {proc.returncode}: {open(log).read()}")
        time.sleep(0.1)
    sys.exit("FAIL: attn serve was not ready within 60 s")


def start_server(a, extra):
    return launch(a.attn, "m=" + a.model, a.threads, extra)


def stop_server(proc, log):
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=60)
    if code != 0:
        sys.exit(f"attn serve exited {code} after SIGTERM: {open(log).read()[-2000:]}")
    os.unlink(log)


def request_body(sentence, a):
    return json.dumps({"model": "m", "text": [sentence], "beam": a.beam, "max_len": a.max_len})


def run_clients(port, sentences, a, clients, seconds=None, total=None, on_answer=None):
    """clients threads send requests until `seconds` pass or `total` are sent; returns latencies (s)."""
    latencies, lock, errors = [], threading.Lock(), []
    counter = [0]
    deadline = time.monotonic() + seconds if seconds else None

    def client(c):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        i = c
        while True:
            with lock:
                if (total is not None and counter[0] >= total) or (deadline and time.monotonic() > deadline):
                    return
                counter[0] += 1
            body = request_body(sentences[i % len(sentences)], a)
            i += clients
            t0 = time.monotonic()
            for attempt in range(100):  # 503: retry after a moment (Retry-After: 1 is the upper bound)
                try:
                    conn.request("POST", "/v1/translate", body, {"Content-Type": "application/json"})
                    r = conn.getresponse()
                    data = r.read()
                except (ConnectionError, http.client.RemoteDisconnected):
                    # the server closed an idle keep-alive connection (--request-ms): a new one
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                    continue
                if r.status != 503:
                    break
                time.sleep(0.05)
            dt = time.monotonic() - t0
            with lock:
                if r.status != 200:
                    errors.append((r.status, data[:200]))
                latencies.append(dt)
                n = len(latencies)
            if on_answer:
                on_answer(n)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit(f"{len(errors)} requests failed, e.g. {errors[0]}")
    return latencies, time.monotonic() - start


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure_rss(a, sentences):
    proc, port, log = start_server(a, a.server_flags.split())
    marks = []

    def on_answer(n):
        if n % 1000 == 0:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", "/metrics")
            text = conn.getresponse().read().decode()
            tensors = dict(re.findall(r'attn_serve_tensor_bytes\{kind="(\w+)"\} (\S+)', text))
            tensors.update({"heap_" + k: v for k, v in re.findall(r'attn_serve_heap_bytes\{kind="(\w+)"\} (\S+)', text)})
            marks.append((n, rss_mib(proc.pid), {k: float(v) / 2**20 for k, v in tensors.items()}))

    _, seconds = run_clients(port, sentences, a, 64, total=a.rss, on_answer=on_answer)
    stop_server(proc, log)
    print(f"{a.rss} requests by 64 clients in {seconds:.1f} s; server resident memory (MiB) after each 1,000:")
    marks.sort(key=lambda m: m[0])
    for n, r, t in marks:
        print(f"  {n:6d}: resident {r:6.1f}; tensors live {t.get('live', 0):5.1f}, peak {t.get('peak', 0):5.1f}, "
              f"cached {t.get('cached', 0):5.1f}; heap in use {t.get('heap_in_use', 0):5.1f}, free "
              f"{t.get('heap_free', 0):5.1f}, arenas {t.get('heap_arena', 0):5.1f}")
    first, last = marks[0][1], marks[-1][1]
    print(f"after {marks[-1][0]}: {last:.1f} MiB = {100 * (last / first - 1):+.1f}% of after 1,000 ({first:.1f} MiB)")


def cpu_seconds(pid):
    """user + system CPU time of a process so far (/proc/PID/stat fields 14 and 15)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cli_rate(a, sentences, threads):
    """sentences/s of attn translate on the sentences as one file, by the clock and per CPU second."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(sentences) + "\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([a.attn, "translate", "--model", a.model, "--threads", str(threads), "--beam", str(a.beam),
                    "--max-len", str(a.max_len)], stdin=open(f.name), stdout=subprocess.DEVNULL, check=True)
    dt = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    os.unlink(f.name)
    return len(sentences) / dt, len(sentences) / cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--sentences", default=os.path.join(os.path.dirname(__file__), "../../shared/data/mt-ende/test_id.en"))
    ap.add_argument("--count", type=int, default=512, help="sentences taken from the file")
    ap.add_argument("--clients", default="1,8,32,64")
    ap.add_argument("--seconds", type=float, default=10, help="per measurement")
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--max-len", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="the servers' --threads (0: attn serve's default)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="measurements of each point, the modes' order reversed each round; medians are reported, "
                         "and the on/off ratio of each round")
    ap.add_argument("--rss", type=int, default=0, help="only the memory check, over this many requests")
    ap.add_argument("--server-flags", default="", help="more flags for attn serve with batching on (and --rss)")
    ap.add_argument("--against", default="",
                    help="another attn binary (e.g. an earlier commit's): only batching on, both servers side by side, "
                         "measured alternating each round at each client count; prints this/against per round")
    ap.add_argument("--client", default="",
                    help="the load: bench_serve_load's path, or python (this script's threads); by default "
                         "bench_serve_load beside --attn if it is there")
    a = ap.parse_args()
    sentences = [l.rstrip("\n") for l in open(a.sentences, encoding="utf-8") if l.strip()][: a.count]
    if a.rss:
        return measure_rss(a, sentences)
    if not a.client:
        beside = os.path.join(os.path.dirname(a.attn), "bench_serve_load")
        a.client = beside if os.access(beside, os.X_OK) else "python"
    if a.client != "python":
        with tempfile.NamedTemporaryFile("w", prefix="attn_serve_bodies_", suffix=".jsonl", delete=False) as f:
            f.write("".join(request_body(s, a) + "\n" for s in sentences))
        a.bodies = f.name
    print(f"model {a.model}, beam {a.beam}, {len(sentences)} sentences of {a.sentences}, {a.threads} threads, "
          f"{a.seconds:.0f} s a point, client {a.client}")
    if a.against:
        return compare_builds(a, sentences)
    # Both servers run side by side, idle but for the one measured, and the two modes alternate at
    # each client count (then the CLI again), so that a load on the machine that comes and goes
    # falls on both alike.
    modes = (("on", a.server_flags.split()), ("off", ["--no-batching"]),
             ("off, --threads 2", ["--no-batching", "--threads", "2"]))
    servers = {mode: start_server(a, extra) for mode, extra in modes}
    rates = [(cli_rate(a, sentences, 1), cli_rate(a, sentences, 2))]
    for proc, port, log in servers.values():
        run_clients(port, sentences, a, 8, total=16)  # warm-up: shapes, caches
    rows, off_rates = [], {}
    for c in [int(x) for x in a.clients.split(",")]:
        cells = {mode: [] for mode in servers}
        for r in range(a.rounds):
            order = list(servers.items()) if r % 2 == 0 else list(servers.items())[::-1]
            for mode, (proc, port, log) in order:
                cells[mode].append(measure_point(proc, port, sentences, a, c))
                if a.rounds > 1:
                    print(f"  {mode}, {c} clients, round {r + 1}: {cells[mode][-1][0]:.1f} sentences/s",
                          file=sys.stderr, flush=True)
        for mode in servers:
            rate, per_cpu, mean, p50, p99, client = (statistics.median(x[i] for x in cells[mode]) for i in range(6))
            rows.append(f"| {mode} | {c} | {rate:.1f} | {per_cpu:.1f} | {mean:.1f} | {1000 * p50:.0f} | {1000 * p99:.0f} "
                        f"| {client:.2f} |")
            print(rows[-1], file=sys.stderr, flush=True)
        off_rates[c] = statistics.median(x[0] for x in cells["off"])
        if a.rounds > 1:
            on, off = ([x[0] for x in cells[m]] for m in ("on", "off"))
            ratios = sorted(x / y for x, y in zip(on, off))
            rows.append(f"|  | {c} clients: on / off in each round | " + ", ".join(f"{x:.2f}" for x in ratios) + " | | | | | |")
    rates.append((cli_rate(a, sentences, 1), cli_rate(a, sentences, 2)))
    for proc, port, log in servers.values():
        stop_server(proc, log)
    if a.client != "python":
        os.unlink(a.bodies)
    for t in (0, 1):
        print(f"attn translate --threads {t + 1}, the {len(sentences)} sentences as one file: {rates[0][t][0]:.1f} and "
              f"{rates[1][t][0]:.1f} sentences/s (before and after the servers' runs); per CPU second "
              f"{rates[0][t][1]:.1f} and {rates[1][t][1]:.1f}")
    # What batching can reach, an estimate: a batcher decodes about as fast per CPU second as the
    # CLI on one thread with sorted batches of 32 (measured 0.85-1.14x), so "on" is near batchers x
    # that rate at best.
    batchers = min(os.cpu_count() or 1, 8)
    best = max(rates[0][0][1], rates[1][0][1])
    for c, off in off_rates.items():
        print(f"reach at {c} clients: {batchers} batchers x the CLI's {best:.1f} sentences per CPU second = "
              f"{batchers * best:.1f} sentences/s, {batchers * best / off:.2f}x one-at-a-time ({off:.1f})")
    print("| batching | clients | sentences/s | sentences per CPU second | mean batch | p50 ms | p99 ms | client cores |\n"
          "|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


def compare_builds(a, sentences):
    """--against: the two binaries' servers (batching on) side by side, idle but for the one measured,
    the order reversed each round so that a load that comes and goes falls on both alike."""
    servers = {"this": launch(a.attn, "m=" + a.model, a.threads, a.server_flags.split()),
               "against": launch(a.against, "m=" + a.model, a.threads, a.server_flags.split())}
    for proc, port, log in servers.values():
        run_clients(port, sentences, a, 8, total=16)  # warm-up: shapes, caches
    print("| clients | round | this sentences/s | against | this/against | per CPU second: this | against | this/against |\n"
          "|---|---|---|---|---|---|---|---|")
    for c in [int(x) for x in a.clients.split(",")]:
        cells = {name: [] for name in servers}
        for r in range(a.rounds):
            order = list(servers.items()) if r % 2 == 0 else list(servers.items())[::-1]
            for name, (proc, port, log) in order:
                cells[name].append(measure_point(proc, port, sentences, a, c))
            t, b = cells["this"][-1], cells["against"][-1]
            print(f"| {c} | {r + 1} | {t[0]:.1f} | {b[0]:.1f} | {t[0] / b[0]:.3f} | {t[1]:.1f} | {b[1]:.1f} | "
                  f"{t[1] / b[1]:.3f} |", flush=True)
        med = {name: [statistics.median(x[i] for x in cells[name]) for i in (0, 1)] for name in servers}
        t, b = med["this"], med["against"]
        print(f"| {c} | median | {t[0]:.1f} | {b[0]:.1f} | {t[0] / b[0]:.3f} | {t[1]:.1f} | {b[1]:.1f} | "
              f"{t[1] / b[1]:.3f} |", flush=True)
    for proc, port, log in servers.values():
        stop_server(proc, log)
    if a.client != "python":
        os.unlink(a.bodies)


def measure_point(proc, port, sentences, a, clients):
    """(sentences/s, sentences per CPU second, mean batch, p50 s, p99 s, the client's CPU seconds
    per second) of one point."""
    cpu, batches = cpu_seconds(proc.pid), batch_counts(port)
    if a.client == "python":
        before = time.process_time()
        lat, seconds = run_clients(port, sentences, a, clients, seconds=a.seconds)
        answered, p50, p99, client_cpu = len(lat), percentile(lat, 50), percentile(lat, 99), time.process_time() - before
    else:
        out = subprocess.run([a.client, "--port", str(port), "--bodies", a.bodies, "--clients", str(clients),
                              "--seconds", str(a.seconds)], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{a.client} failed: {out.stdout} {out.stderr}")
        r = json.loads(out.stdout)
        answered, seconds, p50, p99 = r["answered"], r["seconds"], r["p50_ms"] / 1000, r["p99_ms"] / 1000
        client_cpu = r["client_cpu_seconds"]
    cpu = cpu_seconds(proc.pid) - cpu
    after = batch_counts(port)
    mean = (after[0] - batches[0]) / max(1, after[1] - batches[1])
    return answered / seconds, answered / cpu, mean, p50, p99, client_cpu / seconds


def batch_counts(port):
    """(sentences, batches) computed so far, from /metrics."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    total = re.search(r'attn_serve_batch_sentences_sum\{model="m"\} (\S+)', text)
    count = re.search(r'attn_serve_batch_sentences_count\{model="m"\} (\S+)', text)
    return (float(total.group(1)) if total else 0.0, float(count.group(1)) if count else 0.0)


if __name__ == "__main__":
    main()
