"""attn.Translator against the attn binary on the same model and sentences: translations,
n-best lists with scores, alignments, scores of given targets, every decoding option, files."""
import json

import numpy as np
import pytest

import attn
from conftest import run_attn

MAX = 24  # output tokens: a 30-step model repeats itself to the length limit; this keeps it quick


@pytest.fixture(scope="module")
def translator(text_model):
    return attn.Translator(text_model)


def cli_lines(model, sentences, *flags):
    return run_attn("translate", "--model", model, *flags, stdin="\n".join(sentences) + "\n")[1].splitlines()


def best(results):
    return [r.hypotheses[0] if r.hypotheses else "" for r in results]


def test_translate_batch_is_the_binarys(translator, text_model, sentences):
    got = best(translator.translate_batch(sentences, max_decoding_length=MAX))
    assert got == cli_lines(text_model, sentences, "--max-len", MAX)
    assert got[5] == ""  # the blank line
    assert any(got)


def test_nbest_with_scores_is_the_binarys(translator, text_model, sentences):
    results = translator.translate_batch(sentences, beam_size=5, num_hypotheses=3, return_scores=True,
                                         max_decoding_length=MAX)
    lines = []
    for i, r in enumerate(results):
        assert len(r.hypotheses) == len(r.scores) == len(r.logprobs)
        lines += [f"{i} ||| {h} ||| {s:.6f}" for h, s in zip(r.hypotheses, r.scores)]
    assert lines == cli_lines(text_model, sentences, "--beam", 5, "--n-best", 3, "--max-len", MAX)
    assert all(r.scores == sorted(r.scores, reverse=True) for r in results)


def test_alignment_and_attention_are_the_binarys(translator, text_model, sentences):
    results = translator.translate_batch(sentences, beam_size=2, max_decoding_length=MAX, return_alignment=True,
                                         return_attention=True)
    hard = cli_lines(text_model, sentences, "--beam", 2, "--max-len", MAX, "--alignment", "hard")
    soft = cli_lines(text_model, sentences, "--beam", 2, "--max-len", MAX, "--alignment", "soft",
                     "--output-format", "jsonl")
    for r, line, record in zip(results, hard, soft):
        record = json.loads(record)
        if not r.hypotheses:
            assert "alignment" not in record
            continue
        pairs = " ".join(f"{i}-{j}" for i, j in r.alignment[0])
        assert line == f"{r.hypotheses[0]} ||| {pairs}"
        a = r.attention[0]
        assert a.dtype == np.float32 and a.shape == (len(r.ids[0]), len(record["source_tokens"]))
        np.testing.assert_allclose(a, np.array(record["alignment"], dtype=np.float32), rtol=1e-6, atol=1e-7)


def test_score_batch_is_the_binarys(translator, text_model, sentences, work):
    src = [s for s in sentences if s]
    tgt = [f"Satz {i}." for i in range(len(src))]
    (work / "s.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    (work / "s.de").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    out = run_attn("score", "--model", text_model, "--src", work / "s.en", "--tgt", work / "s.de")[1].split()
    got = translator.score_batch(src, tgt)
    assert [f"{x:.6f}" for x in got] == out
    assert all(x < 0 for x in got)


OPTIONS = [  # keyword arguments and the binary's flags
    (dict(sampling_topk=10, sampling_temperature=0.8, seed=7, beam_size=1, num_hypotheses=2),
     ["--sampling-topk", 10, "--sampling-temperature", 0.8, "--seed", 7, "--beam", 1, "--n-best", 2]),
    (dict(sampling_topp=0.9, seed=3, beam_size=1), ["--sampling-topp", 0.9, "--seed", 3, "--beam", 1]),
    (dict(no_repeat_ngram_size=2, repetition_penalty=1.3, min_decoding_length=5, length_penalty=0.2),
     ["--no-repeat-ngram", 2, "--repetition-penalty", 1.3, "--min-len", 5, "--length-penalty", 0.2]),
    (dict(max_batch_size=40, batch_type="tokens"), ["--batch-tokens", 40]),
    (dict(max_batch_size=3), ["--batch", 3]),
]


@pytest.mark.parametrize("options,flags", OPTIONS)
def test_decoding_options_are_the_binarys(translator, text_model, sentences, options, flags):
    results = translator.translate_batch(sentences, max_decoding_length=MAX, **options)
    n_best = "--n-best" in flags
    got = []
    for i, r in enumerate(results):
        got += [f"{i} ||| {h}" for h in r.hypotheses] if n_best else [r.hypotheses[0] if r.hypotheses else ""]
    want = cli_lines(text_model, sentences, "--max-len", MAX, *flags)
    if n_best:
        want = [" ||| ".join(line.split(" ||| ")[:2]) for line in want]
    assert got == want


def test_target_prefix_is_the_binarys(translator, text_model, sentences, work):
    prefixes = ["Die" if s else "" for s in sentences]
    (work / "prefix.de").write_text("\n".join(prefixes) + "\n", encoding="utf-8")
    got = best(translator.translate_batch(sentences, target_prefix=prefixes, max_decoding_length=MAX))
    assert got == cli_lines(text_model, sentences, "--max-len", MAX, "--prefix", work / "prefix.de")
    assert all(g.startswith("Die") for g, s in zip(got, sentences) if s)


def test_token_sources(translator, text_model, sentences):
    """Ids are fed as given (the binary's --ids); pieces become their ids with eos, as text does."""
    ids = [r.ids[0] for r in translator.translate_batch(sentences[:3], max_decoding_length=MAX)]
    tok = attn.Translator(text_model)
    by_pieces = tok.translate_batch([r.tokens[0] for r in tok.translate_batch(sentences[:3], max_decoding_length=MAX)],
                                    max_decoding_length=MAX)
    assert [r.hypotheses[0] for r in by_pieces] == [r.tokens[0] for r in by_pieces]
    id_lines = [" ".join(map(str, x)) for x in ids]
    got = translator.translate_batch([x for x in ids], max_decoding_length=MAX)
    want = cli_lines(text_model, id_lines, "--ids", "--max-len", MAX)
    assert [" ".join(map(str, r.hypotheses[0])) for r in got] == want


def test_translate_file_is_the_binarys(translator, text_model, sentences, work):
    (work / "in.en").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    translator.translate_file(str(work / "in.en"), str(work / "out.de"), progress=False, max_decoding_length=MAX)
    assert (work / "out.de").read_text(encoding="utf-8").splitlines() == cli_lines(text_model, sentences, "--max-len", MAX)


def test_shortlist_is_the_binarys(text_model, sentences, work):
    shortlist = work / "shortlist.safetensors"
    run_attn("shortlist", "--model", text_model, "--corpus", work / "train.en", work / "train.de",
             "--output", shortlist, "--top-k", 5, "--frequent", 10)
    listed = attn.Translator(text_model, shortlist=str(shortlist))
    got = best(listed.translate_batch(sentences, beam_size=4, max_decoding_length=MAX))
    assert got == cli_lines(text_model, sentences, "--max-len", MAX, "--shortlist", shortlist)
    plain = best(attn.Translator(text_model).translate_batch(sentences, beam_size=4, max_decoding_length=MAX))
    assert got != plain  # 5 pieces per source piece and 10 frequent ones bite on a 300-piece vocabulary
    with pytest.raises(attn.Error, match="train.en"):
        attn.Translator(text_model, shortlist=str(work / "train.en"))  # not a shortlist file
