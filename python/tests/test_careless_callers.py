"""Careless callers get a clear answer (issue 50): bytes sources were read as lists of ids (their
bytes' values), a newline inside a source became the unknown piece ⁇, a wrong element type said
only "Unable to cast Python instance to C++ type", and Ctrl-C in a long translate_batch waited for
the whole batch, then discarded it."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import attn
from conftest import CORPUS


@pytest.mark.parametrize("source", [b"A small test.", bytearray(b"A small test.")])
def test_bytes_sources_are_refused_by_name(text_model, source):
    t = attn.Translator(text_model)
    with pytest.raises(TypeError, match=r"^sources\[1\] must be a str, a list of str \(pieces\) or a list of int "
                                        r"\(ids\), got (bytes \(decode it: \.decode\('utf-8'\)\)|bytearray)$"):
        t.translate_batch(["fine", source])
    with pytest.raises(TypeError, match=r"^target_prefix\[0\] must be a str"):
        t.translate_batch(["fine"], target_prefix=[b"Ein"])
    with pytest.raises(TypeError, match=r"^targets\[0\] must be a str"):
        t.score_batch(["fine"], [b"gut"])


def test_a_newline_inside_a_source_names_it(text_model):
    t = attn.Translator(text_model)
    with pytest.raises(ValueError, match=r"^sources\[2\] holds a newline: each entry is one sentence"):
        t.translate_batch(["one", "two", "three\nfour"])
    with pytest.raises(ValueError, match=r"^target_prefix\[0\] holds a newline"):
        t.translate_batch(["one"], target_prefix=["Ein\nzwei"])
    with pytest.raises(ValueError, match=r"^sources\[1\] holds a newline"):
        t.score_batch(["one", "two\n"], ["eins", "zwei"])


@pytest.mark.parametrize("sources,message", [
    ([[5, 6, "7"]], r"^sources\[0\]\[2\] must be an int \(a token id\), got str$"),
    ([[5, True]], r"^sources\[0\]\[1\] must be an int \(a token id\), got bool$"),
    ([["▁a", 7]], r"^sources\[0\]\[1\] must be a str \(a piece\), got int$"),
    ([[5, 2 ** 40]], r"^sources\[0\]\[1\] is not a token id of this model, got 1099511627776$"),
    (["fine", 3.5], r"^sources\[1\] must be a str, a list of str \(pieces\) or a list of int \(ids\), got float$"),
])
def test_type_errors_name_the_argument_and_the_types(text_model, sources, message):
    t = attn.Translator(text_model)
    error = ValueError if "token id of" in message else TypeError
    with pytest.raises(error, match=message):
        t.translate_batch(sources)


def test_score_batch_names_a_line_of_the_wrong_kind(text_model):
    t = attn.Translator(text_model)
    with pytest.raises(TypeError, match=r"^targets\[1\] must be a str as targets\[0\] is, got list$"):
        t.score_batch(["a", "b"], ["eins", [5, 6]])
    with pytest.raises(TypeError, match=r"^sources\[0\]\[1\] must be an int \(a token id\), got str$"):
        t.score_batch([[5, "x"]], [[5, 6]])


CALLS = textwrap.dedent("""
    import os, sys, time
    import attn
    call, model, data, out = sys.argv[1:5]
    with open(data, encoding="utf-8") as f:
        lines = [line.rstrip("\\n") for line in f if line.strip()]
    if call == "classify_batch":
        c = attn.Classifier(model, threads=1)
        texts = ["山水风的之河月花"[i % 7:] for i in range(300000)]
        work = lambda n: c.classify_batch(texts[:n], max_batch_size=1)
        total = len(texts)
    elif call == "score_batch":
        t = attn.Translator(model, threads=1)
        src = ([line for line in lines if len(line) < 150] * 20)[:20000]
        work = lambda n: t.score_batch(src[:n], src[:n], max_batch_size=1)
        total = len(src)
    elif call == "translate_batch":
        t = attn.Translator(model, threads=1)
        src = lines[:600]
        work = lambda n: t.translate_batch(src[:n], beam_size=4, max_decoding_length=100, max_batch_size=1)
        total = len(src)
    else:
        t = attn.Translator(model, threads=1)
        src = lines[:600]
        def work(n):
            with open(out + ".in", "w", encoding="utf-8") as f:
                f.write("\\n".join(src[:n]) + "\\n")
            t.translate_file(out + ".in", out, beam_size=4, max_decoding_length=100, max_batch_size=1)
        total = len(src)
    start = time.monotonic()
    work(total // 50)  # a fiftieth of the call: what the whole would take
    estimate = (time.monotonic() - start) * 50
    if os.path.exists(out):
        os.remove(out)
    print("working", estimate, flush=True)
    try:
        work(total)
        print("finished", time.monotonic(), flush=True)
    except KeyboardInterrupt:
        print("interrupted", time.monotonic(), flush=True)
""")


@pytest.mark.parametrize("call", ["translate_batch", "translate_file", "score_batch", "classify_batch"])
def test_ctrl_c_interrupts_every_long_call(call, wide_model, classifier_model, tmp_path):
    """Every long call (issue 50: translate_batch waited 20 s for its whole batch, then discarded
    it; translate_file, score_batch and classify_batch 16 to 54 s) raises KeyboardInterrupt after
    the window or batch in progress: the call, estimated from a fiftieth of it to take several
    seconds, ends within 1 s of SIGINT, and translate_file writes no output file."""
    model = classifier_model if call == "classify_batch" else wide_model
    out = tmp_path / "out.txt"
    child = subprocess.Popen([sys.executable, "-c", CALLS, call, model, str(CORPUS / "dev.en"), str(out)],
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        words = child.stdout.readline().split()
        assert words[0] == "working", words
        estimate = float(words[1])
        time.sleep(0.3)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        rest, _ = child.communicate(timeout=120)
    finally:
        child.kill()
    words = rest.split()
    assert words[0] == "interrupted", rest
    assert estimate > 3.0, f"the whole call takes {estimate:.1f} s: too short to show the interruption"
    assert float(words[1]) - sent < 1.0, float(words[1]) - sent
    assert not out.exists(), "an interrupted translate_file writes nothing"
