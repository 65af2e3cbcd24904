"""attn.Classifier against attn classify on the same model and texts."""
import attn
from conftest import run_attn

TEXTS = ["山水风", "河月花花", "", "的之山", "月之的河", "风"]


def test_classify_batch_is_the_binarys(classifier_model):
    c = attn.Classifier(classifier_model)
    assert sorted(c.labels) == ["he", "shan"]
    for k in (1, 2, 5):
        got = c.classify_batch(TEXTS, top_k=k, max_batch_size=4)
        lines = ["\t".join(f"{label}\t{p:.4f}" for label, p in top) for top in got]
        want = run_attn("classify", "--model", classifier_model, "--top-k", k, "--batch", 4,
                        stdin="\n".join(TEXTS) + "\n")[1].splitlines()
        assert lines == want
        assert got[2] == []  # the blank text
        assert all(len(top) == min(k, 2) for top, t in zip(got, TEXTS) if t)


def test_probabilities_sum_to_one(classifier_model):
    got = attn.Classifier(classifier_model).classify_batch(TEXTS, top_k=2)
    for top, text in zip(got, TEXTS):
        if text:
            assert abs(sum(p for _, p in top) - 1) < 1e-5
            assert top[0][1] >= top[1][1]
