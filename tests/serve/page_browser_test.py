#!/usr/bin/python3
"""attn serve's page (GET /) in a real browser (Debian's chromium, headless), driven as a person
would through the DevTools protocol over a pipe (--remote-debugging-pipe): the page is loaded, a
sentence typed into the text box (Input.insertText, which fires the page's input events), the
translation waited for, a word of it clicked with the mouse (Input.dispatchMouseEvent at the word's
place), the attention page waited for in the overlay, and a screenshot taken. The test checks
  - the page listed the server's models;
  - the translation shown is the one POST /v1/translate gives for the sentence (the page's beam);
  - the click opened attn attend's page on the encoder-decoder attention with the clicked word's
    token selected;
  - the screenshot is not blank.
Without --model, a model is trained for 2 steps first (attn train). Standard library only.
    /usr/bin/python3 tests/serve/page_browser_test.py --attn build/attn [--model DIR] [--screenshot out.png]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "attend"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from browser_test import png_pixels  # noqa: E402  (the PNG decoder of the attend browser test)
from serve_bench import launch  # noqa: E402  (attn serve on a free port)

SENTENCE = "The file could not be opened."


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe: JSON messages ended by NUL on
    fds 3 (to the browser) and 4 (from it)."""

    def __init__(self, profile, width, height):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def fds():  # in the child: the pipe ends as fds 3 and 4 (copied first, should either be 3 or 4)
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4, to_browser_r, from_browser_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.next_id, self.buffer, self.session = 0, b"", None

    def call(self, method, timeout=30, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while b"\0" not in self.buffer:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    sys.exit("FAIL: chromium closed the DevTools pipe")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    sys.exit(f"FAIL: {method}: {reply['error']}")
                return reply.get("result", {})
        sys.exit(f"FAIL: no answer to {method} within {timeout} s")

    def open(self, url):
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Page.navigate", url=url)

    def eval(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return r.get("result", {}).get("value")

    def wait(self, expression, what, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.eval(expression)
            if value:
                return value
            time.sleep(0.1)
        sys.exit(f"FAIL: {what} within {timeout} s")

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def close(self):
        self.proc.kill()
        self.proc.wait()


def train_tiny(attn, work, shared):
    for side in ("en", "de"):
        with open(os.path.join(shared, "data/mt-ende/train." + side), encoding="utf-8") as f, \
                open(os.path.join(work, "train." + side), "w", encoding="utf-8") as out:
            out.writelines(line for _, line in zip(range(400), f))
    model = os.path.join(work, "model")
    subprocess.run([attn, "train", "--set", "model_dir=" + model, "--set", f"data.train_src={work}/train.en",
                    "--set", f"data.train_tgt={work}/train.de", "--set", "data.valid_src=", "--set", "data.valid_tgt=",
                    "--set", "data.vocab_size=300", "--set", "model.d_model=32", "--set", "model.heads=2",
                    "--set", "model.encoder_layers=2", "--set", "model.decoder_layers=2", "--set", "model.d_ff=48",
                    "--set", "model.max_len=128", "--set", "data.max_len=120", "--set", "train.max_steps=2",
                    "--set", "train.threads=1", "--set", "train.validate_every=0"],
                   check=True, capture_output=True)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn", required=True)
    ap.add_argument("--model", help="a text translation model (default: one trained for 2 steps)")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared"))
    ap.add_argument("--screenshot", help="keep the screenshot here")
    ap.add_argument("--sentence", default=SENTENCE)
    ap.add_argument("--word", type=int, default=1, help="which word of the translation to click (0-based)")
    a = ap.parse_args()
    if not shutil.which("chromium"):
        sys.exit("FAIL: chromium not found (scripts/setup.sh installs it)")
    work = tempfile.mkdtemp(prefix="attn_serve_page_")
    server = browser = log = None
    try:
        model = a.model or train_tiny(a.attn, work, a.shared)
        server, port, log = launch(a.attn, "en-de=" + model, 2)
        base = f"http://127.0.0.1:{port}"
        browser = DevTools(os.path.join(work, "profile"), 1280, 860)
        browser.open(base + "/")
        models = browser.wait("+document.body.dataset.models", "the page did not list the models")
        assert models == 1, models
        browser.eval("document.getElementById('text').focus()")
        browser.call("Input.insertText", text=a.sentence)
        browser.wait("+document.body.dataset.translated > 0", "no translation appeared")
        shown = browser.eval("[...document.querySelectorAll('#out .word')].map(w => w.textContent).join(' ')")
        beam = int(browser.eval("document.getElementById('beam').value"))
        lines = [l for l in a.sentence.split("\n") if l.strip()]
        body = json.dumps({"model": "en-de", "text": lines, "beam": beam}).encode()
        api = json.load(urllib.request.urlopen(urllib.request.Request(base + "/v1/translate", body,
                                                                      {"Content-Type": "application/json"})))
        want = " ".join(t["text"] for t in api["translations"])
        assert shown.split() == want.split(), f"the page shows {shown!r}, /v1/translate gives {want!r}"
        words = browser.eval("[...document.querySelectorAll('#out .word')].map(w => { const r = w.getBoundingClientRect();"
                             " return [r.x + r.width / 2, r.y + r.height / 2, +w.dataset.token, w.textContent]; })")
        assert words, "the translation has no words to click"
        x, y, token, word = words[min(a.word, len(words) - 1)]
        browser.click(x, y)
        state = browser.wait("document.body.dataset.attention !== 'opening' && document.body.dataset.attention",
                             "the attention page did not load")
        assert state == "loaded", f"the attention overlay: {state}"
        inner = browser.eval("(() => { const d = document.getElementById('frame').contentDocument;"
                             " const s = d.getElementById('state'); return {selected: +s.dataset.selected,"
                             " heatmaps: +s.dataset.heatmaps, lines: +s.dataset.lines,"
                             " stack: d.querySelector('#stacks .on, button.on') ? 1 : 0}; })()")
        assert inner["selected"] == token, f"clicked token {token}, the attention page selected {inner['selected']}"
        assert inner["heatmaps"] > 0 and inner["lines"] > 0, inner
        time.sleep(0.5)
        shot = browser.call("Page.captureScreenshot", format="png")["data"]
        path = a.screenshot or os.path.join(work, "page.png")
        import base64
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot))
        w, h, ch, rows = png_pixels(path)
        ink = sum(1 for row in rows for i in range(0, w * ch, ch) if min(row[i:i + 3]) < 200)
        assert ink > 0.02 * w * h, f"the screenshot is nearly blank ({ink} of {w * h} pixels inked)"
        print(f"ok: typed {a.sentence!r}, the page showed {shown!r} (= /v1/translate, beam {beam}); clicked "
              f"{word!r} (token {token}): attention page with {inner['heatmaps']} heatmaps, {inner['lines']} lines; "
              f"screenshot {w}x{h}, {ink} inked pixels")
    finally:
        if browser:
            browser.close()
        if server:
            server.terminate()
            server.wait()
            os.unlink(log)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
