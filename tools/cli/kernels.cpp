// tandem kernels: every kernel's KernelInfo (what it takes and promises), as a table or as JSON.
#include "verify/kernels.hpp"

#include <cstdio>

#include "tools/cli/commands.hpp"
#include "tools/cli/table.hpp"

namespace tandem_cli {
namespace {

constexpr std::string_view kKernelsHelp = R"(usage: tandem kernels [options]

Prints every reduce and matmul kernel of a backend with its KernelInfo: the element types (dtypes) and
reductions (ops) it takes, the precision it computes in (full, or tf32/bf16 inputs), whether
deterministic mode may run it, what its default mode guarantees about the bits of float results
(determinism: not_guaranteed, run_to_run on the same machine, or every_backend), whether auto may pick it, whether it is a vendor baseline (CUB,
cuBLAS), and what it needs beyond the backend (requirement, e.g. a compute capability). "auto" comes
first. The deterministic column says why a kernel that deterministic mode may not run is "no", from
its determinism. The engine refuses, with tandem::Error, a call that a kernel's KernelInfo does not list.

The tables are fixed information: a backend that cannot run here is listed too, with a header line that
says so and why (the CUDA table comes from the CUDA module, which needs the CUDA libraries but no GPU).

options:
  --backend {backends}|auto|all   the backend to list; all (the default, unless TANDEM_BACKEND names
                                one): every backend whose table can be read, and why each other one
                                is not listed. A named backend whose table cannot be read here (not
                                compiled in, or its module cannot be loaded) is an error (exit
                                status 1); one that merely has no usable device is listed (exit 0)
  --json                        a JSON list, one object per kernel:
                                {"backend", "usable", "kind": "reduce"|"matmul", "name", "dtypes": [...],
                                 "ops": [...], "precision", "precisions": {dtype: precision},
                                 "deterministic", "determinism", "auto_pick", "baseline",
                                 "requirement", "per_row_col", "runs_here", "native_16bit"}
                                ("usable": whether the backend can run here; backends listed without
                                a usable device, and those not listed, are named on stderr)
)";

std::string names(const std::vector<tandem::Dtype>& dtypes) {
  std::vector<std::string> s;
  for (tandem::Dtype d : dtypes) s.push_back(tandem::to_string(d));
  return join(s);
}
std::string names(const std::vector<tandem::Op>& ops) {
  std::vector<std::string> s;
  for (tandem::Op op : ops) s.push_back(tandem::to_string(op));
  return s.empty() ? "-" : join(s);
}
const char* yes_no(bool b) { return b ? "yes" : "no"; }

// The deterministic column: "yes", or "no" with what the kernel's default mode does promise instead.
std::string deterministic_cell(const tandem::KernelInfo& k) {
  if (k.deterministic) return "yes";
  switch (k.determinism) {
    case tandem::Determinism::run_to_run:
      return "no (run-to-run, not the canonical order)";
    case tandem::Determinism::not_guaranteed:
      return "no (bits may differ run to run)";
    default:
      return "no";
  }
}

// One backend's tables as the command lists them: from its engine where the backend can run here (the
// header names its device), else read without one (tandem::reduce_kernel_info(Backend)), saying why it
// cannot run here.
struct Listing {
  tandem::Backend backend;
  bool usable;
  std::string where;  // the device's name, or why the backend cannot run here
  std::vector<tandem::KernelInfo> reduce, matmul;
};

// The header line of a listing.
std::string header(const Listing& l) {
  const std::string name = tandem::to_string(l.backend);
  if (l.usable) return "kernels: " + name + " (" + l.where + ")";
  return "kernels: " + name + ", listed without a usable " + tandem::info(l.backend).device +
         " (none of these kernels can run here): " + l.where;
}

// Backend b's listing: its engine's tables where one can be made here, else its tables read without one
// and why it cannot run (backend_status(), asked only then); throws tandem::Error where neither works.
Listing listing(tandem::Backend b) {
  try {
    const tandem::Engine eng(b);
    return {b, true, eng.device().name, eng.reduce_kernel_info(), eng.matmul_kernel_info()};
  } catch (const tandem::Error&) {
    for (const auto& s : tandem::backend_status())
      if (s.backend == b && !s.usable)
        return {b, false, describe(s), tandem::reduce_kernel_info(b), tandem::matmul_kernel_info(b)};
    throw;  // usable, yet no engine: the engine's error
  }
}

std::string not_listed_line(tandem::Backend b, const tandem::Error& e) {
  return std::string(tandem::to_string(b)) + " not listed: " + message(e);
}

// The precision column: one word where every element type has the same, else each group's
// ("float: tf32; bfloat16, float16: full").
std::string precision_cell(const tandem::KernelInfo& k) {
  std::vector<std::pair<tandem::Precision, std::string>> groups;
  for (tandem::Dtype d : k.dtypes) {
    const tandem::Precision p = k.precision_of(d);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == p; });
    if (it == groups.end())
      groups.push_back({p, tandem::to_string(d)});
    else
      it->second += std::string(", ") + tandem::to_string(d);
  }
  if (groups.size() <= 1) return tandem::to_string(k.precision);
  std::string s;
  for (const auto& [p, types] : groups) s += (s.empty() ? "" : "; ") + types + ": " + tandem::to_string(p);
  return s;
}

