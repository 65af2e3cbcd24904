"""The attn commands bench/torch_translation_twin.py and bench/equal_budget.py share: a torch_ref.py
directory into an attn model directory, and translating and scoring with attn's own decoder."""
import json
import os
import shutil
import subprocess


def import_into_attn(attn, ref_dir, model_dir):
    """`attn import-torch REF_DIR MODEL_DIR`, then REF_DIR/spm.model beside the weights and named in
    config.json, so that attn translates text with the tokenizer the twin trained with."""
    subprocess.run([attn, "import-torch", ref_dir, model_dir], check=True, capture_output=True)
    shutil.copyfile(os.path.join(ref_dir, "spm.model"), os.path.join(model_dir, "spm.model"))
    path = os.path.join(model_dir, "config.json")
    cfg = json.load(open(path))
    cfg["tokenizer"] = "spm.model"
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)


def translate(attn, model_dir, src_file, hyp_file, beam, threads, batch=None):
    """`attn translate` of a text file (its defaults otherwise: length penalty 0.6, source length + 50)."""
    cmd = [attn, "translate", "--model", model_dir, "--beam", str(beam), "--threads", str(threads)]
    if batch:
        cmd += ["--batch", str(batch)]
    with open(src_file) as src, open(hyp_file + ".tmp", "w") as hyp:
        subprocess.run(cmd, stdin=src, stdout=hyp, stderr=subprocess.DEVNULL, check=True)
    os.replace(hyp_file + ".tmp", hyp_file)
    return cmd


def bleu_chrf(attn, hyp_file, ref_file):
    """`attn bleu --chrf` (sacreBLEU's definitions): (BLEU, chrF)."""
    out = subprocess.run([attn, "bleu", "--ref", ref_file, "--chrf", "--score-only", "--hyp", hyp_file],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])
