"""The RNN encoder-decoder of seed 003 in PyTorch: the reference attn's `model: rnn` is checked
against (tests/rnn/make_rnn_fixtures.py). Parameter names are attn's checkpoint keys.

  encoder:  H = BiLSTM(Embed(src))                           (packed: padding never read)
  bridge:   s_0 = tanh(W_h [h_fwd; h_bwd] + b), c_0 = W_c [c_fwd; c_bwd] + b   (when the sizes differ)
  step t:   e_{t,i} = score(s_{t-1}, h_i);  alpha_t = softmax(e_t) over non-pad i;  c_t = sum_i alpha_{t,i} h_i
            s_t = LSTM([Embed(y_{t-1}); c_t], s_{t-1})      (input feeding of the context)
            o_t = tanh(W_o [s_t; c_t] + b_o);  logits_t = o_t W_out^T + b_out
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Score(nn.Module):
    def __init__(self, kind, d_q, d_k):
        super().__init__()
        self.kind = kind
        if kind == "bilinear":
            self.W = nn.Parameter(torch.empty(d_q, d_k))
        elif kind == "additive":
            self.W = nn.Parameter(torch.empty(d_q, d_q))   # W_a [A, d_q], A = d_q
            self.U = nn.Linear(d_k, d_q)                    # U_a [A, d_k] + b
            self.v = nn.Parameter(torch.empty(1, d_q))      # v_a [1, A]

    def keys(self, k):
        return self.U(k) if self.kind == "additive" else k

    def forward(self, q, keys):
        """q [B, Tq, d_q], keys [B, S, .] -> e [B, Tq, S]"""
        if self.kind == "dot":
            return q @ keys.transpose(1, 2)
        if self.kind == "scaled_dot":
            return q @ keys.transpose(1, 2) / math.sqrt(keys.shape[-1])
        if self.kind == "bilinear":
            return (q @ self.W) @ keys.transpose(1, 2)
        wq = q @ self.W.t()                                          # [B, Tq, A]
        hidden = torch.tanh(wq[:, :, None, :] + keys[:, None, :, :])  # [B, Tq, S, A]
        return (hidden @ self.v.t()).squeeze(-1)


def attend(score, q, keys, values, pad):
    e = score(q, keys)
    e = e.masked_fill(pad.bool()[:, None, :], float("-inf"))
    return torch.softmax(e, -1) @ values


class RnnSeq2Seq(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        V, E, D = c["tgt_vocab"], c["d_model"], c["d_model"]
        dirs = 2 if c["bidirectional"] else 1
        He = c["encoder_hidden"] or D // dirs
        self.enc_out = dirs * He
        RNN = nn.LSTM if c["rnn_cell"] == "lstm" else nn.GRU
        self.src_embed = nn.Embedding(V, E)
        self.tgt_embed = self.src_embed if c["share_embeddings"] else nn.Embedding(V, E)
        self.encoder = RNN(E, He, c["encoder_layers"], batch_first=True, bidirectional=c["bidirectional"])
        self.bridged = self.enc_out != D
        if self.bridged:
            self.bridge_h = nn.Linear(self.enc_out, D)
            if c["rnn_cell"] == "lstm":
                self.bridge_c = nn.Linear(self.enc_out, D)
        dec_in = E + self.enc_out if c["input_feeding"] else E
        self.decoder = RNN(dec_in, D, c["decoder_layers"], batch_first=True)
        self.attention = Score(c["score"], D, self.enc_out)
        self.readout = nn.Linear(D + self.enc_out, D)
        self.generator = nn.Linear(D, V)
        if c["tie_output"]:
            self.generator.weight = self.tgt_embed.weight

    def encode(self, src):
        pad = src == self.c["pad_id"]
        lengths = (~pad).sum(1)
        packed = nn.utils.rnn.pack_padded_sequence(self.src_embed(src), lengths, batch_first=True,
                                                   enforce_sorted=False)
        out, state = self.encoder(packed)
        H, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        lstm = self.c["rnn_cell"] == "lstm"
        h_n, c_n = state if lstm else (state, None)
        dirs = 2 if self.c["bidirectional"] else 1
        B = src.shape[0]

        def per_layer(s):  # [layers*dirs, B, He] -> [layers, B, dirs*He]
            return s.view(-1, dirs, B, s.shape[-1]).permute(0, 2, 1, 3).reshape(-1, B, dirs * s.shape[-1])

        h0 = per_layer(h_n)
        c0 = per_layer(c_n) if lstm else None
        if self.bridged:
            h0 = torch.tanh(self.bridge_h(h0))
            c0 = self.bridge_c(c0) if lstm else None
        return H, pad.int(), (h0.contiguous(), c0.contiguous()) if lstm else h0.contiguous()

    def forward(self, src, tgt_in, teacher_forcing=1.0):
        """Logits [B, T, V]; teacher_forcing 0: each step after the first feeds the previous argmax."""
        H, pad, state = self.encode(src)
        keys = self.attention.keys(H)
        lstm = self.c["rnn_cell"] == "lstm"
        logits, prev = [], None
        for t in range(tgt_in.shape[1]):
            y = tgt_in[:, t] if (t == 0 or teacher_forcing >= 1.0) else prev
            s_prev = (state[0] if lstm else state)[-1]                    # top layer [B, D]
            ctx = attend(self.attention, s_prev[:, None, :], keys, H, pad)[:, 0]  # [B, enc_out]
            emb = self.tgt_embed(y)
            x = torch.cat([emb, ctx], -1) if self.c["input_feeding"] else emb
            out, state = self.decoder(x[:, None, :], state)
            s = out[:, 0]
            o = torch.tanh(self.readout(torch.cat([s, ctx], -1)))
            logit = self.generator(o)
            logits.append(logit)
            prev = logit.argmax(-1)
        return torch.stack(logits, 1)
