// The command line of the tandem CLI: one command's options, counts, choices, and the --backend and
// --dtype values from the library's own tables (tandem::all_backends, tandem::dtypes).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tandem/tandem.hpp"

namespace tandem_cli {

// The exit status of every command: documented in 'tandem --help' and docs/CLI.md.
inline constexpr int kExitOk = 0;      // everything ran and verified
inline constexpr int kExitFailed = 1;  // a check failed, or the run could not be done here (a backend the
                                       // user named that cannot run, a failure of the machine or library)
inline constexpr int kExitUsage = 2;   // a bad command line or setting: no or an unknown command, an unknown
                                       // option, kernel or value, a bad TANDEM_BACKEND / TANDEM_DEVICE

// A bad command line: "tandem: <what>; see 'tandem <cmd> --help'" on stderr and exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The options of one command: "--name value", "--name=value", or a flag "--name"; each at most once.
class Options {
 public:
  Options(std::span<const std::string_view> args, std::span<const std::string_view> valued,
          std::span<const std::string_view> flags);

  const std::string* get(std::string_view name) const;
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

// A count written as 134217728, 1e6 (or 1.5e6) or 2^27.
std::optional<std::uint64_t> parse_count(std::string_view s);

// The count option `name`, or fallback when absent; at least at_least.
std::uint64_t count_option(const Options& o, std::string_view name, std::uint64_t fallback, std::uint64_t at_least = 0);

// The option `name`, one of allowed, or fallback when absent.
std::string choice_option(const Options& o, std::string_view name, const std::vector<std::string>& allowed,
                          std::string fallback);

// --backend: a backend of the table, "auto" (and "all" where allowed); "" when absent (then Engine()
// reads TANDEM_BACKEND).
std::string backend_option(const Options& o, bool allow_all = false);

// The backend the user named: --backend's value, else TANDEM_BACKEND's when set and not "auto"; ""
// when neither names one (then Engine() picks, as auto does).
std::string named_backend(const Options& o, bool allow_all = false);

// Checks a --kernel value against the engine's kernel table of `kind` ("reduce" or "matmul"; "all" and
// "deterministic" pass). A name the engine does not have is a UsageError that says which other backend
// has it ("'warp_shuffle' is a CUDA reduce kernel, not a cpu one; use --backend cuda") or lists the
// valid names.
void check_kernel_name(const tandem::Engine& eng, std::string_view kind, const std::string& name);

// The CLI's words for the terms of tandem::Error's messages: the options and variables that do here what
// the C++ API's arguments do there (Setting{Arg::backend, "cpu"}: "--backend cpu"; Arg::device:
// "TANDEM_DEVICE"; Setting{Arg::kernel, "auto"}: "--kernel auto"; deterministic: "--kernel deterministic").
const tandem::Words& cli_words();
// An error's message in those words.
std::string message(const tandem::Error& e);

// --dtype: a name of the dtype table (floats first), only the matmul types when matmul; fallback when
// absent.
tandem::Dtype dtype_option(const Options& o, tandem::Dtype fallback, bool matmul);

// The engine for a backend_option() value: "" is Engine() (TANDEM_BACKEND), anything else
// tandem::parse_backend ("auto" is the backend auto picks).
tandem::Engine make_engine(const std::string& backend);

// "compiled in, usable: <reason>", "not compiled in: <reason>", ... (in the CLI's terms)
std::string describe(const tandem::BackendStatus& s);

// One command of the CLI: its name, one-line summary, --help text, options and entry point.
struct Command {
  std::string_view name, summary, help;
  std::vector<std::string_view> valued, flags;
  int (*run)(const Options&);
};

}  // namespace tandem_cli
