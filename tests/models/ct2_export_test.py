"""attn export --to ct2 (issue 51): a model attn trained runs in ctranslate2 as in attn.

A Transformer is trained in the test for a few hundred steps on ../shared/data/mt-ende (its own
SentencePiece model), exported with `attn export --to ct2`, and
  - translated by ctranslate2.Translator (fp32) and by `attn translate` on the original model with
    CTranslate2's rules (--search-rules ctranslate2, length penalty 1): greedy and beam 4 outputs
    identical on 200 dev sentences;
  - imported back with `attn import`: every tensor of the original model identical bit for bit
    (the re-import holds the sinusoid as a stored table of positions besides).
Runs in the reference venv (scripts/setup.sh --reference); skipped (77) without it.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_venv import lines_of, reexec_or_skip  # noqa: E402  (standard library only)

try:
    import ctranslate2
    import numpy as np
    import sentencepiece
except ImportError as e:
    reexec_or_skip(e)  # ctest runs Debian's python3: the reference venv runs the test

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("ATTN_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
CORPUS = os.path.join(SHARED, "data", "mt-ende")
SENTENCES = 200
MAX_LEN = 40  # output tokens, eos included, in both toolkits


def train(attn, work):
    for side in ("en", "de"):
        with open(os.path.join(work, "train." + side), "w", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in lines_of(os.path.join(CORPUS, "train." + side), 3000))
    model = os.path.join(work, "model")
    s = lambda kv: ["--set", kv]  # noqa: E731
    subprocess.run([attn, "train"] + s("model_dir=" + model) + s(f"data.train_src={work}/train.en") +
                   s(f"data.train_tgt={work}/train.de") + s("data.valid_src=") + s("data.valid_tgt=") +
                   s("data.vocab_size=500") + s("model.d_model=32") + s("model.heads=4") +
                   s("model.encoder_layers=2") + s("model.decoder_layers=2") + s("model.d_ff=64") +
                   s("model.max_len=128") + s("data.max_len=120") + s("train.max_steps=300") +
                   s("train.threads=2") + s("train.validate_every=0"), check=True, capture_output=True)
    return model


def safetensors(path):
    """name -> (dtype, shape, raw bytes) of a .safetensors file."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items() if k != "__metadata__"}


def attn_translate(attn, model, en, beam):
    r = subprocess.run([attn, "translate", "--model", model, "--beam", str(beam), "--search-rules", "ctranslate2",
                        "--length-penalty", "1", "--max-len", str(MAX_LEN), "--threads", "1"],
                       input="\n".join(en) + "\n", capture_output=True, text=True, check=True)
    return r.stdout.rstrip("\n").split("\n")


def ct2_translate(ct2_dir, en, beam):
    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(ct2_dir, "source.spm"))
    tr = ctranslate2.Translator(ct2_dir, device="cpu", inter_threads=1, intra_threads=1)
    # add_source_eos in the exported config.json: CTranslate2 appends eos as attn does
    results = tr.translate_batch([sp.encode(t, out_type=str) for t in en], beam_size=beam, length_penalty=1.0,
                                 max_decoding_length=MAX_LEN, max_batch_size=32)
    target = sentencepiece.SentencePieceProcessor(model_file=os.path.join(ct2_dir, "target.spm"))
    return [target.decode_pieces(r.hypotheses[0]) for r in results]


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--attn", required=True)
    a.add_argument("--keep", help="keep the models in this directory")
    args = a.parse_args()
    attn = os.path.abspath(args.attn)
    work = args.keep or tempfile.mkdtemp(prefix="attn-ct2-export-")
    os.makedirs(work, exist_ok=True)
    try:
        model = train(attn, work)
        ct2_dir = os.path.join(work, "model-ct2")
        subprocess.run([attn, "export", "--to", "ct2", model, ct2_dir], check=True, capture_output=True)
        en = lines_of(os.path.join(CORPUS, "dev.en"), SENTENCES)
        for beam in (1, 4):
            mine, theirs = attn_translate(attn, model, en, beam), ct2_translate(ct2_dir, en, beam)
            same = sum(x == y for x, y in zip(mine, theirs))
            print(f"beam {beam}: ctranslate2 {ctranslate2.__version__} on the exported directory against attn "
                  f"translate: {same} of {len(en)} identical")
            for i, (x, y) in enumerate(zip(mine, theirs)):
                if x != y:
                    print(f"  sentence {i + 1}: attn {x!r}\n              ct2  {y!r}")
            assert len(mine) == len(theirs) == len(en) and same == len(en)
            # a model that said one thing to everything would pass the comparison trivially
            assert len(set(mine)) >= len(en) // 2, f"only {len(set(mine))} distinct outputs"
        back = os.path.join(work, "model-back")
        subprocess.run([attn, "import", ct2_dir, back], check=True, capture_output=True)
        original, again = safetensors(os.path.join(model, "model.safetensors")), safetensors(
            os.path.join(back, "model.safetensors"))
        differ = [k for k, v in original.items() if again.get(k) != v]
        print(f"round trip attn -> ct2 -> attn: {len(original) - len(differ)} of {len(original)} tensors identical "
              f"bit for bit; only in the re-import: {sorted(set(again) - set(original))}")
        assert not differ, differ
        # the re-import's table is the original's sinusoid (a float32 computation of its own)
        table = np.frombuffer(again["pos_embed.weight"][2], dtype=np.float32).reshape(again["pos_embed.weight"][1])
        assert table.shape[0] == 128 and abs(table[0, 1] - 1.0) < 1e-6, table[0, :4]
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
