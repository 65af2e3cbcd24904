"""Makes CTranslate2 model directories from a Hugging Face Marian directory (made by make_marian.py) with
CTranslate2's own converter, and prints CTranslate2's outputs on them as JSON lines, for the import
tests of issue 51 (attn reading CTranslate2 directories must reproduce these outputs token for token).
The decoding rules these outputs follow are in docs/notes/ct2-rules.md.

  convert HF OUT [-q float32 int8 ...]   OUT/<q>/ = TransformersConverter(HF).convert(.., quantization=q),
                                         i.e. model.bin, config.json, shared_vocabulary.json; prints each dir
  run CT2 [--hf HF] [--compute-type T]   one JSON line per sentence and mode: translate_batch with beam 1
                                         and beam 4 (return_scores, default length_penalty 1, so scores are
                                         sum(log p) / (generated tokens incl. eos)), then score_batch of the
                                         beam-4 output and of the reference (log_probs of target + </s>);
                                         a first line holds the version, compute type and every option used
  dump CT2                               model.bin's header, variables (name, dtype, shape, scalar values),
                                         aliases, and config.json / vocabulary file names, as JSON

Sources are the first --lines sentences of the shared corpus' dev.en (references dev.de) tokenized with
the HF directory's MarianTokenizer (so a source ends with </s>: CTranslate2 adds none for Marian), or
--input, a JSON-lines file of {"source": [tokens...], "target": [tokens...]} (target optional, no </s>).

Usage (the reference venv, ctranslate2 4.5.0; use nice -n 19):
  python make_ct2.py convert /tmp/m /tmp/m-ct2 [-q float32 int8 int8_float32 int16 float16 bfloat16]
  python make_ct2.py run /tmp/m-ct2/int8 --hf /tmp/m [--compute-type default|float32|int8|int8_float32|int16]
         [--lines 50] [--input FILE] [--beams 1 4] [--max-decoding-length N] [--batch-size 0] > out.jsonl
  python make_ct2.py dump /tmp/m-ct2/float32
max_decoding_length defaults to min(256, positions - 1): CTranslate2 throws rather than decode past its
position table, and a longer output could not be scored. An untrained make_marian.py model loops to that
length; with make_marian.py --train-steps 300 about half of the outputs on 50 dev sentences end with </s>.
On CPU, float16 / bfloat16 / int8_float16 compute types are refused by CTranslate2 (no CPU support); a
float16 or bfloat16 model.bin runs with compute type "default" (its weights are cast to float32 on load).
Nothing is downloaded."""
import argparse
import json
import os
import struct
import sys

