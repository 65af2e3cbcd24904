#!/usr/bin/python3
"""The PyTorch twin of `attn train` (task translation, the default recipe): the model of
../shared/reference/torch_ref.py trained with attn's recipe, for a budget of this process's CPU
time, written as a torch_ref.py directory that `attn import-torch` reads (issue 31's equal-budget
comparison; bench/equal_budget.py runs both sides and scores them with the same decoder).

  OMP_WAIT_POLICY=passive /usr/bin/python3 bench/torch_translation_twin.py --out runs/twin \\
      --spm runs/init/spm.model --init runs/init/ref --attn build/attn --max-cpu-minutes 15 --threads 2

What is the same as attn's recipe (src/train/run_config.cpp, include/attn/train/translation_trainer.h):
- Data: the same SentencePiece model and ids (--spm, through Debian's python3-sentencepiece, the
  library attn links); the same pairs kept (empty or longer than 128 tokens skipped); the same
  batches of at most 2,048 padded tokens a side, bucketed by length and shuffled with attn's own
  generator and seed, in the same order (bench/twin_data.py; tests/train/torch_twin_test.py checks
  the batcher's fingerprint and the first steps against attn's).
- Model: d_model 256, 4 heads, 3+3 layers, d_ff 1024, pre-LN (norm_first) with a final norm on
  each stack, ReLU, sinusoidal positions, shared embeddings tied to the output, dropout 0.
  With --init (attn's initial weights, `attn export-torch` of a run stopped before its first step:
  bench/equal_budget.py makes it) the twin starts from exactly attn's weights; without it, from
  attn's distributions (embeddings N(0, 1/d_model), Xavier-uniform matrices, zero biases, unit
  norms) drawn by torch's generator.
- Loss: cross-entropy with label smoothing 0.1 spread over all classes, pad ignored, the mean over
  the batch's target tokens (attn's loss is defined as PyTorch's).
- Optimizer: Adam (0.9, 0.98, 1e-9), no weight decay; no clipping (the global gradient norm is
  computed every step, as attn does, and a step whose loss or norm is not finite is skipped; 5 in a
  row end the run).
- Schedule: Noam, factor 1, warm-up 400, d_model^-0.5 * min(t^-0.5, t * 400^-1.5), times (1 - p),
  p the fraction of the budget used when step t's rate is taken (CPU time, or steps).
- Clock: --max-cpu-minutes counts this process's CPU time over all threads from before the corpus
  is read (attn's clock starts before it reads the corpus too), plus the CPU time of the attn
  processes that validate (below), as `attn train --set train.clock=cpu` counts its own.
- Validation: every 500 steps and after the last, dev loss (no smoothing) over every dev pair in
  PyTorch, and BLEU/chrF of greedy translations of the first 500 dev sentences; the best by BLEU
  (ties: lower dev loss) is kept and is the output, as attn keeps its best.
- A checkpoint (model and Adam) every 15 minutes of the clock and at the end, as attn writes one.
- Memory: glibc's malloc keeps freed memory (KEEP_FREED below), as attn's block cache does.

What is not the same:
- The arithmetic: PyTorch's kernels and fused operations (nn.Transformer's training path), not
  attn's; --precision bf16 is torch.autocast(bfloat16) (matrix products in bf16, their outputs
  bf16 too, norms, softmax and loss in f32), where attn's bf16 keeps every product's output f32.
- The validation's translations are made by attn (`attn import-torch`, `attn translate --beam 1`,
  `attn bleu`), so both sides pick their best with the same decoder and BLEU; its CPU time is
  charged to the twin's budget. Without --attn the twin does not validate and keeps its last weights.
- Not mirrored because the recipe leaves them off: EMA (train.ema_decay 0), dropout (0),
  accumulation (1), scheduled sampling, early stopping (patience 0).
Writes OUT/config.json + OUT/weights.npz (torch_ref.py's format) + OUT/spm.model, OUT/train_log.jsonl
(the fields of attn's, so `attn plot RUN_DIR OUT` draws both) and OUT/twin.json (steps, CPU seconds).
"""
import argparse
import json
import math
import os
import shutil
import sys
import time

