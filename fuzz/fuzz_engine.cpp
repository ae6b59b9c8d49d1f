// fuzz_api's engine selection: Engine(Backend) for valid and invalid enumerators, and Engine() under any
// TANDEM_BACKEND (set, unset, valid names, near misses and random strings).
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>

#include "harness.hpp"

namespace tandem_fuzz {

void fuzz_engine(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) {
    const int b = in.ConsumeIntegralInRange<int>(0, int(std::size(tandem::backends)) + 1);  // (past: no enumerator)
    begin_call("Engine(Backend(" + std::to_string(b) + "))");
    bool ok = false;  // a backend of the table that can run here
    for (const tandem::BackendStatus& st : tandem::backend_status()) ok |= int(st.backend) == b && st.usable;
    if (run(ok ? Expect::ok : Expect::error, [&] { Engine e{Backend(b)}; }) && b == 0) {
      const Engine e{Backend::cpu};
      if (e.backend() != Backend::cpu) fail("Engine(Backend::cpu) is not a CPU engine");
      begin_call("Engine(Backend::cpu).device()");
      if (e.device().compute_units < 1) fail("a CPU engine's device has no compute units");
    }
    return;
  }
  static const char* const names[] = {"", "auto", "cpu", "cuda", "gpu", "CPU", "cpu ", " auto", "cuda\n"};
  const std::size_t pick = in.ConsumeIntegralInRange<std::size_t>(0, std::size(names) + 1);
  const bool unset = pick == std::size(names) + 1;  // TANDEM_BACKEND not set at all: auto
  const std::string value = pick < std::size(names) ? names[pick] : unset ? "" : in.ConsumeRandomLengthString(16);
  const std::string as_set = value.c_str();  // what getenv can see: up to the first NUL
  const char* old = std::getenv("TANDEM_BACKEND");
  const std::string saved = old ? old : "";
  if (unset)
    unsetenv("TANDEM_BACKEND");
  else
    setenv("TANDEM_BACKEND", as_set.c_str(), 1);
  begin_call(unset ? std::string("Engine() with TANDEM_BACKEND unset")
                   : "Engine() with TANDEM_BACKEND=" + quoted(as_set));
  const bool is_auto = as_set.empty() || as_set == "auto";
  // The backend of the table the value names, and whether it can run here.
  std::optional<Backend> named;
  for (const tandem::BackendStatus& st : tandem::backend_status())
    if (as_set == tandem::to_string(st.backend) && st.usable) named = st.backend;
  const bool ok = is_auto || named.has_value();
  Backend got = Backend::cpu;
  if (run(ok ? Expect::ok : Expect::error, [&] { got = Engine().backend(); })) {
    const Backend want = named ? *named : tandem::auto_backend().backend;
    if (got != want) fail("Engine() picked another backend than TANDEM_BACKEND names");
  }
  if (old)
    setenv("TANDEM_BACKEND", saved.c_str(), 1);
  else
    unsetenv("TANDEM_BACKEND");
}

}  // namespace tandem_fuzz