SHARED = os.environ.get("ATTN_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
CORPUS = os.path.join(SHARED, "data", "mt-ende")
QUANTIZATIONS = ["float32", "int8", "int8_float32", "int16", "float16", "bfloat16", "int8_float16", "int8_bfloat16"]
# python/ctranslate2/specs/model_spec.py _dtype_to_type_id (= the DataType enum of include/ctranslate2/types.h)
DTYPES = [("float32", "f", 4), ("int8", "b", 1), ("int16", "h", 2), ("int32", "i", 4), ("float16", "e", 2),
          ("bfloat16", None, 2)]


def convert(args):
    import ctranslate2
    for q in args.quantization:
        out = os.path.join(args.out, q)
        ctranslate2.converters.TransformersConverter(args.hf).convert(out, quantization=q, force=True)
        print(out)


def read_model_bin(path):
    """model.bin as model_spec.py _serialize writes it (binary version 6), little-endian."""
    with open(path, "rb") as f:
        data = f.read()
    at = 0

    def take(fmt):
        nonlocal at
        values = struct.unpack_from("<" + fmt, data, at)
        at += struct.calcsize("<" + fmt)
        return values

    def string():
        nonlocal at
        (n,) = take("H")  # length including the trailing NUL
        s = data[at:at + n - 1].decode("utf-8")
        at += n
        return s

    (version,) = take("I")
    spec = string()
    (revision,) = take("I")
    (count,) = take("I")
    variables = []
    for _ in range(count):
        name = string()
        (rank,) = take("B")
        shape = list(take("%dI" % rank)) if rank else []
        dtype_id, nbytes = take("BI")
        dtype, code, size = DTYPES[dtype_id]
        entry = {"name": name, "dtype": dtype, "shape": shape, "bytes": nbytes, "offset": at}
        if rank == 0 and code:  # attributes (num_heads, pre_norm, activation, scale_embeddings, ...)
            entry["value"] = struct.unpack_from("<" + code, data, at)[0]
        at += nbytes
        variables.append(entry)
    (num_aliases,) = take("I")
    aliases = [[string(), string()] for _ in range(num_aliases)]
    assert at == len(data), (at, len(data))
    return {"binary_version": version, "spec": spec, "revision": revision, "variables": variables,
            "aliases": aliases}


def dump(args):
    info = read_model_bin(os.path.join(args.ct2, "model.bin"))
    info["files"] = sorted(os.listdir(args.ct2))
    with open(os.path.join(args.ct2, "config.json"), encoding="utf-8") as f:
        info["config"] = json.load(f)
    print(json.dumps(info, ensure_ascii=False, indent=1))


def load_examples(args):
    if args.input:
        with open(args.input, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    from transformers import MarianTokenizer
    tok = MarianTokenizer.from_pretrained(args.hf)

    def lines(name):
        with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
            return [next(f).rstrip("\n") for _ in range(args.lines)]

    examples = []
    for en, de in zip(lines("dev.en"), lines("dev.de")):
        source = tok.convert_ids_to_tokens(tok(en).input_ids)              # ends with </s>
        target = tok.convert_ids_to_tokens(tok(text_target=de).input_ids)  # ends with </s>
        examples.append({"source": source, "target": target[:-1] if target[-1:] == ["</s>"] else target})
    return examples


def run(args):
    import ctranslate2
    examples = load_examples(args)
    positions = next(v["shape"][0] for v in read_model_bin(os.path.join(args.ct2, "model.bin"))["variables"]
                     if v["name"] == "decoder/position_encodings/encodings")
    # CTranslate2 throws past its position table (src/layers/common.cc:158): decoding step s reads position s,
    # and scoring a target of n tokens feeds n + 1 (start + target). So the default 256 is capped to positions - 1
    # (then any output can be scored), and score_batch truncates at max_input_length = positions (CTranslate2
    # then keeps </s> last: src/vocabulary.cc:130).
    max_len = args.max_decoding_length or min(256, positions - 1)
    score_max_input = min(1024, positions)
    tr = ctranslate2.Translator(args.ct2, device="cpu", compute_type=args.compute_type, inter_threads=1,
                                intra_threads=args.threads)
    sources = [e["source"] for e in examples]
    options = dict(patience=1, length_penalty=1, coverage_penalty=0, repetition_penalty=1, no_repeat_ngram_size=0,
                   disable_unk=False, return_end_token=True, max_input_length=1024, max_decoding_length=max_len,
                   min_decoding_length=1, return_scores=True, sampling_topk=1)
    print(json.dumps({"ctranslate2": ctranslate2.__version__, "model": os.path.abspath(args.ct2),
                      "compute_type": tr.compute_type, "requested_compute_type": args.compute_type,
                      "batch_size": args.batch_size, "num_hypotheses": args.num_hypotheses, "options": options,
                      "score_max_input_length": score_max_input}))
    outputs = {}
    for beam in args.beams:
        results = tr.translate_batch(sources, beam_size=beam, num_hypotheses=min(args.num_hypotheses, beam),
                                     max_batch_size=args.batch_size, **options)
        for i, r in enumerate(results):
            hyps = []
            for h, s in zip(r.hypotheses, r.scores):
                eos = h[-1:] == ["</s>"]  # return_end_token=True: an eos is kept; without it, the length cut
                hyps.append({"tokens": h[:-1] if eos else h, "eos": eos, "score": s})
            outputs[(i, beam)] = hyps[0]["tokens"]
            print(json.dumps({"id": i, "kind": "translate", "beam": beam, "source": sources[i],
                              "hypotheses": hyps}, ensure_ascii=False))
    for what in ["beam%d" % max(args.beams), "reference"]:
        targets = [outputs[(i, max(args.beams))] if what != "reference" else e.get("target")
                   for i, e in enumerate(examples)]
        keep = [i for i, t in enumerate(targets) if t is not None]
        results = tr.score_batch([sources[i] for i in keep], [targets[i] for i in keep],
                                 max_batch_size=args.batch_size, max_input_length=score_max_input)
        for i, r in zip(keep, results):
            print(json.dumps({"id": i, "kind": "score", "of": what, "source": sources[i], "target": targets[i],
                              "truncated": len(targets[i]) + 1 > score_max_input, "tokens": r.tokens,
                              "log_probs": r.log_probs, "sum": sum(r.log_probs)},
                             ensure_ascii=False))


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = a.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("convert", help="HF Marian directory -> OUT/<quantization>/")
    c.add_argument("hf")
    c.add_argument("out")
    c.add_argument("-q", "--quantization", nargs="+", default=["float32", "int8"], choices=QUANTIZATIONS)
    r = sub.add_parser("run", help="CTranslate2's translate_batch / score_batch outputs as JSON lines")
    r.add_argument("ct2")
    r.add_argument("--hf", help="the HF directory whose tokenizer makes the source tokens (without --input)")
    r.add_argument("--input", help="JSON lines of {source: [...], target: [...]}, instead of the corpus")
    r.add_argument("--lines", type=int, default=50)
    r.add_argument("--compute-type", default="default")
    r.add_argument("--beams", type=int, nargs="+", default=[1, 4])
    r.add_argument("--num-hypotheses", type=int, default=1, help="n-best size for beams > 1")
    r.add_argument("--max-decoding-length", type=int, default=0,
                   help="default: min(256 = CTranslate2's default, the model's positions)")
    r.add_argument("--batch-size", type=int, default=0, help="max_batch_size (0: the whole input at once)")
    r.add_argument("--threads", type=int, default=1, help="intra_threads")
    d = sub.add_parser("dump", help="model.bin variables / aliases and config.json as JSON")
    d.add_argument("ct2")
    args = a.parse_args()
    if args.mode == "run" and not args.input and not args.hf:
        a.error("run needs --hf or --input")
    {"convert": convert, "run": run, "dump": dump}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
