// Drawing training curves as SVG (include/attn/train/curves.h): small multiples, one panel per
// figure on a shared layout, one colour per run named in the legend above the panels.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "attn/io/xml.h"
#include "attn/train/curves.h"

namespace attn {

namespace {

struct Panel {
  const char* series;
  const char* title;
};
constexpr Panel kPanels[] = {
    {"loss", "training loss"},       {"dev_loss", "dev loss"},          {"dev_bleu", "dev BLEU"},
    {"dev_chrf", "dev chrF"},        {"dev_accuracy", "dev accuracy (%)"}, {"lr", "learning rate"},
    {"tokens_per_s", "target tokens/s"}, {"samples_per_s", "samples/s"},
};
// Distinct on white and for the common colour blindnesses (Okabe and Ito), black last.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

constexpr double kPanelW = 440, kPanelH = 250, kLeft = 70, kRight = 18, kTop = 30, kBottom = 42, kGap = 20;
constexpr int kColumns = 2;

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", std::abs(v) < 1e-12 ? 0.0 : v);
  return b;
}

// About n round ticks (1, 2 or 5 times a power of ten apart) covering [lo, hi]; lo and hi are
// widened to the outer ticks.
std::vector<double> nice_ticks(double& lo, double& hi, int n) {
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= pad, hi += pad;
  }
  const double raw = (hi - lo) / n, power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power * 10;
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * power) {
      step = m * power;
      break;
    }
  lo = std::floor(lo / step) * step;
  hi = std::ceil(hi / step) * step;
  std::vector<double> ticks;
  for (double t = lo; t <= hi + step * 1e-6; t += step) ticks.push_back(t);
  return ticks;
}

struct Scale {
  double x0, x1, y0, y1;  // data ranges
  double left, top;       // the panel's corner on the page
  double px(double x) const { return left + kLeft + (x - x0) / (x1 - x0) * (kPanelW - kLeft - kRight); }
  double py(double y) const { return top + kPanelH - kBottom - (y - y0) / (y1 - y0) * (kPanelH - kTop - kBottom); }
};

double x_of(const CurvePoint& p, CurveAxis x, double time_unit) { return x == CurveAxis::step ? p.step : p.elapsed / time_unit; }

// Grid, ticks and labels of one panel.
void draw_axes(std::ostringstream& svg, const Scale& s, const std::vector<double>& xt, const std::vector<double>& yt,
               const std::string& title, const std::string& x_label) {
  const double l = s.left + kLeft, r = s.left + kPanelW - kRight, t = s.top + kTop, b = s.top + kPanelH - kBottom;
  svg << "<text x=\"" << num(s.left + kPanelW / 2) << "\" y=\"" << num(s.top + 18)
      << "\" text-anchor=\"middle\" font-weight=\"bold\">" << io::xml_escaped(title) << "</text>\n";
  for (double v : yt)
    svg << "<line x1=\"" << num(l) << "\" x2=\"" << num(r) << "\" y1=\"" << num(s.py(v)) << "\" y2=\"" << num(s.py(v))
        << "\" stroke=\"#e4e4e4\"/><text x=\"" << num(l - 6) << "\" y=\"" << num(s.py(v) + 4)
        << "\" text-anchor=\"end\">" << num(v) << "</text>\n";
  for (double v : xt)
    svg << "<line x1=\"" << num(s.px(v)) << "\" x2=\"" << num(s.px(v)) << "\" y1=\"" << num(t) << "\" y2=\"" << num(b)
        << "\" stroke=\"#f0f0f0\"/><text x=\"" << num(s.px(v)) << "\" y=\"" << num(b + 16)
        << "\" text-anchor=\"middle\">" << num(v) << "</text>\n";
  svg << "<rect x=\"" << num(l) << "\" y=\"" << num(t) << "\" width=\"" << num(r - l) << "\" height=\"" << num(b - t)
      << "\" fill=\"none\" stroke=\"#888\"/>\n<text x=\"" << num((l + r) / 2) << "\" y=\"" << num(b + 34)
      << "\" text-anchor=\"middle\" fill=\"#555\">" << io::xml_escaped(x_label) << "</text>\n";
}

