"""What the Python tests share: the attn binary, and small models made with it once per session
(a translation model of 30 steps on 400 lines of the shared English-German corpus, a classifier
of 30 steps on a two-class synthetic set), so each test compares the module with the binary on
the same model."""
import contextlib
import json
import os
import pathlib
import re
import subprocess
import time
import urllib.error
import urllib.request

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("ATTN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
ATTN = os.environ.get("ATTN_BINARY", str(SOURCE_DIR / "build" / "attn"))
SHARED = pathlib.Path(os.environ.get("ATTN_SHARED_DIR", SOURCE_DIR.parent / "shared"))
CORPUS = SHARED / "data" / "mt-ende"


def run_attn(*args, stdin=None, check=True):
    """attn ARGS...; returns (exit code, stdout, the message of its 'error: ' line or its stderr)."""
    p = subprocess.run([ATTN, *map(str, args)], input=stdin, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"attn {' '.join(map(str, args))}: {p.stderr}")
    err = p.stderr.strip()
    if ": error: " in err:
        err = err.split(": error: ", 1)[1]
    return p.returncode, p.stdout, err


@contextlib.contextmanager
def serving(*models):
    """attn serve on a free port with `models` ("name=dir" each); yields its base address."""
    args = [x for m in models for x in ("--model", m)]
    p = subprocess.Popen([ATTN, "serve", *args, "--port", "0", "--threads", "1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.time() + 60
        while port is None and time.time() < deadline:
            line = p.stderr.readline()
            if not line and p.poll() is not None:
                raise AssertionError("attn serve ended before listening")
            m = re.search(r"listening on http://[^:]+:(\d+)/", line)
            if m:
                port = int(m.group(1))
        assert port, "attn serve did not say where it listens"
        base = f"http://127.0.0.1:{port}"
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(base + "/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        yield base
    finally:
        p.terminate()
        p.wait(timeout=30)


def post_json(base, route, body):
    """POST body to base + route; (status, the JSON answer), a 4xx answer included."""
    req = urllib.request.Request(base + route, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def head(path, n):
    with open(path, encoding="utf-8") as f:
        return [next(f).rstrip("\n") for _ in range(n)]


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("attn_python")


@pytest.fixture(scope="session")
def text_model(work):
    """A tiny Transformer with its SentencePiece model, trained by the binary."""
    for name in ("train.en", "train.de"):
        (work / name).write_text("\n".join(head(CORPUS / name, 400)) + "\n", encoding="utf-8")
    model = work / "ende"
    recipe = work / "ende.yaml"
    recipe.write_text(
        f"model_dir: {model}\ndata:\n  train_src: {work / 'train.en'}\n  train_tgt: {work / 'train.de'}\n"
        "  valid_src: \"\"\n  valid_tgt: \"\"\n  vocab_size: 300\n"
        "model:\n  d_model: 32\n  heads: 2\n  encoder_layers: 1\n  decoder_layers: 1\n  d_ff: 48\n  max_len: 256\n"
        "train:\n  max_steps: 30\n  checkpoint_every: 10\n  keep_checkpoints: 0\n  max_tokens: 600\n"
        "  threads: 2\n  seed: 3\n  lr: 0.002\n  schedule: constant\n", encoding="utf-8")
    run_attn("train", "--config", recipe)
    return str(model)


@pytest.fixture(scope="session")
def sentences():
    """Twelve English sentences of the dev set, and one blank line (the binary gives an empty line)."""
    lines = head(CORPUS / "dev.en", 12)
    return lines[:5] + [""] + lines[5:]


@pytest.fixture(scope="session")
def classifier_model(work):
    """A character classifier of two classes (texts of 山水风 against 河月花), trained by the binary."""
    a, b = "山水风的之", "河月花的之"
    rows = []
    for i in range(96):
        chars = a if i % 2 == 0 else b
        text = "".join(chars[(i * 7 + j * 3) % 5] for j in range(3 + i % 5))
        rows.append(("shan" if i % 2 == 0 else "he") + "\t" + text)
    (work / "cls_train.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (work / "cls_dev.tsv").write_text("\n".join(rows[:16]) + "\n", encoding="utf-8")
    model = work / "cls"
    sets = ["task=classification", f"model_dir={model}", f"data.train={work / 'cls_train.tsv'}",
            f"data.dev={work / 'cls_dev.tsv'}", "model.pad_size=8", "model.d_model=16", "model.heads=2",
            "model.layers=1", "model.d_ff=32", "train.batch=16", "train.lr=0.005", "train.threads=1",
            "train.validate_every=0", "train.max_steps=30"]
    run_attn("train", *[x for s in sets for x in ("--set", s)])
    return str(model)


def corpus_config(work, name, d_model, layers, steps, threads):
    """attn.train's config of a model on 400 lines of the corpus (test_thread_count.py's)."""
    for lang in ("en", "de"):
        (work / f"{name}.{lang}").write_text("\n".join(head(CORPUS / f"train.{lang}", 400)) + "\n", encoding="utf-8")
    return {
        "model_dir": str(work / name),
        "data": {"train_src": str(work / f"{name}.en"), "train_tgt": str(work / f"{name}.de"),
                 "valid_src": "", "valid_tgt": "", "vocab_size": 300},
        "model": {"d_model": d_model, "heads": 4, "encoder_layers": layers, "decoder_layers": layers,
                  "d_ff": 4 * d_model, "max_len": 256},
        "train": {"max_tokens": 1200, "threads": threads, "lr": 0.002, "schedule": "constant",
                  "max_steps": steps, "checkpoint_every": steps, "keep_checkpoints": 0, "log_every": 1},
    }


@pytest.fixture(scope="session")
def wide_model(work):
    """A model wide enough that its products are split over threads: one step of training."""
    import attn  # noqa: PLC0415 - here only: the fixtures above use the binary
    return attn.train(corpus_config(work, "wide", 256, 2, 1, 2))
