// tandem kernels: every kernel's KernelInfo (what it takes and promises), as a table or as JSON.
#include "tests/support/kernels.hpp"

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

options:
  --backend cpu|cuda|auto|all   the backend to list; all (the default, unless TANDEM_BACKEND names
                                one): every usable backend, and why each other one is not listed. A
                                named backend that cannot run here is an error (exit status 1): the
                                CUDA table comes from the CUDA module through an engine on a usable
                                GPU, so without one only the CUDA kernel names are printed
  --json                        a JSON list, one object per kernel:
                                {"backend", "kind": "reduce"|"matmul", "name", "dtypes": [...],
                                 "ops": [...], "precision", "deterministic", "determinism",
                                 "auto_pick", "baseline", "requirement", "per_row_col"}
                                (backends not listed are named on stderr)
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

// Why a backend's table is not listed, and the kernel names that can be listed without it.
std::string not_listed_line(tandem::Backend b, const std::string& reason) {
  std::string line = std::string(tandem::to_string(b)) + " not listed: " + cli_terms(reason);
  if (b == tandem::Backend::cuda) {
    line +=
        ". The CUDA kernel table (KernelInfo) comes from the CUDA module, which gives it only through an "
        "engine on a usable GPU, so it cannot be listed on this machine; the CUDA kernel names are: reduce " +
        join(cuda_kernel_names("reduce")) + "; matmul " + join(cuda_kernel_names("matmul")) +
        ". Run 'tandem kernels --backend cuda' on a machine with a usable NVIDIA GPU for their metadata";
  }
  return line;
}

void print_table(const tandem::Engine& eng) {
  const auto reduce = eng.reduce_kernel_info(), matmul = eng.matmul_kernel_info();
  struct Row {
    const char* kind;
    const tandem::KernelInfo* k;
  };
  std::vector<Row> rows;
  for (const auto& k : reduce) rows.push_back({"reduce", &k});
  for (const auto& k : matmul) rows.push_back({"matmul", &k});
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows)
    cells.push_back({r.kind, r.k->name, names(r.k->dtypes), names(r.k->ops), tandem::to_string(r.k->precision),
                     deterministic_cell(*r.k), tandem::to_string(r.k->determinism), yes_no(r.k->auto_pick),
                     yes_no(r.k->baseline), r.k->requirement.empty() ? "-" : r.k->requirement,
                     yes_no(r.k->per_row_col)});
  auto width = [&](std::size_t column) {
    std::size_t w = 0;
    for (const auto& row : cells) w = std::max(w, display_width(row[column]));
    return w;
  };
  std::printf("kernels: %s (%s)\n", tandem::to_string(eng.backend()), eng.device().name.c_str());
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
                     {"per row/col", width(10), true}});
  table.header();
  for (const auto& row : cells) table.row(row);
  std::printf(
      "deterministic: whether deterministic mode (the canonical order: the same bits on every backend) may run\n"
      "  the kernel; determinism: what its default mode promises (run_to_run: the same bits on the same machine,\n"
      "  in an order of its own; not_guaranteed: none; every_backend: the canonical order's bits)\n");
}

void add_json(std::vector<std::string>& objects, const tandem::Engine& eng) {
  const char* backend = tandem::to_string(eng.backend());
  for (const auto& k : eng.reduce_kernel_info()) objects.push_back(tandem_test::kernel_json(k, "reduce", backend));
  for (const auto& k : eng.matmul_kernel_info()) objects.push_back(tandem_test::kernel_json(k, "matmul", backend));
}

int cmd_kernels(const Options& o) {
  const std::string backend = named_backend(o, /*allow_all=*/true);  // --backend, else TANDEM_BACKEND
  const bool json = o.has("--json");
  std::vector<tandem::Engine> engines;
  std::vector<std::string> not_listed;
  if (backend.empty() || backend == "all") {
    for (const auto& s : tandem::backend_status()) {
      if (s.usable)
        engines.emplace_back(s.backend);
      else
        not_listed.push_back(not_listed_line(s.backend, describe(s)));
    }
  } else {
    try {
      engines.push_back(make_engine(backend));
    } catch (const tandem::Error& e) {  // a backend the user named that cannot run here: an error
      const tandem::Backend b = tandem::parse_backend(backend);
      if (b != tandem::Backend::cuda) throw;
      std::fflush(stdout);
      std::fprintf(stderr, "tandem: kernels: %s\n", not_listed_line(b, e.what()).c_str());
      return kExitFailed;
    }
  }

  if (json) {
    std::vector<std::string> objects;
    for (const auto& eng : engines) add_json(objects, eng);
    std::printf("[\n");
    for (std::size_t i = 0; i < objects.size(); ++i)
      std::printf("  %s%s\n", objects[i].c_str(), i + 1 < objects.size() ? "," : "");
    std::printf("]\n");
    std::fflush(stdout);
    for (const auto& line : not_listed) std::fprintf(stderr, "kernels: %s\n", line.c_str());
    return 0;
  }
  for (std::size_t i = 0; i < engines.size(); ++i) {
    if (i > 0) std::printf("\n");
    print_table(engines[i]);
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
