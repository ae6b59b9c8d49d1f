// tandem: the command-line tool.
//
//   tandem info     the backends compiled in, which one auto picks and why, devices and kernel names
//   tandem kernels  every kernel's KernelInfo (dtypes, ops, precision, determinism, requirements)
//   tandem reduce   one reduction with each chosen kernel: verified, then timed
//   tandem matmul   one matrix product with each chosen kernel: verified, then timed
//   tandem check    every kernel of every usable backend over sizes that miss every block
//
// One file per command in tools/cli/ (info, kernels, reduce, matmul, check), with the shared option
// parsing (options), table printing (table) and timing (timing). Every result is verified against a
// reference computed independently of the library by the test-support library (verify/: the
// same references, bounds and generator as the tests); which kernel takes what, and the precision of
// its bound, come from its KernelInfo. Only the public API is used, so the tool runs unchanged
// whichever backends are compiled in. Exit status (tools/cli/options.hpp): 0 when everything ran and
// verified, 1 when a check failed or the run could not be done here (a named backend that cannot run, a
// failure tandem::Error reports), 2 for a bad command line or setting (no or an unknown command, option,
// kernel or value; a tandem::Error of kind value or type). Library messages are printed in the CLI's
// words (cli_words(): "--backend cpu" where the C++ API says "Backend::cpu").
#include <algorithm>
#include <cstdio>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/cli/commands.hpp"

namespace {

using tandem_cli::Command;

const std::vector<const Command*>& commands() {
  static const std::vector<const Command*> list = {&tandem_cli::info_command, &tandem_cli::kernels_command,
                                                   &tandem_cli::reduce_command, &tandem_cli::matmul_command,
                                                   &tandem_cli::check_command};
  return list;
}

// A help text with {ops}, {dtypes} and {backends} spelled from the library's tables: "sum|min|...",
// "int32|...", "cpu|cuda".
std::string expand(std::string_view text) {
  std::string ops, dtypes, backends, s(text);
  const auto add = [](std::string& list, const char* name) {  // (two appends: GCC 12 warns, wrongly, on "" + string)
    if (!list.empty()) list += '|';
    list += name;
  };
  for (tandem::Op op : tandem::all_ops) add(ops, tandem::to_string(op));
  for (const tandem::DtypeInfo& d : tandem::dtypes) add(dtypes, d.name);
  for (const tandem::BackendInfo& b : tandem::backends) add(backends, b.name);
  for (auto [key, value] :
       {std::pair<std::string_view, const std::string&>{"{ops}", ops}, {"{dtypes}", dtypes}, {"{backends}", backends}})
    for (std::size_t at; (at = s.find(key)) != std::string::npos;) s.replace(at, key.size(), value);
  return s;
}

void print_main_help(std::FILE* out) {
  std::fprintf(out, "usage: tandem <command> [options]\n\ncommands:\n");
  for (const Command* c : commands()) std::fprintf(out, "  %-8s %s\n", c->name.data(), expand(c->summary).c_str());
  std::fprintf(out, "%s",
               expand("\nRun 'tandem <command> --help' (or 'tandem help <command>') for a command's options.\n"
                      "\nenvironment:\n"
                      "  TANDEM_BACKEND      {backends}|auto: the backend when --backend is not given; auto (or\n"
                      "                      unset) picks CUDA when a usable GPU is present. A backend named here or\n"
                      "                      by --backend that cannot run on this machine is an error (exit status\n"
                      "                      1), never skipped.\n"
                      "  TANDEM_DEVICE       the GPU (0, 1, ...) of a CUDA engine; the CPU backend ignores it\n"
                      "  TANDEM_DEVICES      all, or GPU indices such as 0,1,3: an engine over several GPUs\n"
                      "  TANDEM_MODULE_PATH  absolute folders, separated by ':', searched for the backend modules\n"
                      "                      (libtandem_cuda.so, ...) before the library's own folder\n"
                      "\nexit status:\n"
                      "  0  everything ran and verified\n"
                      "  1  a check failed, or the run could not be done here (a backend that cannot run, a failure\n"
                      "     of the machine or the library)\n"
                      "  2  a bad command line or setting: no command, an unknown command, option, kernel or value,\n"
                      "     a bad TANDEM_BACKEND, TANDEM_DEVICE or TANDEM_DEVICES\n")
                   .c_str());
}

// A failure's message on stderr.
void print_error(std::string_view what) {
  std::fflush(stdout);
  std::fprintf(stderr, "tandem: %.*s\n", int(what.size()), what.data());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "help") args = {args[1], "--help"};  // tandem help <command>
  if (args.empty()) {  // no command: the usage, on stderr, as a usage error
    print_main_help(stderr);
    return tandem_cli::kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_main_help(stdout);
    return tandem_cli::kExitOk;
  }
  if (args[0] == "--version") {
    std::printf("tandem %d.%d.%d\n", TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR, TANDEM_VERSION_PATCH);
    return tandem_cli::kExitOk;
  }
  const auto& list = commands();
  const auto it = std::find_if(list.begin(), list.end(), [&](const Command* c) { return c->name == args[0]; });
  if (it == list.end()) {
    std::fprintf(stderr, "tandem: unknown command '%.*s'; see 'tandem --help'\n", int(args[0].size()), args[0].data());
    return tandem_cli::kExitUsage;
  }
  const Command& cmd = **it;
  const std::span<const std::string_view> rest(args.begin() + 1, args.end());
  if (std::find_if(rest.begin(), rest.end(), [](std::string_view a) { return a == "--help" || a == "-h"; }) !=
      rest.end()) {
    std::printf("%s", expand(cmd.help).c_str());
    return tandem_cli::kExitOk;
  }
  try {
    return cmd.run(tandem_cli::Options(rest, cmd.valued, cmd.flags));
  } catch (const tandem_cli::UsageError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tandem: %s; see 'tandem %.*s --help'\n", e.what(), int(cmd.name.size()), cmd.name.data());
    return tandem_cli::kExitUsage;
  } catch (const std::bad_alloc&) {
    print_error("out of host memory; try a smaller size");
    return tandem_cli::kExitFailed;
  } catch (const tandem::Error& e) {  // a bad value or type (a setting, a name) is a usage error
    print_error(tandem_cli::message(e));
    return e.kind() == tandem::ErrorKind::failure ? tandem_cli::kExitFailed : tandem_cli::kExitUsage;
  } catch (const std::exception& e) {  // anything the standard library throws
    print_error(e.what());
    return tandem_cli::kExitFailed;
  }
}
