"""attn.train: the binary's `attn train` in this process.

The run goes on a thread of the extension (attn._attn._TrainRun) while this thread reads the
run's train_log.jsonl, the record of every progress and validation event the binary writes, and
hands each new record to the callback as a dict. Ctrl-C (KeyboardInterrupt) does what SIGINT does
to the binary: the current step ends, a checkpoint is written, and train returns normally.
A second Ctrl-C while that checkpoint is written raises KeyboardInterrupt at once.
"""
import json
import os

from . import _attn


def _flatten(prefix, value, out):
    """{"train": {"max_steps": 5}} -> ["train.max_steps=5"], the keys of --set."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, bool):
        out.append(f"{prefix}={'true' if value else 'false'}")
    else:
        out.append(f"{prefix}={value}")


def _settings(config, overrides):
    """A config file's path (or "") and the --set overrides of a dict config and keyword arguments.

    A keyword's double underscore stands for the dot of a key: train__max_steps=5 is train.max_steps=5.
    """
    sets = []
    path = ""
    if isinstance(config, dict):
        _flatten("", config, sets)
    elif config is not None:
        path = os.fspath(config)
    for key, value in overrides.items():
        _flatten(key.replace("__", "."), value, sets)
    return path, sets


class _LogReader:
    """The complete new lines of a growing train_log.jsonl, as dicts."""

    def __init__(self, path):
        self.path = path
        self.offset = os.path.getsize(path) if os.path.exists(path) else 0

    def read(self):
        if not os.path.exists(self.path):
            return []
        if os.path.getsize(self.path) < self.offset:  # rewritten by a new run
            self.offset = 0
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.offset += end
        events = []
        for line in data[:end].splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue  # a line cut by a kill of an earlier run
        return events


def train(config=None, callback=None, resume=False, **overrides):
    """Trains as `attn train --config CONFIG --set KEY=VALUE ...` does; returns the model directory.

    config: a YAML/JSON file's path, or a dict of the same keys (nested or dotted), or None (the
    defaults). overrides: more keys, as --set (train__max_steps=5 or **{"train.max_steps": 5}).
    callback(event): called with each record the run logs ({"event": "train", "step": ..., "loss":
    ...}, {"event": "valid", ...}), in order, on this thread. resume: as --resume.
    Errors: ValueError for a bad key or value, FileNotFoundError for a missing config file,
    attn.Error for the training's own (its messages are the binary's).
    """
    path, sets = _settings(config, overrides)
    run = _attn._TrainRun(path, sets, bool(resume))
    log = _LogReader(os.path.join(run.model_dir, "train_log.jsonl"))

    def deliver():
        for event in log.read():
            if callback is not None:
                callback(event)

    try:
        while not run.wait(0.1):
            deliver()
    except KeyboardInterrupt:
        _attn._request_stop()  # as the binary's first SIGINT: finish the step, checkpoint, return
        run.wait(None)
    deliver()
    run.finish()
    return run.model_dir
