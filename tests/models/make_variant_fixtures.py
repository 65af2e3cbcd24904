#!/usr/bin/python3
"""Makes the fixtures of the Transformer variants torch_ref.py does not build: learned positions
(an nn.Embedding(max_len, d_model) table, "pos_embed.weight", added after the sqrt(d_model)
scaling in place of the sinusoids) and the GELU activation in the feed-forward layers
(nn.Transformer(activation="gelu"), erf form). It reuses torch_ref.py's model, training and
greedy search with those two parts swapped, and writes what make_transformer_fixtures.py writes:
config.json, weights.npz, logits_input.txt / logits.txt and src.txt / greedy.txt.
    /usr/bin/python3 tests/models/make_variant_fixtures.py
"""
import importlib.util
import json
import os
import random

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "fixtures", "variants"))
REF = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "reference", "torch_ref.py"))
spec = importlib.util.spec_from_file_location("torch_ref", REF)
torch_ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(torch_ref)


class Variant(torch_ref.Seq2SeqTransformer):
    def __init__(self, cfg):
        super().__init__(cfg)
        d = cfg["d_model"]
        if cfg["activation"] == "gelu":  # the same layers, built again with GELU
            self.transformer = nn.Transformer(
                d_model=d, nhead=cfg["heads"], num_encoder_layers=cfg["encoder_layers"],
                num_decoder_layers=cfg["decoder_layers"], dim_feedforward=cfg["ff"],
                dropout=cfg["dropout"], batch_first=True, norm_first=cfg["norm_first"], activation="gelu")
        if cfg["positions"] == "learned":
            self.pos_embed = nn.Embedding(cfg["max_len"], d)
            nn.init.normal_(self.pos_embed.weight, std=0.5)

    def embed(self, table, ids):
        x = table(ids) * (self.cfg["d_model"] ** 0.5)
        if self.cfg["positions"] == "learned":
            return x + self.pos_embed.weight[: ids.shape[1]]
        return x + self.pe[: ids.shape[1]]


VARIANTS = {  # name: (positions, activation, norm_first, share)
    "learned_gelu_post": ("learned", "gelu", False, True),
    "learned_relu_pre": ("learned", "relu", True, False),
    "sinusoidal_gelu_pre": ("sinusoidal", "gelu", True, True),
}


def main():
    rnd = random.Random(1)
    for i, (name, (positions, activation, norm_first, share)) in enumerate(VARIANTS.items()):
        torch.manual_seed(10 + i)
        cfg = dict(torch_ref.DEFAULTS, src_vocab=44, tgt_vocab=44, d_model=32, heads=4, encoder_layers=2,
                   decoder_layers=2, ff=64, dropout=0.0, norm_first=norm_first, share_embeddings=share,
                   tie_output=share, max_len=64, positions=positions, activation=activation)
        model = Variant(cfg)
        torch_ref.train_reverse(model, 200)
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
        np.savez(os.path.join(d, "weights.npz"),
                 **{k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()})
        src, tgt = "5 9 14 30 7 21 2", "1 21 7 30 14 9 5"
        with open(os.path.join(d, "logits_input.txt"), "w") as f:
            f.write(src + "\n" + tgt + "\n")
        with torch.no_grad():
            memory, pad = model.encode(torch_ref.ids(src))
            logp = model.decode(torch_ref.ids(tgt), memory, pad)[0]
        with open(os.path.join(d, "logits.txt"), "w") as f:
            for row in logp:
                f.write(" ".join(f"{x:.6f}" for x in row.tolist()) + "\n")
        lines = [" ".join(str(rnd.randint(3, 39)) for _ in range(rnd.randint(1, 10))) + " 2" for _ in range(12)]
        with open(os.path.join(d, "src.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(d, "greedy.txt"), "w") as f:
            for line in lines:
                out = model.greedy(torch_ref.ids(line), 20)[0].tolist()
                out = out[: out.index(cfg["eos_id"])] if cfg["eos_id"] in out else out
                f.write(" ".join(map(str, out)) + "\n")
        print(name, "written")


if __name__ == "__main__":
    main()
