#!/usr/bin/python3
"""attn attend's page in a real browser (Debian's chromium, headless): the page of a fixture model
is opened from file://, a token is clicked (the page's address asks its own script to click it,
the same click event a person's mouse sends), and the test checks
  - the page drew the expected number of heatmaps (layers x heads of every attention stack);
  - the click changed the highlighted weights, and they are the clicked token's row of the
    model's weights (attend --format json), averaged over the heads;
  - a screenshot is not blank, and differs from the screenshot without the click.
Standard library only.
    /usr/bin/python3 tests/attend/browser_test.py --attn build/attn --fixtures tests/fixtures
"""
import argparse
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SRC = "5 9 14 7 22 31 2"  # ids; no eos added with --ids
TGT = "31 22 7 14 9 5"
CLICK = 3


def run(cmd, timeout=60):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout


def chromium(profile, *args):
    return run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--hide-scrollbars", f"--user-data-dir={profile}", "--virtual-time-budget=3000", *args])


class StateParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.state = None

    def handle_starttag(self, tag, attrs):
        if tag == "div" and dict(attrs).get("id") == "state":
            self.state = dict(attrs)


def png_pixels(path):
    """RGB(A) rows of an 8-bit PNG (what chromium writes), decoded with zlib and the 5 filters."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), f"PNG depth {depth} color type {color}"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--keep", help="copy the page and screenshots here")
    a = ap.parse_args()
    if not shutil.which("chromium"):
        sys.exit("FAIL: chromium not found (scripts/setup.sh installs it)")
    work = tempfile.mkdtemp(prefix="attn_attend_browser_")
    try:
        model = os.path.join(work, "model")
        run([a.attn, "import-torch", os.path.join(a.fixtures, "transformer", "post_shared_l2_h4"), model])
        page = os.path.join(work, "page.html")
        common = ["--model", model, "--ids", "--src", SRC, "--tgt", TGT]
        run([a.attn, "attend", *common, "--output", page])
        doc = json.loads(run([a.attn, "attend", *common, "--format", "json"]))
        heatmaps = sum(len(l["heads"]) for s in doc["stacks"] for l in s["layers"])
        assert heatmaps == 3 * 2 * 4, heatmaps  # three stacks, 2 layers, 4 heads
        url = "file://" + page + f"#stack=encoder_self&layer=2&head=0&click={CLICK}"
        profile = os.path.join(work, "profile")

        dom = chromium(profile, "--dump-dom", url)
        p = StateParser()
        p.feed(dom)
        state = p.state
        assert state and state.get("data-ready") == "1", "the page's script did not finish"
        assert int(state["data-heatmaps"]) == heatmaps, f"{state['data-heatmaps']} heatmaps, expected {heatmaps}"
        assert int(state["data-selected"]) == CLICK, state["data-selected"]
        before, after = state["data-highlight-before"], state["data-highlight"]
        assert after and after != before, f"the click did not change the highlight ({before!r} -> {after!r})"
        heads = doc["stacks"][0]["layers"][1]["heads"]
        want = [sum(h["weights"][CLICK][j] for h in heads) / len(heads) for j in range(len(heads[0]["weights"][0]))]
        got = [float(x) for x in after.split()]
        assert len(got) == len(want) and max(abs(g - w) for g, w in zip(got, want)) < 1e-4, (got, want)
        assert int(state["data-lines"]) > 0, "no lines drawn from the clicked token"

        shots = {}
        for name, frag in (("clicked", url), ("unclicked", url.replace(f"&click={CLICK}", ""))):
            shot = os.path.join(work, name + ".png")
            chromium(profile, f"--screenshot={shot}", "--window-size=1100,900", frag)
            shots[name] = png_pixels(shot)
        w, h, ch, rows = shots["clicked"]
        ink = sum(1 for row in rows for x in range(0, w * ch, ch) if min(row[x:x + 3]) < 200)
        assert ink > 0.02 * w * h, f"the screenshot is nearly blank ({ink} of {w * h} pixels inked)"
        changed = sum(1 for r1, r2 in zip(rows, shots["unclicked"][3]) if r1 != r2)
        assert changed > 10, f"the click changed {changed} rows of the screenshot"
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            for f in ("page.html", "clicked.png", "unclicked.png"):
                shutil.copy(os.path.join(work, f), a.keep)
        print(f"ok: {heatmaps} heatmaps, click on token {CLICK} highlighted {got}, "
              f"{ink} inked pixels, {changed} rows changed by the click")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