# glibc's malloc told to keep freed memory (no mmap/munmap of each step's large tensors, no trimming),
# as attn's block cache keeps its freed blocks; read by glibc at start, hence the re-exec. On the
# Zen 5 (2 threads, bf16, 40 steps) it took the twin from 3,000 to 3,800 target tokens/s, its system
# time from 9 s to 2 s. --plain-malloc keeps glibc's defaults.
KEEP_FREED = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "68719476736"}
if __name__ == "__main__" and "--plain-malloc" not in sys.argv and \
        any(os.environ.get(k) != v for k, v in KEEP_FREED.items()):
    os.environ.update(KEEP_FREED)
    os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:])
os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before torch loads libgomp
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.normpath(os.path.join(HERE, "..", "..", "shared", "reference")))
import torch_ref  # noqa: E402
import twin_data  # noqa: E402
from torch_bench import logits  # noqa: E402  (torch_ref's decode without the log_softmax)
from twin_attn import bleu_chrf, import_into_attn, translate  # noqa: E402

RECIPE = dict(d_model=256, heads=4, encoder_layers=3, decoder_layers=3, ff=1024, dropout=0.0, norm_first=True,
              share_embeddings=True, tie_output=True, max_len=512, pad_id=0, bos_id=1, eos_id=2)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add = p.add_argument
    data = os.environ.get("ATTN_DATA", os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data", "mt-ende")))
    add("--out", required=True, help="directory to write (torch_ref.py's format, the log and twin.json)")
    add("--spm", required=True, help="the SentencePiece model attn trains with (an attn model directory's spm.model)")
    add("--init", help="torch_ref.py directory of the initial weights (attn export-torch of attn's initial model)")
    add("--attn", help="the attn binary, for validation (without it: no validation, the last weights kept)")
    add("--train-src", default=os.path.join(data, "train.en")); add("--train-tgt", default=os.path.join(data, "train.de"))
    add("--valid-src", default=os.path.join(data, "dev.en")); add("--valid-tgt", default=os.path.join(data, "dev.de"))
    add("--max-cpu-minutes", type=float, default=0.0, help="budget: this process's CPU time (all threads)")
    add("--max-steps", type=int, default=0, help="budget: optimizer steps")
    add("--threads", type=int, default=2)
    add("--precision", choices=["fp32", "bf16"], default="fp32")
    add("--seed", type=int, default=1)
    add("--max-tokens", type=int, default=2048); add("--max-len", type=int, default=128)
    add("--warmup", type=int, default=400); add("--lr-factor", type=float, default=1.0)
    add("--label-smoothing", type=float, default=0.1)
    add("--validate-every", type=int, default=500); add("--valid-sentences", type=int, default=500)
    add("--log-every", type=int, default=50); add("--checkpoint-minutes", type=float, default=15.0)
    add("--plain-malloc", action="store_true", help="glibc malloc's defaults (see KEEP_FREED)")
    a = p.parse_args(argv)
    if a.max_cpu_minutes <= 0 and a.max_steps <= 0:
        p.error("set a budget: --max-cpu-minutes M or --max-steps N")
    return a


class Clock:
    """This process's CPU time over all threads, plus that of the children it waited for (the attn
    processes that validate), since construction: attn's train.clock=cpu."""

    def __init__(self):
        self.start = self._now()

    @staticmethod
    def _now():
        t = os.times()
        return time.process_time() + t.children_user + t.children_system

    def elapsed(self):
        return self._now() - self.start


def make_model(a, vocab):
    if a.init:
        cfg = json.load(open(os.path.join(a.init, "config.json")))
        if cfg["src_vocab"] != vocab or cfg["tgt_vocab"] != vocab:
            raise SystemExit(f"{a.init}/config.json: vocabulary {cfg['src_vocab']}, the SentencePiece model has {vocab}")
        return torch_ref.load(a.init).train(), cfg
    cfg = dict(RECIPE, src_vocab=vocab, tgt_vocab=vocab)
    model = torch_ref.Seq2SeqTransformer(cfg)
    torch.manual_seed(a.seed)
    with torch.no_grad():  # attn's rules (src/models/transformer_parameters.cpp)
        for name, t in model.named_parameters():
            if name.endswith("embed.weight"):
                t.normal_(0.0, cfg["d_model"] ** -0.5)
            elif t.dim() == 2:
                torch.nn.init.xavier_uniform_(t)
            else:
                t.fill_(1.0 if "norm" in name and name.endswith("weight") else 0.0)
    return model.train(), cfg


def learning_rate(a, d_model, step, used):
    """attn's noam schedule with linear decay (src/train/schedule.cpp)."""
    t, w = max(step, 1), max(a.warmup, 1)
    return a.lr_factor * d_model ** -0.5 * min(t ** -0.5, t * w ** -1.5) * (1.0 - min(max(used, 0.0), 1.0))


def budget_used(a, step, elapsed):
    p = step / a.max_steps if a.max_steps > 0 else 0.0
    if a.max_cpu_minutes > 0:
        p = max(p, elapsed / (a.max_cpu_minutes * 60.0))
    return min(p, 1.0)


def budget_spent(a, step, elapsed):
    return (a.max_steps > 0 and step >= a.max_steps) or (a.max_cpu_minutes > 0 and elapsed >= a.max_cpu_minutes * 60.0)


def write_ref(model, cfg, spm, out):
    """torch_ref.py's directory: config.json, weights.npz (every state_dict key), spm.model."""
    os.makedirs(out, exist_ok=True)
    arrays = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    np.savez(os.path.join(out, "weights.npz.tmp.npz"), **arrays)
    os.replace(os.path.join(out, "weights.npz.tmp.npz"), os.path.join(out, "weights.npz"))
    json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=2)
    if os.path.abspath(spm) != os.path.abspath(os.path.join(out, "spm.model")):
        shutil.copyfile(spm, os.path.join(out, "spm.model"))


