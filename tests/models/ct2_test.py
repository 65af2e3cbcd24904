"""attn import on CTranslate2 directories made here by CTranslate2's own converter
(ctranslate2.converters.TransformersConverter, the one `ct2-transformers-converter` runs) from
Hugging Face Marian models made with transformers' code (tests/models/make_marian.py: one with
random GELU weights, spread 2 so that 100+ of the 200 outputs differ; one swish model trained
briefly on the shared corpus; 512 positions, OPUS-MT's table), with source.spm and target.spm
copied as `--copy_files` does:
  - float32: attn's greedy and beam-4 outputs on the imported directory identical to
    ctranslate2.Translator.translate_batch's, token for token, on 200 dev sentences, and the scores
    (sum log p / length, eos counted) within 1e-4; score_batch's log-probs of the references
    (summed) within 1e-4 of `attn score`;
  - no option at all: `attn translate --model DIR` on the English text prints CTranslate2's default
    search (beam 2, length penalty 1, min_decoding_length 1, max_decoding_length 256) decoded as
    MarianTokenizer decodes it (skip_special_tokens): all 200 for the random model; the trained
    one's repetitive outputs meet exact float32 ties in beam 2 (two prefixes whose log-probs sum to
    the same float, e.g. sentence 107's "t ▁" and "m en" at step 31, which CTranslate2's unstable
    partial_sort orders as it happens to; measured 197 of 200 identical), so at most 5 may differ;
  - float16 and bfloat16 model.bin: read back to float32 as CTranslate2 does, the same outputs as
    CTranslate2 computing in float32 on them;
  - int8: the directory's weights are q / scale; attn computing in int8 (--precision int8) on it
    against CTranslate2's int8 (int8_float32) on it, and against attn's float32 on the float32
    directory: how many outputs are identical to each is printed, and attn's int8 must agree with
    CTranslate2's int8 at least as often as with its own float32, less 5%;
  - an Argos Translate package of the trained model's directory (metadata.json en/English ->
    de/German, model/, sentencepiece.model) imported and served: LibreTranslate's POST /translate
    with source "en" and target "de" answers what Argos' apply_packaged_translation gives on the
    same CTranslate2 model, for all 200, and GET /languages names English with its target.
Runs in the reference venv (scripts/setup.sh --reference), re-executing itself there; exits 77
(ctest's "skipped") without it.
Usage: ct2_test.py --attn build/attn"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_venv import lines_of, reexec_or_skip  # noqa: E402  (standard library only)

try:
    import ctranslate2
    import torch
    from transformers import MarianTokenizer
except ImportError as e:
    reexec_or_skip(e)  # ctest runs Debian's python3: the reference venv runs the test

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from serve_bench import launch  # noqa: E402  (attn serve on a free port)
SHARED = os.environ.get("ATTN_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
CORPUS = os.path.join(SHARED, "data", "mt-ende")
SENTENCES = 200
TOLERANCE = 1e-4
MAX_DECODING = 60  # for the explicit beam 1 / beam 4 runs: short enough to keep the test quick


def make_marian(out, *flags):
    subprocess.run([sys.executable, os.path.join(HERE, "make_marian.py"), out, "--positions", "512",
                    "--max-length", "40", *flags], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def convert(hf, out, quantization):
    ctranslate2.converters.TransformersConverter(hf, copy_files=["source.spm", "target.spm"]).convert(
        out, quantization=quantization, force=True)
    return out


def attn_import(attn, ct2_dir, out):
    subprocess.run([attn, "import", ct2_dir, out], check=True, capture_output=True, text=True)
    return out


def ct2_translate(ct2_dir, sources, compute_type="default", **options):
    tr = ctranslate2.Translator(ct2_dir, device="cpu", compute_type=compute_type, inter_threads=1, intra_threads=1)
    results = tr.translate_batch(sources, return_scores=True, **options)
    return [(r.hypotheses[0], r.scores[0]) for r in results]


def attn_translate(attn, model_dir, ids, work, *flags):
    path = os.path.join(work, "src.ids")
    with open(path, "w") as f:
        f.write("".join(" ".join(map(str, s)) + "\n" for s in ids))
    r = subprocess.run([attn, "translate", "--model", model_dir, "--ids", "--input", path, "--output-format", "jsonl",
                        "--threads", "1", *flags], check=True, capture_output=True, text=True)
    return [(j["ids"], j["score"]) for j in map(json.loads, r.stdout.splitlines())]


def compare(name, ours, theirs, vocab, scores=True):
    """ours: (ids, score); theirs: (tokens, score). Returns the number identical."""
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    same, worst = 0, 0.0
    for i, ((ids, s), (tokens, t)) in enumerate(zip(ours, theirs)):
        mine = [vocab[k] for k in ids]
        if mine == tokens:
            same += 1
            worst = max(worst, abs(s - t))
    print(f"{name}: {same} of {len(ours)} outputs identical" + (f", scores within {worst:.2e}" if scores else ""))
    return same, worst


def check_exact(name, ours, theirs, vocab):
    same, worst = compare(name, ours, theirs, vocab)
    for i, ((ids, _), (tokens, _)) in enumerate(zip(ours, theirs)):
        assert [vocab[k] for k in ids] == tokens, f"{name} sentence {i + 1}:\n attn        {[vocab[k] for k in ids]}\n ctranslate2 {tokens}"
    assert worst <= TOLERANCE, f"{name}: a score differs by {worst}"
    distinct = len({tuple(t) for t, _ in theirs})
    assert distinct > len(theirs) // 4, f"{name}: the outputs are degenerate ({distinct} distinct)"


def check_model(attn, name, hf, work, en, de, extra_dtypes, allowed_ties=0):
    tok = MarianTokenizer.from_pretrained(hf)
    sources = [tok.convert_ids_to_tokens(tok(s).input_ids) for s in en]  # ends with </s>, as CTranslate2 is given
    references = [tok.convert_ids_to_tokens(tok(text_target=t).input_ids[:-1]) for t in de]
    dirs = {q: convert(hf, os.path.join(work, f"{name}-ct2-{q}"), q) for q in ["float32", "int8", *extra_dtypes]}
    vocab = json.load(open(os.path.join(dirs["float32"], "shared_vocabulary.json"), encoding="utf-8"))
    index = {t: i for i, t in enumerate(vocab)}
    ids = [[index[t] for t in s] for s in sources]
    ours = {q: attn_import(attn, d, os.path.join(work, f"{name}-attn-{q}")) for q, d in dirs.items()}
    # float32: the explicit searches and the scores
    outputs = {}
    for beam in (1, 4):
        theirs = ct2_translate(dirs["float32"], sources, beam_size=beam, max_decoding_length=MAX_DECODING)
        mine = attn_translate(attn, ours["float32"], ids, work, "--beam", str(beam), "--max-len", str(MAX_DECODING))
        check_exact(f"{name} float32 beam {beam}", mine, theirs, vocab)
        outputs[beam] = mine
    tr = ctranslate2.Translator(dirs["float32"], device="cpu", inter_threads=1, intra_threads=1)
    theirs = [sum(r.log_probs) for r in tr.score_batch(sources, references)]
    src, tgt = os.path.join(work, "score.src"), os.path.join(work, "score.tgt")
    with open(src, "w") as f:
        f.write("".join(" ".join(map(str, s)) + "\n" for s in ids))
    with open(tgt, "w") as f:
        f.write("".join(" ".join(str(index[t]) for t in r) + "\n" for r in references))
    r = subprocess.run([attn, "score", "--model", ours["float32"], "--ids", "--src", src, "--tgt", tgt, "--threads", "1"],
                       check=True, capture_output=True, text=True)
    mine = [float(x) for x in r.stdout.split()]
    worst = max(abs(a - b) for a, b in zip(mine, theirs))
    print(f"{name} float32: score of {len(mine)} references within {worst:.2e} of score_batch's")
    assert len(mine) == len(theirs) and worst <= TOLERANCE, worst
    # no option: the model's defaults are CTranslate2's, text in and out
    default = ct2_translate(dirs["float32"], sources)
    path = os.path.join(work, "en.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(s + "\n" for s in en))
    r = subprocess.run([attn, "translate", "--model", ours["float32"], "--input", path, "--threads", "1"], check=True,
                       capture_output=True, text=True)
    mine = r.stdout.splitlines()
    # as MarianTokenizer decodes them (skip_special_tokens: unk too, as generate()'s users see it)
    expected = [tok.decode(tok.convert_tokens_to_ids(t), skip_special_tokens=True) for t, _ in default]
    same = sum(a == b for a, b in zip(mine, expected))
    print(f"{name}: attn translate --model DIR (no options): {same} of {len(en)} texts identical to "
          "translate_batch's defaults")
    assert len(mine) == len(en)
    for i, (a, b) in enumerate(zip(mine, expected)):
        assert a == b or same >= len(en) - allowed_ties, f"{name} default sentence {i + 1}:\n attn        {a!r}\n ctranslate2 {b!r}"
    assert same >= len(en) - allowed_ties, f"{name}: {len(en) - same} default outputs differ (at most {allowed_ties})"
    # float16 / bfloat16 weights, widened to float32 on both sides
    for q in extra_dtypes:
        theirs = ct2_translate(dirs[q], sources, compute_type="float32", beam_size=4, max_decoding_length=MAX_DECODING)
        mine = attn_translate(attn, ours[q], ids, work, "--beam", "4", "--max-len", str(MAX_DECODING))
        check_exact(f"{name} {q} beam 4", mine, theirs, vocab)
    # int8
    for beam in (1, 4):
        theirs = ct2_translate(dirs["int8"], sources, compute_type="int8", beam_size=beam,
                               max_decoding_length=MAX_DECODING)
        mine = attn_translate(attn, ours["int8"], ids, work, "--beam", str(beam), "--max-len", str(MAX_DECODING),
                              "--precision", "int8")
        with_ct2, _ = compare(f"{name} int8 beam {beam}: attn int8 against CTranslate2 int8", mine, theirs, vocab,
                              scores=False)
        fp32 = [([vocab[k] for k in i], s) for i, s in outputs[beam]]
        with_fp32, _ = compare(f"{name} int8 beam {beam}: attn int8 against attn float32", mine, fp32, vocab,
                               scores=False)
        ct2_fp32 = sum(a[0] == b[0] for a, b in zip(theirs, fp32))
        print(f"{name} int8 beam {beam}: CTranslate2 int8 against float32: {ct2_fp32} of {len(theirs)} identical")
        assert with_ct2 >= with_fp32 - len(theirs) // 20, (with_ct2, with_fp32)


def argos_package(ct2_dir, spm, path):
    """An Argos Translate package as argospm builds one: a zip of one directory holding
    metadata.json, model/ (the CTranslate2 directory) and sentencepiece.model."""
    top = "translate-en_de-1_0/"
    meta = {"package_version": "1.0", "argos_version": "1.9.0", "from_code": "en", "from_name": "English",
            "to_code": "de", "to_name": "German", "type": "translate"}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(top + "metadata.json", json.dumps(meta))
        for f in ("model.bin", "config.json", "shared_vocabulary.json"):
            z.write(os.path.join(ct2_dir, f), top + "model/" + f)
        z.write(spm, top + "sentencepiece.model")
    return path


def argos_translate(ct2_dir, spm, texts):
    """argostranslate.translate.apply_packaged_translation on one sentence each (its stanza sentence
    splitting aside): SentencePiece pieces without eos, translate_batch with beam 4 and length
    penalty 0.2, the pieces joined with "▁" as spaces and one leading space dropped."""
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=spm)
    tr = ctranslate2.Translator(ct2_dir, device="cpu", inter_threads=1, intra_threads=1)
    out = []
    for r in tr.translate_batch([sp.encode(t, out_type=str) for t in texts], replace_unknowns=True, max_batch_size=32,
                                beam_size=4, num_hypotheses=1, length_penalty=0.2, return_scores=True):
        value = "".join(r.hypotheses[0]).replace("▁", " ")
        out.append(value[1:] if value.startswith(" ") else value)
    return out


def post(port, route, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{route}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def check_argos(attn, hf, work, en):
    """An Argos package of the trained model's CTranslate2 directory: attn import reads it, attn
    serve answers LibreTranslate's POST /translate with its language codes as Argos translates, and
    GET /languages names them."""
    ct2_dir = os.path.join(work, "swish-trained-ct2-float32")
    spm = os.path.join(hf, "target.spm")  # the package's one SentencePiece model (target.spm: Argos decodes with it too)
    package = argos_package(ct2_dir, spm, os.path.join(work, "translate-en_de-1_0.argosmodel"))
    model = attn_import(attn, package, os.path.join(work, "argos-attn"))
    expected = argos_translate(ct2_dir, spm, en)
    proc, port, log = launch(attn, "argos=" + model, 1)
    try:
        got = []
        for i in range(0, len(en), 20):  # within the server's default request limits
            got += post(port, "/translate", {"q": en[i:i + 20], "source": "en", "target": "de", "format": "text"})[
                "translatedText"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/languages", timeout=30) as r:
            languages = json.loads(r.read())
    finally:
        proc.terminate()
        proc.wait()
    # Argos keeps a space a cut output ends with ("▁" last); attn's detokenizer strips the text
    expected = [e.rstrip(" ") for e in expected]
    same = sum(a == b for a, b in zip(got, expected))
    print(f"argos: POST /translate en -> de: {same} of {len(en)} translations identical to Argos' own "
          f"(apply_packaged_translation on CTranslate2); GET /languages {languages}")
    assert languages == [{"code": "en", "name": "English", "targets": ["de"]}], languages
    for i, (a, b) in enumerate(zip(got, expected)):
        if a != b:
            k = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), min(len(a), len(b)))
            print(f"argos sentence {i + 1} differs at character {k} of {len(a)}/{len(b)}: attn {a[k - 20:k + 40]!r} "
                  f"argos {b[k - 20:k + 40]!r}")
    assert same == len(en)


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--attn", required=True)
    a.add_argument("--keep", help="keep the models in this directory")
    args = a.parse_args()
    attn = os.path.abspath(args.attn)
    en = lines_of(os.path.join(CORPUS, "dev.en"), SENTENCES)
    de = lines_of(os.path.join(CORPUS, "dev.de"), SENTENCES)
    work = args.keep or tempfile.mkdtemp(prefix="attn-ct2-")
    os.makedirs(work, exist_ok=True)
    try:
        check_model(attn, "gelu-random", make_marian(os.path.join(work, "gelu-random"), "--activation", "gelu", "--spread", "2"),
                    work, en, de, [])
        check_model(attn, "swish-trained", make_marian(os.path.join(work, "swish-trained"), "--train-steps", "300"),
                    work, en, de, ["float16", "bfloat16"], allowed_ties=5)
        check_argos(attn, os.path.join(work, "swish-trained"), work, en)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
