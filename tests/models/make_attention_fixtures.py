#!/usr/bin/python3
"""Makes tests/fixtures/attention/<config>.npz: every attention weight of torch_ref.py's model
(the committed tests/fixtures/transformer/<config> models) on a padded batch of two sentence
pairs, as PyTorch's nn.MultiheadAttention returns them with need_weights=True and
average_attn_weights=False ([batch, heads, queries, keys]). Keys: src, tgt_in (int32 ids) and
encoder_self.L, decoder_self.L, cross.L (L from 0), float32.
    /usr/bin/python3 tests/models/make_attention_fixtures.py
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REF_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "reference"))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures"))
sys.path.insert(0, REF_DIR)
import torch_ref  # noqa: E402

CONFIGS = ["post_shared_l2_h4", "pre_unshared_l1_h1", "post_unshared_l3_h8", "pre_shared_l3_h2"]
# Two sources, the second padded (pad 0); targets with bos (1) first.
SRC = [[5, 9, 14, 7, 22, 31, 2], [12, 6, 6, 19, 2, 0, 0]]
TGT_IN = [[1, 31, 22, 7, 14, 9], [1, 19, 6, 6, 12, 5]]


def record(mha, store):
    """Wraps mha.forward to ask for every head's weights and keep them in `store`."""
    forward = mha.forward

    def with_weights(query, key, value, **kw):
        kw["need_weights"] = True
        kw["average_attn_weights"] = False
        out, weights = forward(query, key, value, **kw)
        store.append(weights.detach().numpy().astype(np.float32))
        return out, weights

    mha.forward = with_weights


def main():
    torch.set_num_threads(1)
    os.makedirs(os.path.join(FIXTURES, "attention"), exist_ok=True)
    for name in CONFIGS:
        model = torch_ref.load(os.path.join(FIXTURES, "transformer", name))
        enc, dec_self, cross = [], [], []
        for layer in model.transformer.encoder.layers:
            record(layer.self_attn, enc)
        for layer in model.transformer.decoder.layers:
            record(layer.self_attn, dec_self)
            record(layer.multihead_attn, cross)
        # Gradients on: PyTorch's inference fast path (which never returns weights) stays off.
        src, tgt = torch.tensor(SRC), torch.tensor(TGT_IN)
        memory, pad = model.encode(src)
        model.decode(tgt, memory, pad)
        arrays = {"src": np.array(SRC, dtype=np.int32), "tgt_in": np.array(TGT_IN, dtype=np.int32)}
        for stack, maps in (("encoder_self", enc), ("decoder_self", dec_self), ("cross", cross)):
            for i, w in enumerate(maps):
                arrays[f"{stack}.{i}"] = w
        np.savez(os.path.join(FIXTURES, "attention", name + ".npz"), **arrays)
        print("made", name, {k: v.shape for k, v in arrays.items() if k.endswith(".0")}, file=sys.stderr)


if __name__ == "__main__":
    main()
