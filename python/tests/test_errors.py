"""Each bad input of the binary's table (docs/reliability.md) raises a Python exception with the
binary's message: ValueError for a bad argument, FileNotFoundError for a missing file or
directory, attn.Error for the rest (a corrupt model, a search the model cannot do)."""
import json
import shutil

import numpy as np
import pytest

import attn
from conftest import run_attn


def cli_error(*args, stdin="a\n"):
    code, _, message = run_attn(*args, stdin=stdin, check=False)
    assert code != 0
    return message


@pytest.mark.parametrize("options,flags", [
    (dict(beam_size=20000), ["--beam", 20000]),
    (dict(beam_size=4294967297), ["--beam", 4294967297]),
    (dict(length_penalty=float("nan")), ["--length-penalty", "nan"]),
    (dict(beam_size=2, num_hypotheses=3), ["--beam", 2, "--n-best", 3]),
    (dict(sampling_topk=5, beam_size=3), ["--sampling-topk", 5, "--beam", 3]),
    (dict(on_long="drop"), ["--on-long", "drop"]),
    (dict(max_decoding_length=100000), ["--max-len", 100000]),
])
def test_bad_options_raise_value_error(text_model, options, flags):
    t = attn.Translator(text_model)
    with pytest.raises(ValueError) as e:
        t.translate_batch(["a"], **options)
    assert str(e.value) == cli_error("translate", "--model", text_model, *flags)


@pytest.mark.parametrize("empty", [[], ()])
def test_empty_model_list_raises_value_error(empty):
    # issue 50: attn.Translator([]) read the first entry of an empty list and crashed Python
    with pytest.raises(ValueError, match="at least one model directory"):
        attn.Translator(empty)


def test_bad_threads_and_precision(text_model, classifier_model):
    with pytest.raises(ValueError) as e:
        attn.Translator(text_model, threads=100000)
    assert str(e.value) == cli_error("translate", "--model", text_model, "--threads", 100000)
    with pytest.raises(ValueError) as e:
        attn.Translator(text_model, precision="fp8")
    assert str(e.value) == cli_error("translate", "--model", text_model, "--precision", "fp8")
    with pytest.raises(ValueError) as e:
        attn.Classifier(classifier_model).classify_batch(["山"], top_k=0)
    assert str(e.value) == cli_error("classify", "--model", classifier_model, "--top-k", 0)


def test_bad_arguments(text_model):
    t = attn.Translator(text_model)
    with pytest.raises(ValueError, match="batch_type"):
        t.translate_batch(["a"], batch_type="sentences")
    with pytest.raises(TypeError, match="beam"):
        t.translate_batch(["a"], beam=2)
    with pytest.raises(ValueError, match="line counts differ"):
        t.score_batch(["a", "b"], ["c"])
    with pytest.raises(ValueError) as e:  # an id past the vocabulary, as --ids reads it
        t.translate_batch([[5, 100000]])
    assert str(e.value).replace("sources:1", "<stdin>:1") == cli_error(
        "translate", "--model", text_model, "--ids", stdin="5 100000\n")


def test_missing_files_raise_file_not_found(text_model, work):
    missing = str(work / "no_such_model")
    with pytest.raises(FileNotFoundError) as e:
        attn.Translator(missing)
    assert str(e.value) == cli_error("translate", "--model", missing)
    with pytest.raises(FileNotFoundError) as e:
        attn.Classifier(missing)
    assert str(e.value) == cli_error("classify", "--model", missing)
    with pytest.raises(FileNotFoundError):
        attn.load_model(missing)
    with pytest.raises(FileNotFoundError) as e:
        attn.Translator(text_model).translate_file(str(work / "no.en"), str(work / "no.de"))
    assert str(e.value) == cli_error("translate", "--model", text_model, "--input", work / "no.en")
    with pytest.raises(FileNotFoundError):
        attn.train(str(work / "no.yaml"))


def corrupt_copy(text_model, work, name, change):
    d = work / name
    shutil.copytree(text_model, d, dirs_exist_ok=True)
    config = json.loads((d / "config.json").read_text())
    change(config)
    (d / "config.json").write_text(json.dumps(config))
    return str(d)


@pytest.mark.parametrize("name,change", [
    ("max_len_huge", lambda c: c.update(max_len=1e18)),
    ("layers_huge", lambda c: c.update(encoder_layers=4294967296)),
    ("d_model_real", lambda c: c.update(d_model=32.7)),
    ("eos_wrapped", lambda c: c.update(eos_id=4294967298)),
])
def test_corrupt_models_raise_attn_error(text_model, work, name, change):
    d = corrupt_copy(text_model, work, name, change)
    with pytest.raises(attn.Error) as e:
        attn.Translator(d)
    assert str(e.value) == cli_error("translate", "--model", d)
    with pytest.raises(attn.Error):
        attn.load_model(d)


def test_nan_weight_raises_attn_error(text_model, work):
    d = work / "nan_model"
    shutil.copytree(text_model, d, dirs_exist_ok=True)
    m = attn.load_model(str(d))
    w = {k: np.array(v) for k, v in m.weights().items()}
    key = sorted(w)[0]
    w[key].flat[3] = np.nan
    with pytest.raises(ValueError, match="nan"):
        attn.save_model(str(d), m.config, w)


def test_beam_wider_than_vocabulary_raises_attn_error(text_model):
    with pytest.raises(attn.Error) as e:
        attn.Translator(text_model).translate_batch(["a"], beam_size=1000)
    assert str(e.value) == cli_error("translate", "--model", text_model, "--beam", 1000)


def test_bad_training_settings_raise_value_error(work):
    for sets in (["model.max_len=1000000000000000000"], ["train.lr=-1"], ["model=rnn", "model.heads=3"]):
        kwargs = dict(s.split("=", 1) for s in sets)
        with pytest.raises(ValueError) as e:
            attn.train(None, **{k: v for k, v in kwargs.items()}, model_dir=str(work / "never"))
        assert str(e.value) == cli_error("train", *[x for s in sets for x in ("--set", s)],
                                         "--set", f"model_dir={work / 'never'}", stdin=None)
