#!/usr/bin/env python3
"""Writes tests/fixtures/metrics/: noisy German hypotheses for lines of the mt-ende dev set and
sacreBLEU's figures for them, which tests/metrics/*.cpp compare attn's metrics against.

    python3 -m pip install sacrebleu==2.6.0     # the version the committed fixture came from
    python3 tests/metrics/make_metrics_fixtures.py [--shared ../shared]

Files written:
  ref.de, ref2.de   two reference streams (ref.de: dev.de lines, a few edited; ref2.de: a
                    lightly reworded copy of ref.de), 300 lines each
  hyp.de            300 hypotheses: the reference with words dropped, swapped, replaced,
                    punctuation and spacing changed, umlauts folded, entities, or an unrelated
                    train.de line, or empty
  expected.json     sacreBLEU's corpus and sentence BLEU/chrF, 13a tokenizations of edge cases
                    and of every hypothesis, small edge-case corpora, and the stdout of the
                    sacrebleu command line on these files
"""
import argparse
import json
import os
import random
import subprocess
import sys

import sacrebleu
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'fixtures', 'metrics')
N_LINES = 300

# Whitespace that Python's str.split() knows and plain ASCII tools may not.
ODD_SPACES = ['\u00a0', '\u2009', '\u3000', '\t', '\u202f', '\x1c', '  ']


def read_lines(path):
    with open(path, encoding='utf-8', newline='\n') as f:
        return [line.rstrip('\n') for line in f]


def drop_words(rng, words):
    kept = [w for w in words if rng.random() > 0.25]
    return kept if kept else words[:1]


def swap_words(rng, words):
    words = list(words)
    for _ in range(rng.randint(1, 3)):
        if len(words) > 1:
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
    return words


def replace_words(rng, words, vocab):
    return [rng.choice(vocab) if rng.random() < 0.25 else w for w in words]


def punctuation(rng, line):
    choice = rng.randrange(6)
    if choice == 0 and line and line[-1] in '.!?:':
        return line[:-1]
    if choice == 1:
        return line + ' .'          # tokenized-looking period
    if choice == 2:
        return line.replace('»', '„').replace('«', '“')
    if choice == 3:
        return line.replace(' ', ', ', 1) + '...'
    if choice == 4:
        return '(' + line + ')'
    return line + '!?'


def fold_umlauts(rng, line):
    table = {'ä': 'ae', 'ö': 'oe', 'ü': 'ue', 'ß': 'ss', 'Ä': 'Ae', 'Ü': 'Ue'}
    if rng.random() < 0.5:
        return ''.join(table.get(c, c) for c in line)
    return line[:1].lower() + line[1:]


def odd_spacing(rng, line):
    words = line.split(' ')
    out = words[0] if words else ''
    for w in words[1:]:
        out += (rng.choice(ODD_SPACES) if rng.random() < 0.3 else ' ') + w
    return (' ' if rng.random() < 0.3 else '') + out + rng.choice(['', ' ', '\u00a0', '\t'])


def markup_and_numbers(rng, line):
    extras = ['&amp;', '&quot;Datei&quot;', '&lt;b&gt;', '<skipped>', '10-20', '3.5', '1,000.25',
              'z.B.', 'U.S.A.', '%s', '%d', '%1$s', '$HOME/.config', 'http://example.org/a-b?x=1',
              "don't", '--force', '-5', 'Nr. 7-8', '€12,50', '…']
    words = line.split(' ')
    for _ in range(rng.randint(1, 3)):
        words.insert(rng.randint(0, len(words)), rng.choice(extras))
    return ' '.join(words)


def make_hypothesis(rng, ref, vocab, train):
    r = rng.random()
    if r < 0.03:
        return ''
    if r < 0.10:
        return rng.choice(train)
    if r < 0.12:
        return ref
    line = ref
    for _ in range(rng.randint(2, 4)):
        op = rng.randrange(7)
        words = line.split(' ')
        if op == 0:
            line = ' '.join(drop_words(rng, words))
        elif op == 1:
            line = ' '.join(swap_words(rng, words))
        elif op == 2:
            line = ' '.join(replace_words(rng, words, vocab))
        elif op == 3:
            line = punctuation(rng, line)
        elif op == 4:
            line = fold_umlauts(rng, line)
        elif op == 5:
            line = odd_spacing(rng, line)
        else:
            line = markup_and_numbers(rng, line)
    return line