void print_table(const Listing& l) {
  struct Row {
    const char* kind;
    const tandem::KernelInfo* k;
  };
  std::vector<Row> rows;
  for (const auto& k : l.reduce) rows.push_back({"reduce", &k});
  for (const auto& k : l.matmul) rows.push_back({"matmul", &k});
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows)
    cells.push_back({r.kind, r.k->name, names(r.k->dtypes), names(r.k->ops), precision_cell(*r.k),
                     deterministic_cell(*r.k), tandem::to_string(r.k->determinism), yes_no(r.k->auto_pick),
                     yes_no(r.k->baseline), r.k->requirement.empty() ? "-" : r.k->requirement, yes_no(r.k->per_row_col),
                     yes_no(r.k->runs_here)});
  auto width = [&](std::size_t column) {
    std::size_t w = 0;
    for (const auto& row : cells) w = std::max(w, display_width(row[column]));
    return w;
  };
  std::printf("%s\n", header(l).c_str());
  const Table table({{"kind", width(0), true},
                     {"name", width(1), true},
                     {"dtypes", width(2), true},
                     {"ops", width(3), true},
                     {"precision", width(4), true},
                     {"deterministic", width(5), true},
                     {"determinism", width(6), true},
                     {"auto pick", width(7), true},
                     {"baseline", width(8), true},
                     {"requirement", width(9), true},
                     {"per row/col", width(10), true},
                     {"runs here", width(11), true}});
  table.header();
  for (const auto& row : cells) table.row(row);
  std::printf(
      "deterministic: whether deterministic mode (the canonical order: the same bits on every backend) may run\n"
      "  the kernel; determinism: what its default mode promises (run_to_run: the same bits on the same machine,\n"
      "  in an order of its own; not_guaranteed: none; every_backend: the canonical order's bits)\n");
}

void add_json(std::vector<std::string>& objects, const Listing& l) {
  // {"backend":..,"usable":..,} and then the kernel's own fields (verify/kernels.hpp)
  const std::string head = "{\"backend\":" + tandem_verify::json_string(tandem::to_string(l.backend)) +
                           ",\"usable\":" + (l.usable ? "true" : "false") + ",";
  for (const auto& k : l.reduce) objects.push_back(head + tandem_verify::kernel_json(k, "reduce").substr(1));
  for (const auto& k : l.matmul) objects.push_back(head + tandem_verify::kernel_json(k, "matmul").substr(1));
}

int cmd_kernels(const Options& o) {
  const std::string backend = named_backend(o, /*allow_all=*/true);  // --backend, else TANDEM_BACKEND
  const bool json = o.has("--json");
  std::vector<Listing> listings;
  std::vector<std::string> not_listed;
  if (backend.empty() || backend == "all") {
    for (tandem::Backend b : tandem::all_backends) {
      try {
        listings.push_back(listing(b));
      } catch (const tandem::Error& e) {
        not_listed.push_back(not_listed_line(b, e));
      }
    }
  } else {
    const tandem::Backend b = tandem::parse_backend(backend);  // (auto: the usable backend it picks)
    try {
      listings.push_back(listing(b));
    } catch (const tandem::Error& e) {  // a backend the user named whose table cannot be read: an error
      std::fflush(stdout);
      std::fprintf(stderr, "tandem: kernels: %s\n", not_listed_line(b, e).c_str());
      return kExitFailed;
    }
  }

  if (json) {
    std::vector<std::string> objects;
    for (const auto& l : listings) add_json(objects, l);
    std::printf("[\n");
    for (std::size_t i = 0; i < objects.size(); ++i)
      std::printf("  %s%s\n", objects[i].c_str(), i + 1 < objects.size() ? "," : "");
    std::printf("]\n");
    std::fflush(stdout);
    for (const auto& l : listings)
      if (!l.usable) std::fprintf(stderr, "%s\n", header(l).c_str());
    for (const auto& line : not_listed) std::fprintf(stderr, "kernels: %s\n", line.c_str());
    return 0;
  }
  for (std::size_t i = 0; i < listings.size(); ++i) {
    if (i > 0) std::printf("\n");
    print_table(listings[i]);
  }
  for (const auto& line : not_listed) std::printf("kernels: %s\n", line.c_str());
  return 0;
}

}  // namespace

const Command kernels_command = {
    "kernels",    "every kernel's KernelInfo: dtypes, ops, precision, determinism, requirements",
    kKernelsHelp, {"--backend"},
    {"--json"},   cmd_kernels};

}  // namespace tandem_cli
