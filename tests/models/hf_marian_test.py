"""attn import on Hugging Face Marian directories made here with transformers' own code
(tests/models/make_marian.py: SentencePiece models trained on the shared corpus, OPUS-MT's
vocabulary layout, random weights drawn wide enough that outputs are not degenerate): the
imported model's teacher-forced log-probabilities of 200 test sentences equal transformers'
(MarianMTModel on the same ids) within 1e-4 per sentence, and its greedy and beam outputs
(attn translate --search-rules transformers --early-stopping) equal model.generate's token for
token (beam 4, early_stopping=True, the model's generation config: the pad never output, eos
forced at the maximum length). Then text in and out: attn score on the text files equals
transformers' log-probs of MarianTokenizer's ids (both tokenizers checked), and `attn translate
--model DIR` with no option at all (the imported generation_config.json: beam 4, its
max_length, early_stopping False, renormalize_logits) prints exactly
tokenizer.batch_decode(model.generate(**tokenizer(batch)), skip_special_tokens=True). For both
activations (swish, gelu), both vocabulary layouts (one shared vocab.json, separate source and
target vocabularies) and a model trained briefly on the corpus.

Runs in the reference venv (scripts/setup.sh --reference; ATTN_REF_VENV, default /work/venv-ref),
re-executing itself there; exits 77 (ctest's "skipped") without it.
Usage: hf_marian_test.py --attn build/attn"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_venv import lines_of, reexec_or_skip  # noqa: E402  (standard library only)

try:
    import torch
    from transformers import MarianMTModel, MarianTokenizer
except ImportError as e:
    reexec_or_skip(e)  # ctest runs Debian's python3: the reference venv runs the test

torch.set_num_threads(1)  # beside ctest -j2 and attn's own --threads 1: no oversubscribed cores
HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("ATTN_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
CORPUS = os.path.join(SHARED, "data", "mt-ende")
SENTENCES = 200
TOLERANCE = 1e-4
MAX_LENGTH = 40  # generate()'s, the decoder's start token included: attn's --max-len 39


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


def hf_outputs(model, sources, beam):
    """generate()'s outputs as attn prints them: without the start token, the eos and the padding."""
    eos, pad = model.config.eos_token_id, model.config.pad_token_id
    out = []
    with torch.no_grad():
        for i in range(0, len(sources), 20):
            batch = sources[i:i + 20]
            longest = max(len(s) for s in batch)
            ids = torch.tensor([s + [pad] * (longest - len(s)) for s in batch])
            mask = torch.tensor([[1] * len(s) + [0] * (longest - len(s)) for s in batch])
            # synced_gpus=False: transformers would otherwise import torch.distributed.fsdp, which
            # Debian's torch 1.13 cannot on Python 3.11
            g = model.generate(input_ids=ids, attention_mask=mask, num_beams=beam, do_sample=False,
                               early_stopping=True, length_penalty=1.0, max_length=MAX_LENGTH, synced_gpus=False)
            for row in g.tolist():
                row = row[1:]
                out.append(row[:row.index(eos)] if eos in row else row)
    return out


def attn_outputs(attn, model_dir, sources, beam, work):
    src = os.path.join(work, "gen.ids")
    with open(src, "w") as f:
        f.write("".join(" ".join(map(str, s)) + "\n" for s in sources))
    r = subprocess.run([attn, "translate", "--model", model_dir, "--ids", "--input", src, "--beam", str(beam),
                        "--search-rules", "transformers", "--early-stopping", "--length-penalty", "1", "--eos-at-max-len",
                        "--max-len", str(MAX_LENGTH - 1), "--threads", "1"], check=True, capture_output=True, text=True)
    return [[int(t) for t in line.split()] for line in r.stdout.splitlines()]