def make_references(rng, dev):
    picked = sorted(rng.sample(range(len(dev)), N_LINES))
    refs = [dev[i] for i in picked]
    # A few edge cases among the references: empty, one character, markup.
    refs[5] = ''
    refs[17] = ''
    refs[29] = 'a'
    refs[41] = 'Ja.'
    refs[53] = refs[53] + ' &amp; <skipped> 2-3'
    return refs


def bleu_dict(score):
    return {'score': score.score, 'precisions': list(score.precisions), 'bp': score.bp,
            'ratio': score.ratio, 'hyp_len': score.sys_len, 'ref_len': score.ref_len,
            'counts': list(score.counts), 'totals': list(score.totals), 'text': str(score)}


TOKENIZER_CASES = [
    '', ' ', '  \t ', 'Hallo Welt.', 'a...b', '3.14, 1,000.5-2', 'U.S.A.', 'x.,y', '.5', ',5',
    '5.', '5,', 'a-b 5-6-7 -5', '1-', '&amp;lt;x&gt;', '&quot;Zitat&quot;', '&amp;amp;', '&',
    'ab<skipped>c', '<skipped>', 'foo-\nbar\nbaz', 'a\r\nb', '»Hallo«, %s!', 'ü.ö,1.ä',
    'z.B. 3.5-mal', '%1$s und %2$d', '$HOME/.config/attn', 'http://example.org/a-b?x=1&y=2',
    "l'homme don't", '--force -n', '{a|b}~[c]\\^_`', '(a)*+', 'a:b;c<d=e>f?g@h', 'a/b',
    'Straße\u00a0und\u2009Weg\u3000Ende', 'x\u202fy\u205fz\u1680w\u2028v\u2029u\x85t',
    'a\x1cb\x1dc\x1ed\x1fe\x0bf\x0cg', 'zero\u200bwidth \ufeffbom', 'trailing   ', '   leading',
    '„Anführung“ ‚einfach‘ – Strich — lang … Ellipse', '€12,50 ©2017 ²³', '日本語。テスト、です',
    '10.000,00 €', 'Nr.7', 'v1.2.3-rc1', '...', ',,,', '---', '-\n', 'a -\nb',
]


def small_corpora():
    """Corpora that hit the edges of corpus BLEU/chrF (zero lengths, missing orders, ties)."""
    return [
        {'name': 'all_empty_hyps', 'hyps': ['', ''], 'refs': [['Das ist gut.', 'Ja']]},
        {'name': 'all_empty', 'hyps': ['', ''], 'refs': [['', '']]},
        {'name': 'empty_refs', 'hyps': ['Das ist gut.', 'x'], 'refs': [['', '']]},
        {'name': 'identical', 'hyps': ['Das ist ein Test .'], 'refs': [['Das ist ein Test .']]},
        {'name': 'short_hyps', 'hyps': ['Das ist', 'gut'], 'refs': [['Das ist gut', 'gut so']]},
        {'name': 'no_4gram_match', 'hyps': ['a b c x d e f'], 'refs': [['a b c d e f g']]},
        {'name': 'no_match_at_all', 'hyps': ['x y z w v'], 'refs': [['a b c d e']]},
        {'name': 'brevity', 'hyps': ['Das ist ein Test für die Länge der Sätze', 'Ja , gut .'],
         'refs': [['Das ist ein kleiner Test für die Länge der langen Sätze hier',
                   'Ja , das ist gut so .']]},
        {'name': 'longer_hyp', 'hyps': ['a b c d e f g h i j'], 'refs': [['a b c d e']]},
        {'name': 'multi_ref_tie', 'hyps': ['a b c d', 'a b c d'],   # closest: 2 (tie 2/6), 3 (tie 5/3)
         'refs': [['a b c d e f', 'a b c d e'], ['a b', 'a b c'], ['x', 'y']]},
        {'name': 'multi_ref_merge', 'hyps': ['der der der die die', 'Katze sitzt auf der Matte'],
         'refs': [['der die', 'Die Katze sitzt auf der Matte'],
                  ['der der die', 'eine Katze sitzt auf einer Matte']]},
        {'name': 'chrf_short', 'hyps': ['ab', 'Ä', 'xyzxyzxyz'], 'refs': [['abc', 'Ä', 'x']]},
        {'name': 'chrf_unicode', 'hyps': ['Größe über Fuß', 'naïve café 日本'],
         'refs': [['Grösse ueber Fuss', 'naive cafe 日本語']]},
    ]


