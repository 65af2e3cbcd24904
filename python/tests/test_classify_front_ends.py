"""The three front ends of the library's classification give the same labels: attn classify (the
binary), attn serve's /v1/classify (a real server on a free port) and attn.Classifier, on the same
model, texts and top_k, each naming the option its own way (--top-k, "top_k", top_k) from the
library's one table of classification options (classify/options.h), with one rule for a top_k
above the model's labels (all of them) and one message for a bad value. Scoring's one option
(attn score --batch, score_batch's max_batch_size) is checked for its message too."""
import pytest

import attn
from conftest import post_json, run_attn, serving

# Non-blank texts (the server refuses a blank one; the CLI and Python give it no labels).
TEXTS = ["山水风", "河月花花", "的之山", "月之的河", "风", "花月", "山之河"]
HINT = " (see attn classify --help)"


@pytest.fixture(scope="module")
def server(classifier_model):
    """attn serve on a free port with the test classifier as "c"; its base address."""
    with serving(f"c={classifier_model}") as base:
        yield base


def cli_labels(classifier_model, *flags):
    _, out, _ = run_attn("classify", "--model", classifier_model, *flags, stdin="\n".join(TEXTS) + "\n")
    rows = [line.split("\t") for line in out.splitlines()]
    return [[(r[i], float(r[i + 1])) for i in range(0, len(r), 2)] for r in rows]


def cli_error(*args, stdin="a\n"):
    code, _, message = run_attn(*args, stdin=stdin, check=False)
    assert code != 0
    return message


# top_k as each front end gives it; None: not given (the table's default, 1). 5 is above the
# model's two labels: every front end gives both.
@pytest.mark.parametrize("top_k", [None, 1, 2, 5, 1 << 20])
def test_cli_server_and_python_agree(classifier_model, server, top_k):
    flags = [] if top_k is None else ["--top-k", top_k]
    fields = {} if top_k is None else {"top_k": top_k}
    keywords = {} if top_k is None else dict(top_k=top_k)
    cli = cli_labels(classifier_model, *flags)
    status, answer = post_json(server, "/v1/classify", {"model": "c", "text": TEXTS, **fields})
    assert status == 200, answer
    served = [[(t["label"], t["probability"]) for t in c["top"]] for c in answer["classes"]]
    python = attn.Classifier(classifier_model).classify_batch(TEXTS, **keywords)
    assert len(cli) == len(served) == len(python) == len(TEXTS)
    want = min(top_k or 1, 2)
    for i, (c, s, p) in enumerate(zip(cli, served, python)):
        assert len(c) == len(s) == len(p) == want, (top_k, i, c, s, p)
        assert [label for label, _ in c] == [label for label, _ in s] == [label for label, _ in p], (top_k, i)
        for (_, cp), (_, sp), (_, pp) in zip(c, s, p):
            assert abs(cp - sp) <= 5e-5 and abs(cp - pp) <= 5e-5, (top_k, i, c, s, p)  # the CLI prints 4 decimals
            assert abs(sp - pp) <= 1e-6, (top_k, i, s, p)


def same(a, b, tolerance):
    """Per text the same labels in the same order, probabilities within `tolerance`."""
    return len(a) == len(b) and all(
        [x for x, _ in s] == [y for y, _ in t] and all(abs(p - q) <= tolerance for (_, p), (_, q) in zip(s, t))
        for s, t in zip(a, b))


def test_batching_does_not_change_the_labels(classifier_model):
    """Each text is padded alone: a batch changes its probabilities only by the products' rounding."""
    c = attn.Classifier(classifier_model)
    whole = c.classify_batch(TEXTS, top_k=2)
    assert same(c.classify_batch(TEXTS, top_k=2, max_batch_size=1), whole, 1e-6)
    assert same(c.classify_batch(TEXTS, top_k=2, max_batch_size=3), whole, 1e-6)
    assert same(cli_labels(classifier_model, "--top-k", 2, "--batch", 1), cli_labels(classifier_model, "--top-k", 2),
                1e-4)


@pytest.mark.parametrize("top_k", [0, -3, (1 << 20) + 1])
def test_a_bad_top_k_has_one_message(classifier_model, server, top_k):
    cli = cli_error("classify", "--model", classifier_model, "--top-k", top_k)
    assert cli.startswith("--top-k needs a whole number in 1 .. 1048576") and cli.endswith(HINT), cli
    with pytest.raises(ValueError) as e:
        attn.Classifier(classifier_model).classify_batch(TEXTS, top_k=top_k)
    assert str(e.value) == cli
    status, answer = post_json(server, "/v1/classify", {"model": "c", "text": TEXTS, "top_k": top_k})
    assert status == 400
    assert answer["error"] == cli[:-len(HINT)].replace("--top-k", '"top_k"')


def test_a_bad_batch_has_one_message(classifier_model, text_model):
    cli = cli_error("classify", "--model", classifier_model, "--batch", 0)
    with pytest.raises(ValueError) as e:
        attn.Classifier(classifier_model).classify_batch(TEXTS, max_batch_size=0)
    assert str(e.value) == cli
    cli = cli_error("score", "--model", text_model, "--src", "s", "--tgt", "t", "--batch", 70000)
    assert cli.startswith("--batch needs a whole number in 1 .. 65536"), cli
    with pytest.raises(ValueError) as e:
        attn.Translator(text_model).score_batch(["a"], ["b"], max_batch_size=70000)
    assert str(e.value) == cli


def test_the_server_refuses_what_is_not_an_option(server):
    for field, value in (("topk", 2), ("max_batch_size", 4)):  # a misspelling; an option of the CLI and Python only
        status, answer = post_json(server, "/v1/classify", {"model": "c", "text": TEXTS, field: value})
        assert status == 400 and f'unknown field "{field}"' in answer["error"], answer
    status, answer = post_json(server, "/v1/classify", {"model": "c", "text": TEXTS, "top_k": 2.5})
    assert status == 400 and '"top_k" must be a whole number' in answer["error"], answer