def check_generation(attn, name, model, attn_dir, sources, work):
    for beam in (1, 4):
        ours, theirs = attn_outputs(attn, attn_dir, sources, beam, work), hf_outputs(model, sources, beam)
        assert len(ours) == len(theirs) == len(sources), (len(ours), len(theirs))
        same = sum(a == b for a, b in zip(ours, theirs))
        distinct = len({tuple(t) for t in theirs})
        ended = sum(len(t) < MAX_LENGTH - 2 for t in theirs)
        print(f"{name}: beam {beam}: {same} of {len(sources)} outputs identical to generate()'s "
              f"({distinct} distinct outputs, {ended} ended before the maximum length)")
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert a == b, f"{name} beam {beam} sentence {i + 1}:\n attn         {a}\n transformers {b}"
        assert distinct > len(sources) // 4, f"{name}: the outputs are degenerate ({distinct} distinct)"


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    return path


def check_text(attn, name, tok, model, attn_dir, en, de, work):
    """Text through the imported tokenizers, and the imported search defaults."""
    src, tgt = write_lines(os.path.join(work, "en.txt"), en), write_lines(os.path.join(work, "de.txt"), de)
    r = subprocess.run([attn, "score", "--model", attn_dir, "--src", src, "--tgt", tgt, "--threads", "1"],
                       check=True, capture_output=True, text=True)
    ours = [float(x) for x in r.stdout.split()]
    theirs = hf_scores(model, [tok(s).input_ids for s in en], [tok(text_target=t).input_ids[:-1] for t in de],
                       model.config.eos_token_id)
    worst = max(abs(a - b) for a, b in zip(ours, theirs))
    print(f"{name}: text: attn score equals transformers' log-probs of MarianTokenizer's ids within {worst:.2e}")
    assert len(ours) == len(en) and worst <= TOLERANCE, (len(ours), worst)
    theirs = []
    with torch.no_grad():
        for i in range(0, len(en), 20):
            batch = tok(en[i:i + 20], return_tensors="pt", padding=True)
            theirs += tok.batch_decode(model.generate(**batch, synced_gpus=False), skip_special_tokens=True)
    r = subprocess.run([attn, "translate", "--model", attn_dir, "--input", src, "--threads", "1"], check=True,
                       capture_output=True, text=True)
    ours = r.stdout.split("\n")[:-1]
    assert len(ours) == len(en), (len(ours), len(en))
    same = sum(a == b for a, b in zip(ours, theirs))
    print(f"{name}: text: attn translate (the imported defaults) printed {same} of {len(en)} lines as generate() + "
          f"batch_decode ({len(set(theirs))} distinct)")
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a == b, f"{name} text line {i + 1}:\n attn         {a!r}\n transformers {b!r}"


def check_variant(attn, name, flags, work, en, de):
    # generation_config's max_length 40: the random models' outputs loop to the maximum length,
    # and over 127 looping tokens two beams come within float32 rounding of each other (once in
    # 200 sentences of gelu-separate, 20 tokens from the end), where any two implementations part
    hf_dir = make(os.path.join(work, name), "--max-length", str(MAX_LENGTH), *flags)
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
    check_generation(attn, name, model, attn_dir, sources, work)
    check_text(attn, name, tok, model, attn_dir, en, de, work)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--attn", required=True)
    args = a.parse_args()
    en = lines_of(os.path.join(CORPUS, "test_id.en"), SENTENCES)
    de = lines_of(os.path.join(CORPUS, "test_id.de"), SENTENCES)
    with tempfile.TemporaryDirectory() as work:
        check_variant(args.attn, "swish-shared", ["--activation", "swish"], work, en, de)
        check_variant(args.attn, "gelu-separate", ["--activation", "gelu", "--separate", "--seed", "2"], work, en, de)
        # trained briefly (1,000 Adam steps on 2,000 pairs, about a minute): a quarter of its
        # outputs end with eos by themselves, so the search's rules at eos are exercised
        # renormalize_logits, as many OPUS-MT models' generation_config.json has it
        check_variant(args.attn, "swish-trained", ["--activation", "swish", "--train-steps", "1000", "--spread", "1",
                                                   "--renormalize"], work, en, de)
    print("PASS")


if __name__ == "__main__":
    main()
