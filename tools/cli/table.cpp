#include "tools/cli/table.hpp"

#include <bit>

namespace tandem_cli {

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : separator) + item;
  return s;
}

std::string format_seconds(double s) {
  if (s < 1e-5) return strf("%.2f µs", s * 1e6);
  if (s < 1e-3) return strf("%.1f µs", s * 1e6);
  if (s < 1) return strf("%.2f ms", s * 1e3);
  return strf("%.3f s", s);
}

std::string format_count(std::uint64_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) return strf("%llu (2^%d)", (unsigned long long)n, std::countr_zero(n));
  return std::to_string(n);
}

std::string format_error(long double e) { return e == 0 ? "0" : strf("%.3Lg", e); }

std::size_t display_width(std::string_view s) {
  return std::size_t(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {
  for (auto& c : columns_) c.width = std::max(c.width, display_width(c.title));
}

void Table::header() const {
  std::vector<std::string> titles, rules;
  for (const auto& c : columns_) {
    titles.push_back(c.title);
    rules.push_back(std::string(c.width, '-'));
  }
  row(titles);
  row(rules);
}

void Table::row(const std::vector<std::string>& cells) const {
  std::string line;
  for (std::size_t i = 0; i < columns_.size() && i < cells.size(); ++i) {
    const std::size_t w = display_width(cells[i]);
    const std::string fill(columns_[i].width > w ? columns_[i].width - w : 0, ' ');
    if (i > 0) line += "  ";
    line += columns_[i].left ? cells[i] + fill : fill + cells[i];
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::size_t longest(const std::vector<std::string>& names, std::size_t at_least) {
  for (const auto& n : names) at_least = std::max(at_least, n.size());
  return at_least;
}

}  // namespace tandem_cli
