#include "tools/cli/options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "tools/cli/table.hpp"

namespace tandem_cli {

Options::Options(std::span<const std::string_view> args, std::span<const std::string_view> valued,
                 std::span<const std::string_view> flags) {
  auto known = [](std::span<const std::string_view> names, std::string_view n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (!arg.starts_with("--")) throw UsageError("unexpected argument '" + std::string(arg) + "'");
    const std::size_t eq = arg.find('=');
    const std::string name(arg.substr(0, eq));
    const bool takes_value = known(valued, name);
    if (!takes_value && !known(flags, name)) throw UsageError("unknown option '" + name + "'");
    std::string value;
    if (eq != std::string_view::npos) {
      if (!takes_value) throw UsageError(name + " takes no value");
      value = arg.substr(eq + 1);
    } else if (takes_value) {
      if (i + 1 == args.size()) throw UsageError(name + " needs a value");
      value = args[++i];
    }
    if (!values_.emplace(name, value).second) throw UsageError(name + " is given twice");
  }
}

const std::string* Options::get(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

namespace {

std::optional<std::uint64_t> parse_digits(std::string_view s) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool multiply(std::uint64_t& v, std::uint64_t by) {
  if (by != 0 && v > std::numeric_limits<std::uint64_t>::max() / by) return false;
  v *= by;
  return true;
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// s has the shape of a whole count (digits, b^e, or m[.f]e<exponent> whose value is whole), whatever its size:
// parse_count refused it only for being too large.
bool written_as_count(std::string_view s) {
  if (auto caret = s.find('^'); caret != std::string_view::npos)
    return all_digits(s.substr(0, caret)) && all_digits(s.substr(caret + 1));
  if (auto e = s.find_first_of("eE"); e != std::string_view::npos) {
    std::string_view mantissa = s.substr(0, e), exponent = s.substr(e + 1);
    const auto dot = mantissa.find('.');
    const std::string_view whole = mantissa.substr(0, dot);
    std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : mantissa.substr(dot + 1);
    while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
    if (!all_digits(whole) || !(fraction.empty() || all_digits(fraction)) || !all_digits(exponent)) return false;
    return exponent.size() > 2 || std::stoul(std::string(exponent)) >= fraction.size();  // (a whole number)
  }
  return all_digits(s);
}

}  // namespace

std::optional<std::uint64_t> parse_count(std::string_view s) {
  if (auto caret = s.find('^'); caret != std::string_view::npos) {
    auto base = parse_digits(s.substr(0, caret)), exponent = parse_digits(s.substr(caret + 1));
    if (!base || !exponent) return std::nullopt;
    if (*base <= 1) return *exponent == 0 ? 1 : *base;
    std::uint64_t v = 1;
    for (std::uint64_t i = 0; i < *exponent; ++i)
      if (!multiply(v, *base)) return std::nullopt;
    return v;
  }
  if (auto e = s.find_first_of("eE"); e != std::string_view::npos) {
    std::string mantissa(s.substr(0, e));
    std::uint64_t fraction_digits = 0;
    if (auto dot = mantissa.find('.'); dot != std::string::npos) {
      fraction_digits = mantissa.size() - dot - 1;
      mantissa.erase(dot, 1);
    }
    auto m = parse_digits(mantissa), exponent = parse_digits(s.substr(e + 1));
    if (!m || !exponent) return std::nullopt;
    std::uint64_t v = *m;
    while (fraction_digits > 0 && v % 10 == 0) v /= 10, --fraction_digits;
    if (*exponent < fraction_digits) return std::nullopt;  // not a whole number
    if (v == 0) return 0;
    for (std::uint64_t i = fraction_digits; i < *exponent; ++i)
      if (!multiply(v, 10)) return std::nullopt;
    return v;
  }
  return parse_digits(s);
}

std::uint64_t count_option(const Options& o, std::string_view name, std::uint64_t fallback, std::uint64_t at_least) {
  const std::string* text = o.get(name);
  if (!text) return fallback;
  const auto v = parse_count(*text);
  if (!v && written_as_count(*text))
    throw UsageError(std::string(name) + ": '" + *text + "' is more than the largest count, 2^64 - 1");
  if (!v) throw UsageError(std::string(name) + ": '" + *text + "' is not a count; write e.g. 1000000, 1e6 or 2^20");
  if (*v < at_least)
    throw UsageError(std::string(name) + " must be at least " + std::to_string(at_least) + " (got " + *text + ")");
  return *v;
}

std::string choice_option(const Options& o, std::string_view name, const std::vector<std::string>& allowed,
                          std::string fallback) {
  const std::string* text = o.get(name);
  if (!text) return fallback;
  if (std::find(allowed.begin(), allowed.end(), *text) == allowed.end())
    throw UsageError(std::string(name) + ": '" + *text + "' is not one of " + join(allowed));
  return *text;
}

std::string backend_option(const Options& o, bool allow_all) {
  std::vector<std::string> allowed;
  for (tandem::Backend b : tandem::all_backends) allowed.push_back(tandem::to_string(b));
  allowed.push_back("auto");
  if (allow_all) allowed.push_back("all");
  return choice_option(o, "--backend", allowed, "");
}

std::string named_backend(const Options& o, bool allow_all) {
  std::string backend = backend_option(o, allow_all);
  if (backend.empty()) {
    const char* env = std::getenv("TANDEM_BACKEND");
    if (env && *env && std::string_view(env) != "auto")  // (a bad name: the library's message naming the variable)
      backend = tandem::to_string(tandem::backend_from_env());
  }
  return backend;
}

namespace {

// Backend b's kernel names of `kind`, read without an engine (also where b cannot run here); empty where
// its table cannot be read (not compiled in, or its module cannot be loaded).
std::vector<std::string> kernel_names(tandem::Backend b, std::string_view kind) {
  try {
    const auto infos = kind == "reduce" ? tandem::reduce_kernel_info(b) : tandem::matmul_kernel_info(b);
    std::vector<std::string> names;
    for (const auto& k : infos) names.push_back(k.name);
    return names;
  } catch (const tandem::Error&) {
    return {};
  }
}

}  // namespace

void check_kernel_name(const tandem::Engine& eng, std::string_view kind, const std::string& name) {
  if (name == "all" || name == "deterministic") return;
  const auto names = kind == "reduce" ? eng.reduce_kernels() : eng.matmul_kernels();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  const char* here = tandem::to_string(eng.backend());
  const std::string valid = "; the " + std::string(here) + " " + std::string(kind) + " kernels are " + join(names) +
                            ", deterministic and all";
  std::string unread;  // the backends whose tables cannot be read here
  for (tandem::Backend other : tandem::all_backends) {
    if (other == eng.backend()) continue;
    const auto theirs = kernel_names(other, kind);
    if (theirs.empty()) unread += std::string(unread.empty() ? "" : ", ") + tandem::to_string(other);
    if (std::find(theirs.begin(), theirs.end(), name) != theirs.end())
      throw UsageError("'" + name + "' is a " + tandem::info(other).label + " " + std::string(kind) +
                       " kernel, not a " + here + " one; use --backend " + tandem::to_string(other) + " to run it" +
                       valid);
  }
  throw UsageError(
      "unknown " + std::string(kind) + " kernel '" + name + "'" + valid + " ('tandem kernels' lists every backend's" +
      (unread.empty() ? std::string(")") : ", and says why the " + unread + " kernels cannot be read here)"));
}

namespace {
class CliWords final : public tandem::Words {
 public:
  std::string arg(tandem::Arg a) const override {
    using tandem::Arg;
    switch (a) {
      case Arg::backend:
        return "--backend";
      case Arg::device:
        return "TANDEM_DEVICE";
      case Arg::devices:
        return "TANDEM_DEVICES";
      case Arg::kernel:
        return "--kernel";
      case Arg::deterministic:
        return "--kernel deterministic";
      case Arg::kernel_info:
        return "'tandem kernels'";
      default:
        return tandem::cpp_words().arg(a);  // (the rest: the same words, "A", "the output", ...)
    }
  }
  std::string setting(tandem::Arg a, const std::string& value) const override {
    using tandem::Arg;
    switch (a) {
      case Arg::backend:
        return "--backend " + value;
      case Arg::kernel:
        return "--kernel " + value;
      case Arg::deterministic:
        return "--kernel deterministic";
      case Arg::kernel_info:
        return "the " + value + " column of 'tandem kernels'";
      case Arg::device:
        return "TANDEM_DEVICE=" + value;
      case Arg::devices:
        return "TANDEM_DEVICES=" + value;
      default:
        return tandem::cpp_words().setting(a, value);
    }
  }
  std::string dtype(tandem::Dtype d) const override { return tandem::to_string(d); }  // --dtype's names
};
}  // namespace

const tandem::Words& cli_words() {
  static const CliWords words;
  return words;
}

std::string message(const tandem::Error& e) {
  std::string s = e.message(cli_words());
  if (s.starts_with("tandem: ")) s.erase(0, 8);  // (the CLI puts its own "tandem: " first)
  return s;
}

tandem::Dtype dtype_option(const Options& o, tandem::Dtype fallback, bool matmul) {
  std::vector<std::string> allowed;
  for (bool integer : {false, true})  // floats first, the default's kind
    for (const tandem::DtypeInfo& d : tandem::dtypes)
      if (d.integer == integer && (!matmul || d.matmul)) allowed.push_back(d.name);
  return *tandem::parse_dtype(choice_option(o, "--dtype", allowed, tandem::to_string(fallback)));
}

tandem::Engine make_engine(const std::string& backend) {
  if (backend.empty()) return tandem::Engine();
  return tandem::Engine(tandem::parse_backend(backend));
}

std::string describe(const tandem::BackendStatus& s) {
  const std::string state = !s.compiled_in ? "not compiled in"
                            : s.usable     ? "compiled in, usable"
                                           : "compiled in, not usable";
  if (s.reason.empty()) return state;
  if (s.reason.starts_with(state)) return s.reason;  // the reason already says it
  return state + ": " + s.reason;
}

}  // namespace tandem_cli
