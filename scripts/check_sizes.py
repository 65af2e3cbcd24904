#!/usr/bin/env python3
"""Lists source files over 500 lines and C++ functions over 60 lines (the code's size rules).

Usage: scripts/check_sizes.py [--max-file 500] [--max-function 60] [paths...]
A function is a brace block opened at the end of a line that starts at column 0 or 2 (a
definition at namespace scope or in a class) and is not a namespace, class, struct, enum or an
initializer list; tables (a braced initializer `= {`) are not functions. Exits 1 when something is
over, so that a test can hold the rules.
"""
import argparse
import os
import re
import sys

SOURCE = ('.cpp', '.h', '.hpp', '.cc')
NOT_FUNCTION = re.compile(r'^\s*(namespace|class|struct|enum|union|extern)\b|=\s*\{\s*$|^\s*(static\s+)?const\s+std::')


def functions(lines):
    """(start line, length, header) of each top-level or member function body."""
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip(' '))
        if line.rstrip().endswith('{') and indent in (0, 2) and not NOT_FUNCTION.search(line) \
                and not line.lstrip().startswith(('//', '#', '}')) and '(' in ''.join(lines[max(0, i - 3):i + 1]):
            depth = 0
            for j in range(i, len(lines)):
                code = re.sub(r'"([^"\\]|\\.)*"|\'([^\'\\]|\\.)*\'|//.*', '', lines[j])
                depth += code.count('{') - code.count('}')
                if depth <= 0:
                    out.append((i + 1, j - i + 1, line.strip()))
                    i = j
                    break
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--max-file', type=int, default=500)
    ap.add_argument('--max-function', type=int, default=60)
    ap.add_argument('paths', nargs='*', default=['src', 'include', 'apps'])
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    over = []
    for base in a.paths:
        base = os.path.join(root, base)
        for d, _, files in os.walk(base):
            for f in sorted(files):
                if not f.endswith(SOURCE):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                lines = open(path, encoding='utf-8').read().split('\n')
                if len(lines) - 1 > a.max_file:
                    over.append(f'{rel}: {len(lines) - 1} lines (over {a.max_file})')
                for start, length, header in functions(lines):
                    if length > a.max_function:
                        over.append(f'{rel}:{start}: function of {length} lines (over {a.max_function}): {header[:80]}')
    for o in over:
        print(o)
    print(f'{len(over)} over the limits')
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main())