@torch.no_grad()
def dev_nll(model, batches):
    """Mean -log p per dev target token (eos included), fp32, no smoothing: attn's dev loss."""
    model.eval()
    total, count = 0.0, 0
    for src, tin, tout, n in batches:
        z = logits(model, torch.from_numpy(src), torch.from_numpy(tin)).float()
        total += F.cross_entropy(z.reshape(-1, z.shape[-1]), torch.from_numpy(tout).reshape(-1),
                                 ignore_index=twin_data.PAD, reduction="sum").item()
        count += n
    model.train()
    return total / max(count, 1)


class Run:
    """What the loop carries from step to step (attn's translation_trainer.cpp Run)."""

    def __init__(self, a):
        import sentencepiece
        self.a = a
        self.sp = sentencepiece.SentencePieceProcessor(model_file=a.spm)
        for what, want, got in (("pad", 0, self.sp.pad_id()), ("bos", 1, self.sp.bos_id()), ("eos", 2, self.sp.eos_id())):
            if got != want:
                raise SystemExit(f"{a.spm}: {what} id {got}, attn's models have pad=0 bos=1 eos=2")
        torch.set_num_threads(a.threads)
        torch.set_flush_denormal(True)  # attn sets FTZ/DAZ on every thread
        self.clock = Clock()  # from here on the budget runs (attn: before it reads the corpus)
        examples, self.stats = twin_data.read_corpus(a.train_src, a.train_tgt, self.sp, a.max_len)
        print(f"training data: {self.stats}", file=sys.stderr)
        self.batcher = twin_data.Batcher(examples, a.max_tokens, a.seed)
        self.model, self.cfg = make_model(a, self.sp.get_piece_size())
        self.params = list(self.model.parameters())  # tied tensors once
        self.opt = torch.optim.Adam(self.params, lr=0.0, betas=(0.9, 0.98), eps=1e-9)
        self.step, self.tokens_seen, self.bad_in_row, self.last_lr = 0, 0, 0, 0.0
        self.best = (-1.0, math.inf)  # (dev BLEU, dev loss) of the model kept
        self.best_step, self.validated_at, self.last_checkpoint = -1, -1, 0.0
        self.dev = self.load_dev() if a.attn else None
        os.makedirs(a.out, exist_ok=True)
        self.log = open(os.path.join(a.out, "train_log.jsonl"), "w")

    def load_dev(self):
        a = self.a
        dev, _ = twin_data.read_corpus(a.valid_src, a.valid_tgt, self.sp, 0)  # evaluation: nothing skipped
        refs = twin_data.read_lines(a.valid_tgt)
        n = min(a.valid_sentences or len(refs), len(refs))
        work = os.path.join(a.out, "valid")
        os.makedirs(work, exist_ok=True)
        files = {"src": os.path.join(work, "dev.src"), "ref": os.path.join(work, "dev.ref")}
        with open(files["src"], "w") as f:
            f.write("".join(s + "\n" for s in twin_data.read_lines(a.valid_src)[:n]))
        with open(files["ref"], "w") as f:
            f.write("".join(r + "\n" for r in refs[:n]))
        return dict(batches=twin_data.batches_in_order(dev, 4096), work=work, **files)

    def write(self, record, line):
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()
        print(line, file=sys.stderr, flush=True)

    def train_step(self):
        """One optimizer step; False when the loss or gradient was not finite (no update)."""
        a = self.a
        src, tin, tout, n = next(self.batcher)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            z = logits(self.model, torch.from_numpy(src), torch.from_numpy(tin))
        loss = F.cross_entropy(z.float().reshape(-1, z.shape[-1]), torch.from_numpy(tout).reshape(-1),
                               ignore_index=twin_data.PAD, label_smoothing=a.label_smoothing)
        loss.backward()
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in self.params]))
        value = loss.item()
        if not (math.isfinite(value) and math.isfinite(norm.item())):
            self.opt.zero_grad(set_to_none=True)
            return None
        self.step += 1
        self.last_lr = learning_rate(a, self.cfg["d_model"], self.step, budget_used(a, self.step, self.clock.elapsed()))
        for g in self.opt.param_groups:
            g["lr"] = self.last_lr
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.tokens_seen += n
        return value * n, n

    def validate(self):
        """attn's validation (translation_trainer.cpp validate): keeps the best by BLEU, then loss."""
        a, d, t0 = self.a, self.dev, time.monotonic()
        nll = dev_nll(self.model, d["batches"])
        ref, model_dir = os.path.join(d["work"], "ref"), os.path.join(d["work"], "model")
        write_ref(self.model, self.cfg, a.spm, ref)
        import_into_attn(a.attn, ref, model_dir)
        hyp = os.path.join(d["work"], "dev.hyp")
        translate(a.attn, model_dir, d["src"], hyp, 1, a.threads, batch=64)  # batches of 64, as attn's validation
        bleu, chrf = bleu_chrf(a.attn, hyp, d["ref"])
        better = bleu > self.best[0] or (bleu == self.best[0] and nll < self.best[1])
        if better:
            self.best, self.best_step = (bleu, nll), self.step
            for name in ("weights.npz", "config.json"):
                os.replace(os.path.join(ref, name), os.path.join(a.out, name))
            shutil.copyfile(a.spm, os.path.join(a.out, "spm.model"))
        self.validated_at = self.step
        self.write({"event": "valid", "step": self.step, "elapsed": self.clock.elapsed(), "dev_nll": nll,
                    "dev_ppl": math.exp(nll), "dev_bleu": bleu, "dev_chrf": chrf, "best": better},
                   f"valid step {self.step}  dev loss {nll:.4f}  ppl {math.exp(nll):.2f}  BLEU {bleu:.2f}  "
                   f"chrF {chrf:.2f}  ({time.monotonic() - t0:.1f}s wall){'  new best, saved' if better else ''}")

    def checkpoint(self):
        path = os.path.join(self.a.out, "checkpoint.pt")
        torch.save({"model": self.model.state_dict(), "adam": self.opt.state_dict(), "step": self.step}, path + ".tmp")
        os.replace(path + ".tmp", path)
        self.last_checkpoint = self.clock.elapsed()

    def progress(self, window, seconds):
        a, now = self.a, self.clock.elapsed()
        loss, tps = window[0] / max(window[1], 1), window[1] / max(seconds, 1e-9)
        eta = max(0.0, a.max_cpu_minutes * 60.0 - now) if a.max_cpu_minutes > 0 else math.inf
        if a.max_steps > 0:
            eta = min(eta, now / max(self.step, 1) * (a.max_steps - self.step))
        self.write({"event": "train", "step": self.step, "epoch": self.batcher.epoch + 1, "loss": loss,
                    "lr": self.last_lr, "tgt_tokens_per_s": tps, "tokens_seen": self.tokens_seen,
                    "elapsed": now, "eta": eta},
                   f"step {self.step:6d}  epoch {self.batcher.epoch + 1}  loss {loss:.4f}  lr {self.last_lr:.3e}  "
                   f"{tps:6.0f} tgt tok/s  {now:.0f}s CPU")