// One panel: every run's series of `key`, a line through its points (dots when there are few).
// Every panel spans the same x range (x0, x1), so that a step lines up from panel to panel.
void draw_panel(std::ostringstream& svg, const std::vector<RunCurves>& runs, const Panel& panel, double left,
                double top, CurveAxis x, double time_unit, const std::string& x_label, double x0, double x1) {
  Scale s{x0, x1, INFINITY, -INFINITY, left, top};
  for (const RunCurves& run : runs) {
    auto it = run.series.find(panel.series);
    if (it == run.series.end()) continue;
    for (const CurvePoint& p : it->second) s.y0 = std::min(s.y0, p.value), s.y1 = std::max(s.y1, p.value);
  }
  const std::vector<double> xt = nice_ticks(s.x0, s.x1, 5), yt = nice_ticks(s.y0, s.y1, 4);
  svg << "<g class=\"panel\" data-metric=\"" << panel.series << "\">\n";
  draw_axes(svg, s, xt, yt, panel.title, x_label);
  for (size_t r = 0; r < runs.size(); ++r) {
    auto it = runs[r].series.find(panel.series);
    if (it == runs[r].series.end()) continue;
    const char* colour = kColours[r % std::size(kColours)];
    svg << "<polyline class=\"series\" data-run=\"" << io::xml_escaped(runs[r].name) << "\" data-metric=\"" << panel.series
        << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.6\" points=\"";
    for (const CurvePoint& p : it->second) svg << num(s.px(x_of(p, x, time_unit))) << "," << num(s.py(p.value)) << " ";
    svg << "\"/>\n";
    if (it->second.size() <= 60)
      for (const CurvePoint& p : it->second)
        svg << "<circle cx=\"" << num(s.px(x_of(p, x, time_unit))) << "\" cy=\"" << num(s.py(p.value))
            << "\" r=\"2.5\" fill=\"" << colour << "\"/>\n";
  }
  svg << "</g>\n";
}

}  // namespace

std::string curves_svg(const std::vector<RunCurves>& runs, CurveAxis x) {
  std::vector<const Panel*> panels;
  double max_seconds = 0;
  for (const Panel& p : kPanels)
    for (const RunCurves& run : runs)
      if (run.series.count(p.series) && !run.series.at(p.series).empty()) {
        panels.push_back(&p);
        break;
      }
  for (const RunCurves& run : runs)
    for (const auto& [key, points] : run.series)
      for (const CurvePoint& p : points) max_seconds = std::max(max_seconds, p.elapsed);
  const bool minutes = x == CurveAxis::time && max_seconds >= 180;
  double x0 = INFINITY, x1 = -INFINITY;
  for (const RunCurves& run : runs)
    for (const auto& [key, points] : run.series)
      for (const CurvePoint& p : points)
        x0 = std::min(x0, x_of(p, x, minutes ? 60.0 : 1.0)), x1 = std::max(x1, x_of(p, x, minutes ? 60.0 : 1.0));
  const std::string x_label = x == CurveAxis::step ? "step" : minutes ? "time (minutes)" : "time (seconds)";
  const double legend_h = 30 + 20.0 * static_cast<double>(runs.size());
  const size_t rows = (panels.size() + kColumns - 1) / kColumns;
  const double width = kGap + kColumns * (kPanelW + kGap), height = legend_h + static_cast<double>(rows) * (kPanelH + kGap) + kGap;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << num(kGap) << "\" y=\"22\" font-size=\"16\" font-weight=\"bold\">Training curves</text>\n";
  for (size_t r = 0; r < runs.size(); ++r) {
    const double y = 40 + 20.0 * static_cast<double>(r);
    svg << "<g class=\"legend\"><line x1=\"" << num(kGap) << "\" x2=\"" << num(kGap + 28) << "\" y1=\"" << num(y)
        << "\" y2=\"" << num(y) << "\" stroke=\"" << kColours[r % std::size(kColours)] << "\" stroke-width=\"3\"/><text x=\""
        << num(kGap + 36) << "\" y=\"" << num(y + 4) << "\">" << io::xml_escaped(runs[r].name) << "</text></g>\n";
  }
  if (panels.empty())
    svg << "<text x=\"" << num(kGap) << "\" y=\"" << num(legend_h + 20) << "\">no figures logged yet</text>\n";
  for (size_t i = 0; i < panels.size(); ++i)
    draw_panel(svg, runs, *panels[i], kGap + static_cast<double>(i % kColumns) * (kPanelW + kGap),
               legend_h + static_cast<double>(i / kColumns) * (kPanelH + kGap), x, minutes ? 60.0 : 1.0, x_label, x0, x1);
  svg << "</svg>\n";
  return svg.str();
}

std::string curves_html(const std::vector<RunCurves>& runs, CurveAxis x) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Training curves</title></head>\n<body>\n" +
         curves_svg(runs, x) + "</body></html>\n";
}

}  // namespace attn
