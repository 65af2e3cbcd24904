"""attn.train: the binary's training in this process, with events to a callback and Ctrl-C as SIGINT."""
import json
import os

import attn
from conftest import CORPUS, head


def tiny(work, name):
    for lang in ("en", "de"):
        path = work / f"tiny.{lang}"
        if not path.exists():
            path.write_text("\n".join(head(CORPUS / f"train.{lang}", 200)) + "\n", encoding="utf-8")
    return {
        "model_dir": str(work / name),
        "data": {"train_src": str(work / "tiny.en"), "train_tgt": str(work / "tiny.de"),
                 "valid_src": "", "valid_tgt": "", "vocab_size": 200},
        "model": {"d_model": 16, "heads": 2, "encoder_layers": 1, "decoder_layers": 1, "d_ff": 32, "max_len": 128},
        "train": {"max_tokens": 300, "threads": 2, "seed": 5, "log_every": 1, "lr": 0.002, "schedule": "constant",
                  "keep_checkpoints": 0},
    }


def logged(model_dir, event):
    with open(os.path.join(model_dir, "train_log.jsonl")) as f:
        return [r for r in map(json.loads, f) if r["event"] == event]


def test_train_runs_with_events(work):
    events = []
    model_dir = attn.train(tiny(work, "run"), callback=events.append, train__max_steps=4)
    steps = [e["step"] for e in events if e["event"] == "train"]
    assert steps == [1, 2, 3, 4]
    assert [e for e in events if e["event"] == "train"] == logged(model_dir, "train")
    assert os.path.exists(os.path.join(model_dir, "model.safetensors"))
    r = attn.Translator(model_dir).translate_batch(["Hello."], max_decoding_length=5)
    assert len(r[0].ids[0]) <= 5


def test_the_yaml_file_and_dotted_keys(work):
    config = tiny(work, "yaml")
    path = work / "tiny.json"  # JSON is YAML
    path.write_text(json.dumps(config))
    model_dir = attn.train(str(path), **{"train.max_steps": 2, "model.d_ff": 24})
    assert json.load(open(os.path.join(model_dir, "config.json")))["d_ff"] == 24
    assert [e["step"] for e in logged(model_dir, "train")] == [1, 2]


def test_ctrl_c_stops_gracefully(work):
    """A KeyboardInterrupt (here raised by the callback at step 2) ends the run as SIGINT ends the
    binary's: the step finishes, a checkpoint is written, train returns the model directory."""
    seen = []

    def interrupt(event):
        seen.append(event)
        if event["event"] == "train" and event["step"] == 2:
            raise KeyboardInterrupt

    model_dir = attn.train(tiny(work, "stopped"), callback=interrupt, train__max_steps=500)
    last = logged(model_dir, "train")[-1]["step"]
    assert 2 <= last < 500
    assert os.listdir(os.path.join(model_dir, "checkpoints"))


def test_sigint_stops_gracefully(work):
    """A real SIGINT to this process (Ctrl-C) while training: the same graceful stop."""
    import signal
    import threading

    fired = []

    def on_event(event):
        if event["event"] == "train" and not fired:
            fired.append(event["step"])
            threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT)).start()

    model_dir = attn.train(tiny(work, "sigint"), callback=on_event, train__max_steps=2000)
    last = logged(model_dir, "train")[-1]["step"]
    assert fired and last < 2000
    assert os.listdir(os.path.join(model_dir, "checkpoints"))
