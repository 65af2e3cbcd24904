"""One Translator (and one Classifier) used from four Python threads at once gives the results of
serial calls: the models are read-only after loading and each call keeps its own search state;
the GIL is released while they compute."""
import threading
import time

import pytest

import attn


def run_threads(work, n=4):
    results, errors = [None] * n, []

    def body(i):
        try:
            results[i] = work(i)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


@pytest.mark.parametrize("precision", ["fp32", "int8", "bf16"])
def test_four_threads_translate_as_serial(text_model, sentences, precision):
    t = attn.Translator(text_model, precision=precision)
    chunks = [sentences[i::4] for i in range(4)]

    def work(i):
        r = t.translate_batch(chunks[i], beam_size=2 + i % 2, max_decoding_length=24, return_scores=True)
        return [(x.hypotheses, x.scores) for x in r]

    serial = [work(i) for i in range(4)]
    for _ in range(2):
        assert run_threads(work) == serial


def test_four_threads_score_and_classify_as_serial(text_model, sentences, classifier_model):
    t = attn.Translator(text_model)
    c = attn.Classifier(classifier_model)
    src = [s for s in sentences if s]

    def work(i):
        return t.score_batch(src, src[i:] + src[:i]), c.classify_batch(["山水", "河月", "之的"][i % 3:], top_k=2)

    serial = [work(i) for i in range(4)]
    assert run_threads(work) == serial


def test_the_gil_is_released(text_model, sentences):
    """A Python thread keeps counting while another translates, at a good part of the rate it counts
    at while the other sleeps; it would barely count if the GIL were held through the search."""
    t = attn.Translator(text_model)
    ticks = [0]
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()

    def counted(work):
        before, start = ticks[0], time.perf_counter()
        work()
        return (ticks[0] - before) / (time.perf_counter() - start)

    idle = counted(lambda: time.sleep(0.3))
    busy = counted(lambda: t.translate_batch(sentences * 4, beam_size=4, max_decoding_length=80))
    done.set()
    counter.join()
    assert busy > 0.2 * idle, (busy, idle)