def train(run):
    """attn's loop (src/train/loop.cpp): log, validate, checkpoint after each step; the budget is
    checked after each step. Returns the clock when the budget was found spent (before the last
    validation, as the elapsed of attn's last progress line)."""
    a = run.a
    window, window_start, at_budget = [0.0, 0], run.clock.elapsed(), None
    spent = budget_spent(a, run.step, run.clock.elapsed())
    while not spent:  # as attn, the budget is read once a step, before that step's validation
        s = run.train_step()
        if s is None:
            run.bad_in_row += 1
            print(f"step {run.step + 1}: the loss or gradient is NaN or infinite; skipped", file=sys.stderr)
            if run.bad_in_row >= 5:
                raise SystemExit(f"train: the loss or gradient was not finite in 5 steps in a row after step {run.step}")
            continue
        run.bad_in_row = 0
        window = [window[0] + s[0], window[1] + s[1]]
        spent = budget_spent(a, run.step, run.clock.elapsed())
        at_budget = run.clock.elapsed() if spent else None
        if run.step % a.log_every == 0 or spent:
            run.progress(window, run.clock.elapsed() - window_start)
            window, window_start = [0.0, 0], run.clock.elapsed()
        if run.dev and (run.step % a.validate_every == 0 or spent):
            run.validate()
        if spent or (a.checkpoint_minutes > 0 and run.clock.elapsed() - run.last_checkpoint >= a.checkpoint_minutes * 60):
            run.checkpoint()
    return at_budget if at_budget is not None else run.clock.elapsed()


