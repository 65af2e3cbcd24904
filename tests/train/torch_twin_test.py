#!/usr/bin/python3
"""bench/torch_translation_twin.py trains what `attn train` trains: on a slice of the real corpus,
a tiny model from attn's own initial weights (a run stopped before its first step, exported with
`attn export-torch`), 10 steps on each side in fp32 crossing an epoch boundary:
- the twin's batcher fingerprint (bench/twin_data.py) equals the one attn's checkpoint keeps,
- the training loss of every step agrees to 1e-4 (relative),
- every weight tensor's update agrees to 0.1% (relative norm of the difference of the updates; the
  key projection's bias, whose gradient is only rounding, left out),
- the twin's output imports into attn (twin_attn.import_into_attn) and translates text.
Exits 77 (skipped) without Debian's python3-torch and python3-sentencepiece.

  /usr/bin/python3 tests/train/torch_twin_test.py --attn build/attn --shared ../shared
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.normpath(os.path.join(HERE, "..", "..", "bench"))
TINY = ["model.d_model=32", "model.heads=2", "model.encoder_layers=1", "model.decoder_layers=2", "model.d_ff=48",
        "train.max_tokens=1024", "data.vocab_size=300", "data.valid_src=", "train.log_every=1"]
STEPS = 10


def attn_train(attn, model_dir, corpus, extra):
    sets = TINY + [f"data.train_src={corpus}/train.en", f"data.train_tgt={corpus}/train.de"] + extra
    cmd = [attn, "train", "--model-dir", model_dir, "--threads", "1", "--precision", "fp32"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, capture_output=True, env=dict(os.environ, OMP_WAIT_POLICY="passive"))


def losses(model_dir):
    return [e["loss"] for e in map(json.loads, open(os.path.join(model_dir, "train_log.jsonl")))
            if e["event"] == "train"]


def compare_updates(init, attn_ref, twin_ref):
    """The largest relative difference of a tensor's update over the steps. The key projection's
    bias is left out: it adds q.b_k to every score of a query, which the softmax cancels, so its
    gradient is zero but for rounding, and Adam turns that rounding into full-size steps of either
    sign (the query and value thirds of in_proj_bias are compared)."""
    import numpy as np
    i, a, t = (np.load(os.path.join(d, "weights.npz")) for d in (init, attn_ref, twin_ref))
    worst = 0.0
    for k in a.files:
        keep = np.ones(a[k].shape, dtype=bool)
        if k.endswith("in_proj_bias"):
            d = a[k].shape[0] // 3
            keep[d:2 * d] = False
        moved = np.linalg.norm((a[k] - i[k])[keep])
        if moved > 0:
            worst = max(worst, float(np.linalg.norm((a[k] - t[k])[keep]) / moved))
    return worst


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--attn", required=True)
    p.add_argument("--shared", required=True)
    a = p.parse_args()
    try:
        import numpy  # noqa: F401
        import sentencepiece  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e} (scripts/setup.sh --bench installs python3-torch and python3-sentencepiece)")
        return 77
    sys.path.insert(0, BENCH)
    import twin_data
    from twin_attn import import_into_attn

    w = tempfile.mkdtemp(prefix="attn_twin_")
    for name in ("train.en", "train.de"):
        lines = open(os.path.join(a.shared, "data", "mt-ende", name), encoding="utf-8").read().split("\n")[:200]
        open(os.path.join(w, name), "w", encoding="utf-8").write("\n".join(lines) + "\n")
    attn_train(a.attn, f"{w}/init", w, ["train.max_minutes=0.000001"])  # the initial model, no step
    subprocess.run([a.attn, "export-torch", f"{w}/init", f"{w}/init-ref"], check=True, capture_output=True)
    attn_train(a.attn, f"{w}/attn", w, [f"train.max_steps={STEPS}", f"data.tokenizer={w}/init/spm.model"])
    subprocess.run(["/usr/bin/python3", os.path.join(BENCH, "torch_translation_twin.py"), "--out", f"{w}/twin",
                    "--spm", f"{w}/init/spm.model", "--init", f"{w}/init-ref", "--max-steps", str(STEPS),
                    "--threads", "1", "--max-tokens", "1024", "--log-every", "1", "--train-src", f"{w}/train.en",
                    "--train-tgt", f"{w}/train.de"], check=True, capture_output=True)
    failures = []

    sp = sentencepiece.SentencePieceProcessor(model_file=f"{w}/init/spm.model")
    examples, _ = twin_data.read_corpus(f"{w}/train.en", f"{w}/train.de", sp, 128)
    batcher = twin_data.Batcher(examples, 1024, 1)
    mine = twin_data.fingerprint(examples, 1024, 1, batcher.window)
    ckpt = sorted(os.listdir(f"{w}/attn/checkpoints"))[-1]
    theirs = json.load(open(f"{w}/attn/checkpoints/{ckpt}/state.json"))["batcher"]["fingerprint"]
    print(f"batcher fingerprint: twin {mine}, attn {theirs}; {len(batcher.plan)} batches an epoch, {STEPS} steps")
    if mine != theirs:
        failures.append("the twin's examples or batch options differ from attn's")
    if len(batcher.plan) >= STEPS:
        failures.append(f"the test should cross an epoch: {len(batcher.plan)} batches an epoch")

    la, lt = losses(f"{w}/attn"), losses(f"{w}/twin")
    print("loss by step (attn, twin):", " ".join(f"{x:.5f}/{y:.5f}" for x, y in zip(la, lt)))
    if len(la) != STEPS or len(lt) != STEPS or any(abs(x - y) > 1e-4 * abs(x) for x, y in zip(la, lt)):
        failures.append("the losses differ")

    subprocess.run([a.attn, "export-torch", f"{w}/attn", f"{w}/attn-ref"], check=True, capture_output=True)
    worst = compare_updates(f"{w}/init-ref", f"{w}/attn-ref", f"{w}/twin")
    print(f"worst tensor: |attn - twin| / |attn - init| = {worst:.2e} (tolerance 1e-3)")
    if worst > 1e-3:
        failures.append("the weights after the steps differ")

    import_into_attn(a.attn, f"{w}/twin", f"{w}/twin-model")
    out = subprocess.run([a.attn, "translate", "--model", f"{w}/twin-model", "--beam", "1", "--threads", "1"],
                         input="Open the file.\nSave it.\n", capture_output=True, text=True)
    print(f"attn translate of the imported twin: exit {out.returncode}, {len(out.stdout.splitlines())} lines")
    if out.returncode != 0 or len(out.stdout.splitlines()) != 2:
        failures.append(f"the imported twin does not translate: {out.stderr.strip()}")

    for f in failures:
        print("FAILED:", f)
    if not failures:
        subprocess.run(["rm", "-rf", w])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
