// Text output of the tandem CLI: printf-style strings, numbers with units, and fixed-width tables
// printed a row at a time as results come in.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace tandem_cli {

template <class... Args>
std::string strf(const char* format, Args... args) {
  const int len = std::snprintf(nullptr, 0, format, args...);
  std::string s(std::size_t(std::max(len, 0)), '\0');
  std::snprintf(s.data(), s.size() + 1, format, args...);
  return s;
}

std::string join(const std::vector<std::string>& items, const char* separator = ", ");

// "26.6 µs", "2.43 ms", "1.250 s".
std::string format_seconds(double s);
// "16777216 (2^24)" for powers of two, else the number.
std::string format_count(std::uint64_t n);
// An absolute error: "0" or three significant digits.
std::string format_error(long double e);

// Characters on screen: UTF-8 continuation bytes take no column.
std::size_t display_width(std::string_view s);

// A table of fixed-width columns, printed a row at a time as results come in.
class Table {
 public:
  struct Column {
    std::string title;
    std::size_t width;
    bool left = false;  // text left-aligned, numbers right-aligned
  };
  explicit Table(std::vector<Column> columns);

  void header() const;  // the titles and a rule under each
  void row(const std::vector<std::string>& cells) const;

 private:
  std::vector<Column> columns_;
};

// The longest of names, and at least at_least: a column width.
std::size_t longest(const std::vector<std::string>& names, std::size_t at_least);

}  // namespace tandem_cli
