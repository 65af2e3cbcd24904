"""attn.load_model(dir).weights(): numpy arrays over the model's own memory (no copies), read-only
unless asked; attn.save_model writes a model directory back from arrays."""
import shutil

import numpy as np
import pytest

import attn
from conftest import run_attn


def test_weights_view_the_models_memory(text_model):
    m = attn.load_model(text_model)
    w = m.weights()
    assert len(w) > 10 and all(a.dtype == np.float32 for a in w.values())
    again = m.weights()
    for key, a in w.items():
        assert np.shares_memory(a, again[key])  # one buffer: the model's tensor
        assert not a.flags.writeable and not a.flags.owndata
        assert a.base is not None
    embedding = next(k for k in w if "embed" in k)
    assert w[embedding].shape[0] == m.config["src_vocab"]


def test_writable_weights_change_the_model(text_model):
    m = attn.load_model(text_model)
    key = sorted(m.weights())[0]
    before = np.array(m.weights()[key])
    m.weights(writable=True)[key][...] += 1.0
    np.testing.assert_array_equal(m.weights()[key], before + 1.0)
    with pytest.raises(ValueError):
        m.weights()[key][...] = 0.0  # read-only


def test_arrays_outlive_the_model(text_model):
    w = attn.load_model(text_model).weights()  # the Model is gone; its storage is not
    assert all(np.isfinite(a).all() for a in w.values())


def test_save_model_round_trip(text_model, work, sentences):
    m = attn.load_model(text_model)
    out = work / "saved"
    out.mkdir(exist_ok=True)
    shutil.copy(f"{text_model}/spm.model", out / "spm.model")
    attn.save_model(str(out), m.config, {k: np.array(v) for k, v in m.weights().items()})
    back = attn.load_model(str(out)).weights()
    assert sorted(back) == sorted(m.weights())
    for key, a in m.weights().items():
        np.testing.assert_array_equal(back[key], a)
    stdin = "\n".join(sentences[:4]) + "\n"
    assert run_attn("translate", "--model", out, "--max-len", 20, stdin=stdin)[1] == \
        run_attn("translate", "--model", text_model, "--max-len", 20, stdin=stdin)[1]


def test_torch_round_trip(text_model, work):
    torch = pytest.importorskip("torch")
    m = attn.load_model(text_model)
    tensors = {k: torch.from_numpy(np.array(v)) * 2 for k, v in m.weights().items()}
    out = work / "doubled"
    out.mkdir(exist_ok=True)
    attn.save_model(str(out), m.config, {k: t.numpy() for k, t in tensors.items()})
    for key, a in attn.load_model(str(out)).weights().items():
        np.testing.assert_array_equal(a, m.weights()[key] * 2)
