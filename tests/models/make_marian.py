"""Makes a Hugging Face Marian (OPUS-MT layout) model directory offline, with transformers' own
code, for the import tests of issue 51: SentencePiece models trained here on the shared corpus
(source.spm on English, target.spm on German), vocab.json as OPUS-MT's converter writes it
(</s> 0, <unk> 1, the pieces, <pad> last, which is also the decoder's start token), a MarianConfig
of the given shape, weights drawn with a larger spread than transformers' init so that the
outputs are not one repeated token, and tokenizer_config.json / generation_config.json as
save_pretrained writes them. --separate: two vocabularies (vocab.json for the source,
target_vocab.json for the target), as transformers' separate_vocabs.

Usage (the reference venv, scripts/setup.sh): python make_marian.py OUT [--activation swish|gelu]
       [--separate] [--renormalize] [--max-length N] [--d-model 32] [--layers 2] [--heads 2] [--ffn 64] [--vocab 200] [--seed 1] [--spread 1.5]
Prints the directory. Nothing is downloaded."""
import argparse
import json
import os
import sys
import tempfile

import sentencepiece as spm
import torch
from transformers import GenerationConfig, MarianConfig, MarianMTModel, MarianTokenizer

SHARED = os.environ.get("ATTN_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
CORPUS = os.path.join(SHARED, "data", "mt-ende")


def lines_of(path, n):
    with open(path, encoding="utf-8") as f:
        return [next(f).rstrip("\n") for _ in range(n)]


def train_spm(lines, prefix, vocab):
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    spm.SentencePieceTrainer.train(input=f.name, model_prefix=prefix, vocab_size=vocab, model_type="unigram",
                                   character_coverage=1.0, bos_id=-1, eos_id=-1, unk_id=0, pad_id=-1,
                                   minloglevel=2)
    os.unlink(f.name)
    return prefix + ".model"


def pieces_of(model):
    p = spm.SentencePieceProcessor(model_file=model)
    return [p.id_to_piece(i) for i in range(p.get_piece_size()) if p.id_to_piece(i) != "<unk>"]


def opus_vocab(*piece_lists):
    """OPUS-MT's order: </s> 0, <unk> 1, each piece once in order, <pad> last."""
    vocab = {"</s>": 0, "<unk>": 1}
    for pieces in piece_lists:
        for p in pieces:
            vocab.setdefault(p, len(vocab))
    vocab["<pad>"] = len(vocab)
    return vocab


def train(model, tokenizer, args):
    """Adam (lr 3e-3) on the first --lines pairs, batches of 32, label smoothing 0.1: a model whose
    outputs end with eos and follow their sources, unlike random weights'."""
    torch.manual_seed(args.seed)
    en = lines_of(os.path.join(CORPUS, "train.en"), args.lines)
    de = lines_of(os.path.join(CORPUS, "train.de"), args.lines)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(args.train_steps):
        at = (step * 32) % len(en)
        batch = tokenizer(en[at:at + 32], text_target=de[at:at + 32], padding=True, truncation=True,
                          max_length=args.positions, return_tensors="pt")
        labels = batch["labels"].masked_fill(batch["labels"] == model.config.pad_token_id, -100)
        out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
    model.eval()


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("out")
    a.add_argument("--activation", default="swish", choices=["swish", "gelu", "relu"])
    a.add_argument("--separate", action="store_true")
    a.add_argument("--d-model", type=int, default=32)
    a.add_argument("--layers", type=int, default=2)
    a.add_argument("--heads", type=int, default=2)
    a.add_argument("--ffn", type=int, default=64)
    a.add_argument("--vocab", type=int, default=200)
    a.add_argument("--positions", type=int, default=128)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--lines", type=int, default=2000)
    a.add_argument("--train-steps", type=int, default=0,
                   help="then train it this many Adam steps on the corpus' first --lines pairs (batches of 32)")
    a.add_argument("--max-length", type=int, default=0,
                   help="generation_config's max_length (default: --positions, as OPUS-MT's 512 = its positions)")
    a.add_argument("--renormalize", action="store_true",
                   help="generation_config's renormalize_logits true, as many OPUS-MT models have it")
    a.add_argument("--spread", type=float, default=1.5,
                   help="weight matrices ~ N(0, spread^2 / fan_in); 3 makes logits so large that float32 rounding "
                        "alone moves a sentence's log-prob by 1e-3 (in transformers as in attn)")
    args = a.parse_args()
    os.makedirs(args.out, exist_ok=True)
    src = train_spm(lines_of(os.path.join(CORPUS, "train.en"), args.lines), os.path.join(args.out, "source"), args.vocab)
    tgt = train_spm(lines_of(os.path.join(CORPUS, "train.de"), args.lines), os.path.join(args.out, "target"), args.vocab)
    os.replace(src, os.path.join(args.out, "source.spm"))
    os.replace(tgt, os.path.join(args.out, "target.spm"))
    for leftover in ("source.vocab", "target.vocab"):
        os.remove(os.path.join(args.out, leftover))
    src_pieces, tgt_pieces = pieces_of(os.path.join(args.out, "source.spm")), pieces_of(os.path.join(args.out, "target.spm"))
    if args.separate:
        vocab, target_vocab = opus_vocab(src_pieces), opus_vocab(tgt_pieces)
        with open(os.path.join(args.out, "target_vocab.json"), "w", encoding="utf-8") as f:
            json.dump(target_vocab, f, ensure_ascii=False, indent=2)
    else:
        vocab = target_vocab = opus_vocab(src_pieces, tgt_pieces)
    with open(os.path.join(args.out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=2)
    pad = target_vocab["<pad>"]
    config = MarianConfig(
        vocab_size=len(vocab), decoder_vocab_size=len(target_vocab), d_model=args.d_model,
        encoder_layers=args.layers, decoder_layers=args.layers, encoder_attention_heads=args.heads,
        decoder_attention_heads=args.heads, encoder_ffn_dim=args.ffn, decoder_ffn_dim=args.ffn,
        activation_function=args.activation, max_position_embeddings=args.positions, scale_embedding=True,
        pad_token_id=pad, eos_token_id=0, decoder_start_token_id=pad, forced_eos_token_id=0,
        share_encoder_decoder_embeddings=not args.separate, init_std=0.2, dropout=0.0)
    torch.manual_seed(args.seed)
    model = MarianMTModel(config)
    # transformers' init (normal, init_std) makes every sentence one token repeated. Matrices drawn
    # with std spread/sqrt(fan_in) (embeddings 1/sqrt(d_model)) give outputs that differ by
    # sentence (still loops: the trained model of the tests is the realistic one), and a small
    # bias of the output layer that is not zero, as a trained model's.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2 and "layer_norm" not in name:
                p.normal_(0.0, (1.0 if "embed" in name else args.spread) / p.shape[1] ** 0.5)
        model.final_logits_bias.normal_(0.0, 0.1)
        # the pad's embedding row stays 0, as nn.Embedding's padding_idx keeps it in a trained
        # OPUS-MT model (CTranslate2's converter relies on it: its decoder starts from a zero embedding)
        for table in {model.model.encoder.embed_tokens.weight.data_ptr(): model.model.encoder.embed_tokens,
                      model.model.decoder.embed_tokens.weight.data_ptr(): model.model.decoder.embed_tokens}.values():
            if pad < table.weight.shape[0]:
                table.weight[pad].zero_()
    tokenizer = MarianTokenizer(os.path.join(args.out, "source.spm"), os.path.join(args.out, "target.spm"),
                                os.path.join(args.out, "vocab.json"),
                                target_vocab_file=os.path.join(args.out, "target_vocab.json") if args.separate else None,
                                separate_vocabs=args.separate, source_lang="en", target_lang="de")
    if args.train_steps > 0:
        train(model, tokenizer, args)
    model.eval()
    model.generation_config = GenerationConfig(
        bad_words_ids=[[pad]], decoder_start_token_id=pad, eos_token_id=0, forced_eos_token_id=0,
        max_length=args.max_length or args.positions, num_beams=4, pad_token_id=pad, renormalize_logits=args.renormalize)
    model.save_pretrained(args.out, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    print(args.out)


if __name__ == "__main__":
    sys.exit(main())