def corpus_case(case):
    hyps, refs = case['hyps'], case['refs']
    out = dict(case)
    out['bleu'] = bleu_dict(BLEU().corpus_score(hyps, refs))
    out['chrf'] = CHRF().corpus_score(hyps, refs).score
    return out


def sacrebleu_cli_stdout(hyp_path, ref_paths):
    """What `sacrebleu REF... -i HYP -m bleu chrf -w 2 -f text` prints, with each line's
    signature taken out ("BLEU|nrefs:1|...|version:2.6.0 = 57.85 ..." -> "BLEU = 57.85 ..."),
    which is the form `attn bleu --chrf` prints. One metric per run, so no column alignment."""
    lines = []
    for metric in ['bleu', 'chrf']:
        cmd = [sys.executable, '-m', 'sacrebleu', *ref_paths, '-i', hyp_path, '-m', metric,
               '-w', '2', '-f', 'text']
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()
        name, rest = out.split(' = ', 1)
        lines.append(name.split('|')[0] + ' = ' + rest)
    return ''.join(line + '\n' for line in lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--shared', default=os.path.join(HERE, '..', '..', '..', 'shared'))
    args = parser.parse_args()
    data = os.path.join(args.shared, 'data', 'mt-ende')
    dev = read_lines(os.path.join(data, 'dev.de'))
    train = read_lines(os.path.join(data, 'train.de'))[:20000]
    vocab = sorted({w for line in train[:3000] for w in line.split()})

    rng = random.Random(2017)
    refs = make_references(rng, dev)
    refs2 = [' '.join(swap_words(rng, r.split(' '))) if rng.random() < 0.5 else
             ' '.join(replace_words(rng, r.split(' '), vocab)) for r in refs]
    hyps = [make_hypothesis(rng, r, vocab, train) for r in refs]
    assert all('\n' not in line and '\r' not in line for line in hyps + refs + refs2)

    os.makedirs(OUT, exist_ok=True)
    paths = {}
    for name, lines in [('hyp.de', hyps), ('ref.de', refs), ('ref2.de', refs2)]:
        paths[name] = os.path.join(OUT, name)
        with open(paths[name], 'w', encoding='utf-8', newline='\n') as f:
            f.write(''.join(line + '\n' for line in lines))

    tok = Tokenizer13a()
    sentence_bleu = BLEU(effective_order=True)
    chrf = CHRF()
    expected = {
        'sacrebleu_version': sacrebleu.__version__,
        'corpus': {'bleu': bleu_dict(BLEU().corpus_score(hyps, [refs])),
                   'chrf': chrf.corpus_score(hyps, [refs]).score},
        'corpus_two_refs': {'bleu': bleu_dict(BLEU().corpus_score(hyps, [refs, refs2])),
                            'chrf': chrf.corpus_score(hyps, [refs, refs2]).score},
        'sentences': [{
            'bleu': sentence_bleu.sentence_score(h, [r]).score,
            'chrf': chrf.sentence_score(h, [r]).score,
            'bleu_two_refs': sentence_bleu.sentence_score(h, [r, r2]).score,
            'chrf_two_refs': chrf.sentence_score(h, [r, r2]).score,
        } for h, r, r2 in zip(hyps, refs, refs2)],
        'tokenizer_cases': [{'input': s, 'output': tok(s)} for s in TOKENIZER_CASES],
        'tokenized_hyps': [tok(h.rstrip()) for h in hyps],
        'small_corpora': [corpus_case(c) for c in small_corpora()],
        'cli_one_ref': sacrebleu_cli_stdout(paths['hyp.de'], [paths['ref.de']]),
        'cli_two_refs': sacrebleu_cli_stdout(paths['hyp.de'], [paths['ref.de'], paths['ref2.de']]),
    }
    with open(os.path.join(OUT, 'expected.json'), 'w', encoding='utf-8') as f:
        json.dump(expected, f, ensure_ascii=False, indent=1)
    print('sacrebleu', sacrebleu.__version__, '->', OUT)
    print(expected['corpus']['bleu']['text'], '| chrF2 =', round(expected['corpus']['chrf'], 2))
    print(expected['cli_one_ref'], end='')


if __name__ == '__main__':
    main()