def main(argv=None):
    a = parse_args(argv)
    wall0 = time.monotonic()
    run = Run(a)
    print(f"model: d_model {run.cfg['d_model']}, {run.cfg['encoder_layers']}+{run.cfg['decoder_layers']} layers, "
          f"{sum(p.numel() for p in run.params)} weights; {a.threads} threads, {a.precision}; "
          f"{len(run.batcher.plan)} batches in epoch 1", file=sys.stderr)
    cpu_at_budget = train(run)
    if not run.dev:
        write_ref(run.model, run.cfg, a.spm, a.out)
        run.best_step = run.step
    summary = dict(steps=run.step, cpu_seconds=cpu_at_budget, cpu_seconds_total=run.clock.elapsed(),
                   wall_seconds=time.monotonic() - wall0, tokens_seen=run.tokens_seen, best_step=run.best_step,
                   best_dev_bleu=run.best[0] if run.dev else None, epochs=run.batcher.epoch, threads=a.threads,
                   precision=a.precision, data=run.stats, init=a.init, torch=torch.__version__,
                   recipe={k: getattr(a, k) for k in ("max_tokens", "max_len", "warmup", "lr_factor",
                                                      "label_smoothing", "seed", "validate_every")})
    json.dump(summary, open(os.path.join(a.out, "twin.json"), "w"), indent=2)
    print(f"done: {run.step} steps in {cpu_at_budget:.0f} s of CPU time; model (step {run.best_step}) in {a.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
