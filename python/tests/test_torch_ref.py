"""attn.Translator on a torch_ref.py model (tests/fixtures/transformer, imported with `attn
import-torch`: ids only, no tokenizer) against PyTorch's own outputs for it: beam 4 and greedy
search (torch_ref.py's beam_search), and the score of given targets."""
import pytest

import attn
from conftest import SOURCE_DIR, run_attn

FIXTURE = SOURCE_DIR / "tests" / "fixtures" / "transformer" / "post_unshared_l3_h8"


def ids(name):
    return [[int(x) for x in line.split()] for line in (FIXTURE / name).read_text().splitlines()]


@pytest.fixture(scope="module")
def torch_model(work):
    model = work / "post_unshared_l3_h8"
    if not model.exists():
        run_attn("import-torch", FIXTURE, model)
    return attn.Translator(str(model), threads=1)


def test_beam_and_greedy_equal_torch_ref(torch_model):
    src = ids("src.txt")
    beam = torch_model.translate_batch(src, beam_size=4, length_penalty=0.6, max_decoding_length=20, max_batch_size=5)
    assert [r.hypotheses[0] for r in beam] == ids("beam4.txt")
    greedy = torch_model.translate_batch(src, beam_size=1, max_decoding_length=20)
    assert [r.hypotheses[0] for r in greedy] == ids("greedy.txt")


def test_score_equals_torch_ref(torch_model):
    want = [float(x) for x in (FIXTURE / "score.txt").read_text().split()]
    got = torch_model.score_batch(ids("src.txt"), ids("tgt.txt"))
    assert got == pytest.approx(want, abs=1e-4)


def test_text_for_a_model_without_tokenizer_is_a_value_error(torch_model):
    with pytest.raises(ValueError, match="tokenizer"):
        torch_model.translate_batch(["Hello."])
