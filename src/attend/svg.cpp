// attn attend --format svg: the heatmaps of the document (attend.h) as one static SVG, a block
// per attention stack, a row per layer, a column per head, the tokens along the first map's axes.
#include <algorithm>
#include <cstdio>
#include <string>

#include "attn/io/xml.h"
#include "attn/attend/attend.h"

namespace attn {
namespace {

std::string shade(double w) {  // white -> blue, as the page
  const double t = w < 0 ? 0 : w > 1 ? 1 : w;
  char buf[32];
  std::snprintf(buf, sizeof buf, "rgb(%d,%d,%d)", static_cast<int>(255 - 219 * t + 0.5),
                static_cast<int>(255 - 168 * t + 0.5), static_cast<int>(255 - 58 * t + 0.5));
  return buf;
}

std::string text(double x, double y, const std::string& s, const std::string& extra = "") {
  char buf[96];
  std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\"%s>", x, y, extra.c_str());
  return buf + io::xml_escaped(s) + "</text>\n";
}

const std::vector<std::string>& tokens_of(const nlohmann::json& doc, const std::string& side, std::vector<std::string>& keep) {
  keep = doc.at(side).at("tokens").get<std::vector<std::string>>();
  return keep;
}

}  // namespace

std::string attend_svg(const nlohmann::json& doc) {
  const double cell = 12, gap = 14, label = 90;
  std::string body;
  double y = 30, width = 0;
  body += text(10, 20, "attention of " + doc.at("model").get<std::string>() + ": " + doc.at("source").at("text").get<std::string>(),
               " font-weight=\"600\"");
  for (const nlohmann::json& stack : doc.at("stacks")) {
    std::vector<std::string> qk, kk;
    const auto& q = tokens_of(doc, stack.at("queries").get<std::string>(), qk);
    const auto& k = tokens_of(doc, stack.at("keys").get<std::string>(), kk);
    y += 22;
    body += text(10, y, stack.at("title").get<std::string>(), " font-weight=\"600\"");
    y += 8;
    for (const nlohmann::json& layer : stack.at("layers")) {
      double x = label;
      const double top = y + 14;
      for (const nlohmann::json& head : layer.at("heads")) {
        body += text(x, y + 10, "layer " + std::to_string(layer.at("layer").get<int>()) + " head " +
                                    std::to_string(head.at("head").get<int>()), " fill=\"#6b7385\"");
        const auto& w = head.at("weights");
        for (size_t i = 0; i < w.size(); ++i)
          for (size_t j = 0; j < w[i].size(); ++j) {
            char r[160];
            std::snprintf(r, sizeof r, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"%s\"/>\n",
                          x + j * cell, top + i * cell, cell, cell, shade(w[i][j].get<double>()).c_str());
            body += r;
          }
        x += static_cast<double>(k.size()) * cell + gap;
      }
      for (size_t i = 0; i < q.size(); ++i)  // query tokens along the rows of the layer
        body += text(label - 4, top + (i + 0.75) * cell, q[i], " text-anchor=\"end\"");
      width = std::max(width, x);
      y = top + static_cast<double>(q.size()) * cell + gap;
    }
    // the key tokens down the columns of the stack's last row of maps
    const size_t maps = stack.at("layers").empty() ? 0 : stack.at("layers").back().at("heads").size();
    size_t longest = 0;
    for (size_t m = 0; m < maps; ++m)
      for (size_t j = 0; j < k.size(); ++j) {
        char at[96];
        const double x = label + static_cast<double>(m) * (static_cast<double>(k.size()) * cell + gap) + (j + 0.7) * cell;
        std::snprintf(at, sizeof at, " transform=\"rotate(90 %.1f %.1f)\"", x, y - gap + 4);
        body += text(x, y - gap + 4, k[j], at);
        longest = std::max(longest, k[j].size());
      }
    y += static_cast<double>(std::min<size_t>(longest, 14)) * 6;
  }
  char head[256];
  std::snprintf(head, sizeof head,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"10\">\n<rect width=\"100%%\" "
                "height=\"100%%\" fill=\"#fff\"/>\n",
                std::max(width, 400.0) + 10, y + 10);
  return head + body + "</svg>\n";
}

}  // namespace attn
