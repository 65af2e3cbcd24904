"""attn import on Hugging Face Marian directories made here with transformers' own code
(tests/models/make_marian.py: SentencePiece models trained on the shared corpus, OPUS-MT's
vocabulary layout, random weights drawn wide enough that outputs are not degenerate): the
imported model's teacher-forced log-probabilities of 200 test sentences equal transformers'
(MarianMTModel on the same ids) within 1e-4 per sentence, for both activations (swish, gelu) and
both vocabulary layouts (one shared vocab.json, separate source and target vocabularies).

Runs in the reference venv (scripts/setup.sh --reference; ATTN_REF_VENV, default /work/venv-ref),
re-executing itself there; exits 77 (ctest's "skipped") without it.
Usage: hf_marian_test.py --attn build/attn"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

REFERENCE_PYTHON = os.path.join(os.environ.get("ATTN_REF_VENV", "/work/venv-ref"), "bin", "python")
try:
    import torch
    from transformers import MarianMTModel, MarianTokenizer
except ImportError as e:
    # ctest runs Debian's python3: the reference venv's interpreter, when there is one, runs the test
    if os.path.exists(REFERENCE_PYTHON) and not os.environ.get("ATTN_REF_REEXEC"):
        os.environ["ATTN_REF_REEXEC"] = "1"
        os.execv(REFERENCE_PYTHON, [REFERENCE_PYTHON] + sys.argv)
    print(f"SKIP: {e} (scripts/setup.sh --reference makes the venv this test runs in: {REFERENCE_PYTHON})")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("ATTN_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
CORPUS = os.path.join(SHARED, "data", "mt-ende")
SENTENCES = 200
TOLERANCE = 1e-4


def lines_of(path, n):
    with open(path, encoding="utf-8") as f:
        return [next(f).rstrip("\n") for _ in range(n)]


def make(out, *flags):
    subprocess.run([sys.executable, os.path.join(HERE, "make_marian.py"), out, *flags], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def hf_scores(model, sources, targets, eos):
    """sum_t log p(y_t | y_<t, x) over target + eos, the decoder started on decoder_start_token_id."""
    start = model.config.decoder_start_token_id
    out = []
    with torch.no_grad():
        for src, tgt in zip(sources, targets):
            logits = model(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([[start] + tgt])).logits[0]
            logp = torch.log_softmax(logits.double(), -1)
            gold = tgt + [eos]
            out.append(sum(logp[i, t].item() for i, t in enumerate(gold)))
    return out


def attn_scores(attn, model_dir, sources, targets, work):
    src, tgt = os.path.join(work, "src.ids"), os.path.join(work, "tgt.ids")
    with open(src, "w") as f:
        f.write("".join(" ".join(map(str, s)) + "\n" for s in sources))
    with open(tgt, "w") as f:
        f.write("".join(" ".join(map(str, t)) + "\n" for t in targets))
    r = subprocess.run([attn, "score", "--model", model_dir, "--ids", "--src", src, "--tgt", tgt, "--threads", "1"],
                       check=True, capture_output=True, text=True)
    return [float(x) for x in r.stdout.split()]


def check_variant(attn, name, flags, work, en, de):
    hf_dir = make(os.path.join(work, name), *flags)
    attn_dir = os.path.join(work, name + "-attn")
    subprocess.run([attn, "import", hf_dir, attn_dir], check=True, capture_output=True)
    tok = MarianTokenizer.from_pretrained(hf_dir)
    model = MarianMTModel.from_pretrained(hf_dir).eval()
    sources = [tok(s).input_ids for s in en]  # eos appended, as MarianTokenizer does
    targets = [tok(text_target=t).input_ids[:-1] for t in de]  # without the eos attn score appends
    ours = attn_scores(attn, attn_dir, sources, targets, work)
    theirs = hf_scores(model, sources, targets, model.config.eos_token_id)
    assert len(ours) == len(theirs) == len(en), (len(ours), len(theirs))
    worst = max(abs(a - b) for a, b in zip(ours, theirs))
    mean = sum(theirs) / len(theirs)
    print(f"{name}: {len(en)} sentences, mean log-prob {mean:.3f}, max |attn - transformers| {worst:.2e}")
    assert all(math.isfinite(x) for x in ours), name
    assert worst <= TOLERANCE, f"{name}: a log-prob differs by {worst:.2e} > {TOLERANCE}"


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--attn", required=True)
    args = a.parse_args()
    en = lines_of(os.path.join(CORPUS, "test_id.en"), SENTENCES)
    de = lines_of(os.path.join(CORPUS, "test_id.de"), SENTENCES)
    with tempfile.TemporaryDirectory() as work:
        check_variant(args.attn, "swish-shared", ["--activation", "swish"], work, en, de)
        check_variant(args.attn, "gelu-separate", ["--activation", "gelu", "--separate", "--seed", "2"], work, en, de)
    print("PASS")


if __name__ == "__main__":
    main()
