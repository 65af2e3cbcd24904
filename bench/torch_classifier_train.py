"""PyTorch twin of `attn train --set task=classification`: the same model
(tests/classify/torch_classifier.py), the same vocabulary (built the same way, or read from an attn
model directory with --vocab-from, which also brings its SentencePiece model), the same batching
(batches of --batch texts in a fresh random order each epoch), Adam with the same rate, schedule,
weight decay (L2 on the gradient, as attn), clipping and label smoothing, the weights' moving
average (--ema-decay, attn's train.ema_decay: d_t = min(decay, (1 + t) / (10 + t)), validated and
kept instead of the raw weights), dev evaluation every --validate-every batches and at each epoch's
end, the model at the best dev loss kept, early stopping after --patience batches; --test scores
that kept model once, at the end, on a held-out file. SIGTERM or SIGINT ends the run after the
current batch (one more dev evaluation, then the summary and --test), for a machine too busy to
let it finish. Only the random streams (initialisation, order, dropout) differ from attn's.

  OMP_WAIT_POLICY=passive nice -n 19 /usr/bin/python3 bench/torch_classifier_train.py \
      --train ../shared/data/cls-zh-poetry/train.tsv --dev ../shared/data/cls-zh-poetry/dev.tsv --epochs 3

Prints a line per evaluation and, at the end, one JSON summary line (prefix "summary ")."""
import argparse, copy, json, math, os, signal, sys, time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "classify"))
from torch_classifier import Classifier, build_vocab, evaluate, read_tsv  # noqa: E402


def read_attn_vocab(model_dir):
    """vocab.txt of an attn classifier: "#level=..." then one token per line in id order."""
    lines = open(os.path.join(model_dir, "vocab.txt"), encoding="utf-8").read().split("\n")
    level = lines[0][len("#level="):]
    tokens = lines[1:-1] if lines[-1] == "" else lines[1:]
    return level, {t: i for i, t in enumerate(tokens)}


def tokenizer(level, model_dir):
    if level == "char":
        return list
    if level == "word":
        return str.split
    import sentencepiece as spm  # pip install --target DIR sentencepiece; PYTHONPATH=DIR
    sp = spm.SentencePieceProcessor(model_file=os.path.join(model_dir, "spm.model"))
    return lambda text: sp.encode(text, out_type=str)


def encode(rows, vocab, labels, split, L, cls):
    ids = np.zeros((len(rows), L), dtype=np.int64)
    for i, (_, text) in enumerate(rows):
        seq = (([2] if cls else []) + [vocab.get(t, 1) for t in split(text)])[:L]
        ids[i, :len(seq)] = seq
    return torch.from_numpy(ids), torch.tensor([labels.index(l) for l, _ in rows])


