#!/usr/bin/python3
"""Writes the PyTorch fixtures of tests/rnn/: tests/fixtures/rnn/*.safetensors (and *.json).

  lstm, gru:        nn.LSTM / nn.GRU (2 layers, bidirectional, packed padded batch): input x, lengths,
                    h0 (c0), every weight by its state_dict key; outputs out, h_n (c_n); random upstream
                    gradients d_out, d_h_n (d_c_n); the gradients grad.<name> of sum(out*d_out + ...)
  score_<kind>:     one attention step per score function (seed 004): q, k (= values), padding mask,
                    parameters; out and the gradients of sum(out * d_out)
  seq2seq_<name>:   the whole RNN encoder-decoder (torch_rnn.py): its config (.json), parameters, a batch,
                    the logits, the label-smoothed loss, every parameter's gradient (one training step),
                    and the free-running (teacher forcing 0) logits

Run with Debian's torch:  /usr/bin/python3 tests/rnn/make_rnn_fixtures.py
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ops"))
sys.path.insert(0, HERE)
from make_op_fixtures import save_safetensors  # noqa: E402
from torch_rnn import RnnSeq2Seq, Score, attend  # noqa: E402

OUT = os.path.join(HERE, "..", "fixtures", "rnn")


def f32(t):
    return t.detach().numpy().astype(np.float32)


def uniform_(module, gen, scale=0.5):
    with torch.no_grad():
        for p in module.parameters():
            p.copy_((torch.rand(p.shape, generator=gen) * 2 - 1) * scale)


def rnn_fixture(name, cls):
    gen = torch.Generator().manual_seed(7)
    B, T, I, H, L = 3, 5, 4, 6, 2
    rnn = cls(I, H, L, batch_first=True, bidirectional=True)
    uniform_(rnn, gen)
    x = ((torch.rand(B, T, I, generator=gen) * 2 - 1)).requires_grad_(True)
    lengths = torch.tensor([5, 2, 4])
    h0 = (torch.rand(L * 2, B, H, generator=gen) * 2 - 1).requires_grad_(True)
    lstm = cls is nn.LSTM
    c0 = (torch.rand(L * 2, B, H, generator=gen) * 2 - 1).requires_grad_(True) if lstm else None
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, state = rnn(packed, (h0, c0) if lstm else h0)
    out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=T)
    h_n, c_n = state if lstm else (state, None)
    d_out = torch.rand(out.shape, generator=gen) * 2 - 1
    d_h = torch.rand(h_n.shape, generator=gen) * 2 - 1
    loss = (out * d_out).sum() + (h_n * d_h).sum()
    t = {"x": f32(x), "lengths": lengths.numpy().astype(np.int32), "h0": f32(h0), "out": f32(out),
         "h_n": f32(h_n), "d_out": f32(d_out), "d_h_n": f32(d_h)}
    if lstm:
        d_c = torch.rand(c_n.shape, generator=gen) * 2 - 1
        loss = loss + (c_n * d_c).sum()
        t.update({"c0": f32(c0), "c_n": f32(c_n), "d_c_n": f32(d_c)})
    loss.backward()
    t.update({"grad.x": f32(x.grad), "grad.h0": f32(h0.grad)})
    if lstm:
        t["grad.c0"] = f32(c0.grad)
    for k, p in rnn.named_parameters():
        t["rnn." + k] = f32(p)
        t["grad.rnn." + k] = f32(p.grad)
    save_safetensors(os.path.join(OUT, name + ".safetensors"), t)


def score_fixture(kind):
    gen = torch.Generator().manual_seed(11)
    B, Tq, S = 2, 3, 4
    d_q, d_k = (5, 5) if kind in ("dot", "scaled_dot") else (5, 6)
    score = Score(kind, d_q, d_k)
    uniform_(score, gen)
    q = (torch.rand(B, Tq, d_q, generator=gen) * 2 - 1).requires_grad_(True)
    k = (torch.rand(B, S, d_k, generator=gen) * 2 - 1).requires_grad_(True)
    pad = torch.tensor([[0, 0, 0, 0], [0, 0, 1, 1]], dtype=torch.int32)
    out = attend(score, q, score.keys(k), k, pad)
    d_out = torch.rand(out.shape, generator=gen) * 2 - 1
    (out * d_out).sum().backward()
    t = {"q": f32(q), "k": f32(k), "pad": pad.numpy(), "out": f32(out), "d_out": f32(d_out),
         "grad.q": f32(q.grad), "grad.k": f32(k.grad)}
    for name, p in score.named_parameters():
        t["attention." + name] = f32(p)
        t["grad.attention." + name] = f32(p.grad)
    save_safetensors(os.path.join(OUT, "score_" + kind + ".safetensors"), t)


def seq2seq_fixture(name, config):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(3)
    model = RnnSeq2Seq(config)
    uniform_(model, gen, 0.3)
    pad, bos, eos = config["pad_id"], config["bos_id"], config["eos_id"]
    src = torch.tensor([[5, 6, 7, 8, eos], [9, 4, eos, pad, pad], [3, eos, pad, pad, pad]])
    tgt_in = torch.tensor([[bos, 4, 5, 6], [bos, 7, 8, pad], [bos, 9, pad, pad]])
    tgt_out = torch.tensor([[4, 5, 6, eos], [7, 8, eos, pad], [9, eos, pad, pad]])
    logits = model(src, tgt_in)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad,
                           label_smoothing=0.1)
    loss.backward()
    with torch.no_grad():
        free = model(src, tgt_in, teacher_forcing=0.0)
    t = {"src": src.numpy().astype(np.int32), "tgt_in": tgt_in.numpy().astype(np.int32),
         "tgt_out": tgt_out.numpy().astype(np.int32), "logits": f32(logits), "loss": f32(loss),
         "logits_free": f32(free)}
    for k, p in model.named_parameters():  # tied parameters appear once, under their first name
        t[k] = f32(p)
        t["grad." + k] = f32(p.grad)
    save_safetensors(os.path.join(OUT, "seq2seq_" + name + ".safetensors"), t)
    with open(os.path.join(OUT, "seq2seq_" + name + ".json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    rnn_fixture("lstm", nn.LSTM)
    rnn_fixture("gru", nn.GRU)
    for kind in ("scaled_dot", "dot", "additive", "bilinear"):
        score_fixture(kind)
    base = {"model": "rnn", "src_vocab": 11, "tgt_vocab": 11, "d_model": 8, "encoder_layers": 2,
            "decoder_layers": 2, "dropout": 0.0, "share_embeddings": True, "tie_output": True,
            "rnn_cell": "lstm", "bidirectional": True, "encoder_hidden": 0, "score": "additive",
            "input_feeding": True, "pad_id": 0, "bos_id": 1, "eos_id": 2}
    seq2seq_fixture("lstm_additive", base)
    seq2seq_fixture("lstm_bridge_bilinear", dict(base, encoder_hidden=6, score="bilinear", tie_output=False,
                                                 share_embeddings=False))
    seq2seq_fixture("gru_dot", dict(base, rnn_cell="gru", bidirectional=False, score="dot", input_feeding=False,
                                    encoder_layers=1, decoder_layers=1))
    seq2seq_fixture("gru_bridge_additive", dict(base, rnn_cell="gru", encoder_hidden=5, score="additive"))
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
