"""Small, dependency-free SVG charts for bench/attention_report.py: a line chart (several series of
(x, y) points) and a grouped bar chart. Plain SVG 1.1, readable on GitHub, no scripts."""
import math
from xml.sax.saxutils import escape

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
FONT = 'font-family="Helvetica, Arial, sans-serif"'


def nice_ticks(lo, hi, count=5):
    """About `count` round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = [round(start, 10)]
    while ticks[-1] < hi - step * 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def fmt(v):
    return f"{v:g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.1e}"


class Frame:
    """Plot area of a chart and the mapping of data to pixels."""

    def __init__(self, width, height, xlo, xhi, ylo, yhi, left=62, right=190, top=34, bottom=46):
        self.w, self.h = width, height
        self.x0, self.x1 = left, width - right
        self.y0, self.y1 = top, height - bottom
        self.xlo, self.xhi, self.ylo, self.yhi = xlo, xhi, ylo, yhi

    def px(self, x):
        return self.x0 + (x - self.xlo) / (self.xhi - self.xlo or 1) * (self.x1 - self.x0)

    def py(self, y):
        return self.y1 - (y - self.ylo) / (self.yhi - self.ylo or 1) * (self.y1 - self.y0)


def _header(width, height, title):
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {FONT} font-size="12">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" font-size="14" font-weight="bold">'
            f'{escape(title)}</text>']


def _y_axis(f, ticks, label):
    out = []
    for t in ticks:
        y = f.py(t)
        out.append(f'<line x1="{f.x0}" y1="{y:.1f}" x2="{f.x1}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{f.x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    mid = (f.y0 + f.y1) / 2
    out.append(f'<text x="16" y="{mid:.1f}" text-anchor="middle" transform="rotate(-90 16 {mid:.1f})">'
               f'{escape(label)}</text>')
    out.append(f'<line x1="{f.x0}" y1="{f.y0}" x2="{f.x0}" y2="{f.y1}" stroke="#333"/>')
    out.append(f'<line x1="{f.x0}" y1="{f.y1}" x2="{f.x1}" y2="{f.y1}" stroke="#333"/>')
    return out


def _legend_width(names):
    return 60 + 7 * max((len(n) for n in names), default=0)


def _legend(f, names, colors, dashes=None):
    out = []
    for i, name in enumerate(names):
        y = f.y0 + 8 + 18 * i
        dash = f' stroke-dasharray="{dashes[i]}"' if dashes and dashes[i] else ""
        out.append(f'<line x1="{f.x1 + 12}" y1="{y}" x2="{f.x1 + 36}" y2="{y}" stroke="{colors[i]}" '
                   f'stroke-width="2.5"{dash}/>')
        out.append(f'<text x="{f.x1 + 42}" y="{y + 4}">{escape(name)}</text>')
    return out


def line_chart(series, title, xlabel, ylabel, width=820, height=400):
    """series: list of (name, [(x, y), ...], dash or None). Returns the SVG text."""
    pts = [p for _, s, _ in series for p in s]
    if not pts:
        pts = [(0, 0), (1, 1)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    xt = nice_ticks(0 if min(xs) >= 0 else min(xs), max(xs))
    pad = (max(ys) - min(ys)) * 0.05 or 0.5
    yt = nice_ticks(min(ys) - pad, max(ys) + pad)
    f = Frame(width, height, xt[0], xt[-1], yt[0], yt[-1], right=_legend_width([s[0] for s in series]))
    out = _header(width, height, title) + _y_axis(f, yt, ylabel)
    for t in xt:
        x = f.px(t)
        out.append(f'<line x1="{x:.1f}" y1="{f.y1}" x2="{x:.1f}" y2="{f.y1 + 4}" stroke="#333"/>')
        out.append(f'<text x="{x:.1f}" y="{f.y1 + 17}" text-anchor="middle">{fmt(t)}</text>')
    out.append(f'<text x="{(f.x0 + f.x1) / 2:.1f}" y="{height - 10}" text-anchor="middle">{escape(xlabel)}</text>')
    colors = [PALETTE[i % len(PALETTE)] for i in range(len(series))]
    for (name, s, dash), c in zip(series, colors):
        if not s:
            continue
        d = " ".join(f"{f.px(x):.1f},{f.py(y):.1f}" for x, y in s)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="2"{dash_attr}/>')
        for x, y in s:
            out.append(f'<circle cx="{f.px(x):.1f}" cy="{f.py(y):.1f}" r="2.8" fill="{c}"/>')
    out += _legend(f, [s[0] for s in series], colors, [s[2] for s in series])
    out.append("</svg>")
    return "\n".join(out) + "\n"


def bar_chart(groups, series_names, title, ylabel, width=760, height=380):
    """groups: list of (group label, [value per series or None]). Grouped vertical bars with values."""
    vals = [v for _, vs in groups for v in vs if v is not None] or [1.0]
    yt = nice_ticks(0, max(vals) * 1.1 or 1.0)
    f = Frame(width, height, 0, 1, yt[0], yt[-1], right=_legend_width(series_names) if len(series_names) > 1 else 20)
    out = _header(width, height, title) + _y_axis(f, yt, ylabel)
    n = max(len(series_names), 1)
    slot = (f.x1 - f.x0) / max(len(groups), 1)
    bar = slot * 0.8 / n
    colors = [PALETTE[i % len(PALETTE)] for i in range(n)]
    for gi, (label, vs) in enumerate(groups):
        gx = f.x0 + gi * slot + slot * 0.1
        for si, v in enumerate(vs):
            if v is None:
                continue
            x, y = gx + si * bar, f.py(v)
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar * 0.92:.1f}" height="{f.y1 - y:.1f}" '
                       f'fill="{colors[si]}"/>')
            out.append(f'<text x="{x + bar * 0.46:.1f}" y="{y - 3:.1f}" text-anchor="middle" '
                       f'font-size="10">{v:.2f}</text>')
        out.append(f'<text x="{f.x0 + (gi + 0.5) * slot:.1f}" y="{f.y1 + 17}" text-anchor="middle">'
                   f'{escape(label)}</text>')
    if len(series_names) > 1:
        out += _legend(f, series_names, colors)
    out.append("</svg>")
    return "\n".join(out) + "\n"