def learning_rate(a, step):  # attn's src/train/schedule.cpp
    t, w = max(step, 1), max(a.warmup, 1)
    if a.schedule == "constant":
        return a.lr * min(1.0, t / w) if a.warmup > 0 else a.lr
    if a.schedule == "inverse_sqrt":
        return a.lr * min(t / w, math.sqrt(w / t))
    return a.lr_factor * a.d_model ** -0.5 * min(t ** -0.5, t * w ** -1.5)  # noam


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add = p.add_argument
    add("--train", required=True); add("--dev", required=True)
    add("--tokens", default="char", help="char | word (spm: use --vocab-from)")
    add("--vocab-from", help="attn classifier directory: use its vocab.txt (and spm.model)")
    add("--max-vocab", type=int, default=10000); add("--min-count", type=int, default=1)
    add("--pad-size", type=int, default=32); add("--d-model", type=int, default=300)
    add("--heads", type=int, default=5); add("--layers", type=int, default=2); add("--d-ff", type=int, default=1024)
    add("--dropout", type=float, default=0.5); add("--pooling", default="flatten")
    add("--mask", action="store_true"); add("--head-split", default="standard")
    add("--schedule", default="constant"); add("--lr", type=float, default=5e-4)
    add("--lr-factor", type=float, default=1.0); add("--warmup", type=int, default=0)
    add("--weight-decay", type=float, default=0.0); add("--clip-norm", type=float, default=0.0)
    add("--label-smoothing", type=float, default=0.0); add("--ema-decay", type=float, default=0.0)
    add("--test", help="held-out label<TAB>text file scored once at the end with the kept model")
    add("--batch", type=int, default=128); add("--epochs", type=int, default=20)
    add("--validate-every", type=int, default=100); add("--patience", type=int, default=1000)
    add("--seed", type=int, default=1); add("--threads", type=int, default=1)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    train_rows, dev_rows = read_tsv(a.train), read_tsv(a.dev)
    labels = sorted({l for l, _ in train_rows})
    if a.vocab_from:
        level, vocab = read_attn_vocab(a.vocab_from)
    else:
        level, vocab = a.tokens, build_vocab(train_rows, a.tokens, a.max_vocab, a.min_count)
    split = tokenizer(level, a.vocab_from)
    c = dict(vocab=len(vocab), classes=len(labels), pad_size=a.pad_size, d_model=a.d_model, heads=a.heads,
             layers=a.layers, d_ff=a.d_ff, dropout=a.dropout, pooling=a.pooling, mask=a.mask, head_split=a.head_split)
    cls = a.pooling == "cls"
    X, Y = encode(train_rows, vocab, labels, split, a.pad_size, cls)
    Xd, Yd = encode(dev_rows, vocab, labels, split, a.pad_size, cls)
    model = Classifier(c)
    ema = copy.deepcopy(model) if a.ema_decay > 0 else None  # attn's src/train/ema.cpp
    kept = model  # what is validated and kept: the average when there is one
    best_state = None
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    print(json.dumps({**c, "tokens": level}), flush=True)
    step, best, epochs_acc, started, train_time, seen = 0, dict(loss=math.inf, acc=0.0, step=0), [], time.time(), 0.0, 0
    per_epoch = (len(Y) + a.batch - 1) // a.batch
    stop = False
    interrupted = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: interrupted.append(True))
    for epoch in range(1, a.epochs + 1):
        perm = torch.randperm(len(Y))
        for b in range(0, len(Y), a.batch):
            t0 = time.time()
            idx = perm[b:b + a.batch]
            loss = F.cross_entropy(model(X[idx]), Y[idx], label_smoothing=a.label_smoothing)
            opt.zero_grad()
            loss.backward()
            if a.clip_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip_norm)
            step += 1
            for g in opt.param_groups:
                g["lr"] = learning_rate(a, step)
            opt.step()
            with torch.no_grad():
                model.embedding.weight[0].zero_()  # padding_idx keeps <PAD> at 0 (weight decay would move it)
            if ema is not None:
                d = min(a.ema_decay, (1 + step) / (10 + step))
                with torch.no_grad():
                    for e, w in zip(ema.parameters(), model.parameters()):
                        e.mul_(d).add_(w, alpha=1 - d)
                kept = ema
            train_time += time.time() - t0
            seen += len(idx)
            last = b + a.batch >= len(Y)
            end = last or bool(interrupted)  # validate once more before stopping
            if end or (a.validate_every > 0 and step % a.validate_every == 0):
                dl, da = evaluate(kept, Xd, Yd)
                better = dl < best["loss"]
                if better:
                    best = dict(loss=dl, acc=da, step=step, epoch=round(step / per_epoch, 2))
                    best_state = copy.deepcopy(kept.state_dict())
                print(f"valid step {step}  epoch {step / per_epoch:.2f}  dev loss {dl:.4f}  dev acc {da * 100:.2f}%"
                      f"{'  new best' if better else ''}  ({time.time() - started:.0f} s)", flush=True)
                if last:
                    epochs_acc.append(round(da, 4))
                if a.patience > 0 and step - best["step"] >= a.patience:
                    print(f"early stop: no better dev loss for {a.patience} batches", flush=True)
                    stop = True
                    break
            if interrupted:
                print(f"interrupted at step {step}: summary and --test from the model kept so far", flush=True)
                stop = True
                break
        if stop:
            break
    summary = dict(best_dev_loss=round(best["loss"], 4), best_dev_accuracy=round(best["acc"], 4), best_step=best["step"],
                   best_epoch=best.get("epoch"), epoch_end_accuracy=epochs_acc, steps=step,
                   train_samples_per_s=round(seen / train_time, 1), seconds=round(time.time() - started))
    if a.test:
        kept.load_state_dict(best_state)
        Xt, Yt = encode(read_tsv(a.test), vocab, labels, split, a.pad_size, cls)
        summary["test_loss"], summary["test_accuracy"] = (round(v, 4) for v in evaluate(kept, Xt, Yt))
    print("summary " + json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
