"""The three front ends of one library Translator give the same translations: attn translate (the
binary), attn serve's /v1/translate (a real server on a free port) and attn.Translator, on the same
model, sentences and options. Each option set is named the way each front end names it (flags,
JSON fields, keyword arguments), all from the library's one table of options."""
import json

import pytest

import attn
from conftest import post_json, run_attn, serving

# (flags of attn translate, JSON fields of /v1/translate, keyword arguments of translate_batch)
CASES = [
    ("--beam 4", {"beam": 4}, dict(beam_size=4)),
    ("--beam 1 --max-len 12", {"beam_size": 1, "max_len": 12}, dict(beam_size=1, max_decoding_length=12)),
    ("--beam 3 --n-best 2 --length-penalty 1", {"beam": 3, "n_best": 2, "length_penalty": 1.0},
     dict(beam_size=3, num_hypotheses=2, length_penalty=1.0)),
    ("--sampling-topk 8 --sampling-temperature 0.7 --seed 11 --max-len 14",
     {"sampling_topk": 8, "sampling_temperature": 0.7, "seed": 11, "max_decoding_length": 14},
     dict(sampling_topk=8, sampling_temperature=0.7, seed=11, max_decoding_length=14)),
    ("--beam 2 --min-len 4 --no-repeat-ngram 2 --repetition-penalty 1.3 --max-len-a 0.5 --max-len-b 8",
     {"beam": 2, "min_decoding_length": 4, "no_repeat_ngram_size": 2, "repetition_penalty": 1.3, "max_len_a": 0.5,
      "max_len_b": 8},
     dict(beam_size=2, min_decoding_length=4, no_repeat_ngram_size=2, repetition_penalty=1.3, max_len_a=0.5,
          max_len_b=8)),
]


@pytest.fixture(scope="module")
def server(text_model):
    """attn serve on a free port with the test model as "m"; its base address."""
    with serving(f"m={text_model}") as base:
        yield base


def post(base, body):
    status, answer = post_json(base, "/v1/translate", body)
    assert status == 200, answer
    return answer


@pytest.mark.parametrize("flags,fields,keywords", CASES)
def test_cli_server_and_python_agree(text_model, sentences, server, flags, fields, keywords):
    source = [s for s in sentences if s.strip()]
    _, out, _ = run_attn("translate", "--model", text_model, "--output-format", "jsonl", *flags.split(),
                         stdin="\n".join(source) + "\n")
    cli = [json.loads(line) for line in out.splitlines()]
    served = post(server, {"model": "m", "text": source, **fields})["translations"]
    python = attn.Translator(text_model).translate_batch(source, return_scores=True, **keywords)
    assert len(cli) == len(served) == len(python) == len(source)
    n_best = "num_hypotheses" in keywords
    for i, (c, s, p) in enumerate(zip(cli, served, python)):
        assert s["text"] == c["text"] and s["ids"] == c["ids"], (flags, i, s, c)
        assert p.hypotheses[0] == c["text"] and p.ids[0] == c["ids"], (flags, i, p, c)
        assert abs(s["score"] - c["score"]) <= 1e-4 and abs(p.scores[0] - c["score"]) <= 1e-4, (flags, i)
        if n_best:
            assert [h["text"] for h in s["n_best"]] == [h["text"] for h in c["n_best"]] == p.hypotheses, (flags, i)


def test_the_option_sets_are_told_apart(text_model, sentences):
    """Each option set changes the translations, so the agreement above checks every option's path."""
    source = "\n".join(s for s in sentences if s.strip()) + "\n"
    outputs = {run_attn("translate", "--model", text_model, *flags.split(), stdin=source)[1] for flags, _, _ in CASES}
    assert len(outputs) == len(CASES)
