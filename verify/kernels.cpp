#include "verify/kernels.hpp"

#include <cstdio>

namespace tandem_verify {

const tandem::KernelInfo* find_kernel(const std::vector<tandem::KernelInfo>& infos, std::string_view name) {
  for (const tandem::KernelInfo& k : infos)
    if (k.name == name) return &k;
  return nullptr;
}

bool kernel_accepts(const std::vector<tandem::KernelInfo>& infos, std::string_view name, tandem::Dtype d,
                    const tandem::Op* op, bool deterministic) {
  const tandem::KernelInfo* k = find_kernel(infos, name);
  return k && k->accepts(d) && (!op || k->accepts(*op)) && (!deterministic || k->deterministic);
}

std::vector<std::string> kernels_taking(const std::vector<tandem::KernelInfo>& infos, tandem::Dtype d) {
  std::vector<std::string> names;
  for (const tandem::KernelInfo& k : infos)
    if (k.accepts(d)) names.push_back(k.name);
  return names;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

namespace {
template <class Items, class Name>
std::string json_list(const Items& items, Name name_of) {
  std::string s = "[";
  for (const auto& x : items) {
    if (s.size() > 1) s += ',';
    s += json_string(name_of(x));
  }
  s += ']';
  return s;
}
const char* json_bool(bool b) { return b ? "true" : "false"; }
}  // namespace

std::string kernel_json(const tandem::KernelInfo& k, std::string_view kind, std::string_view backend) {
  // (Appends only: GCC 12 reports "literal" + std::string&& as a -Wrestrict overlap.)
  std::string s = "{";
  auto field = [&](const char* name, const std::string& json) {
    if (s.size() > 1) s += ',';
    s.append("\"").append(name).append("\":").append(json);
  };
  if (!backend.empty()) field("backend", json_string(backend));
  field("kind", json_string(kind));
  field("name", json_string(k.name));
  field("dtypes", json_list(k.dtypes, [](tandem::Dtype d) { return tandem::to_string(d); }));
  field("ops", json_list(k.ops, [](tandem::Op o) { return tandem::to_string(o); }));
  field("precision", json_string(tandem::to_string(k.precision)));
  std::string precisions = "{";  // {"float":"tf32","bfloat16":"full",...}: each element type's
  for (tandem::Dtype d : k.dtypes) {
    if (precisions.size() > 1) precisions += ',';
    precisions.append(json_string(tandem::to_string(d)))
        .append(":")
        .append(json_string(tandem::to_string(k.precision_of(d))));
  }
  field("precisions", precisions + "}");
  field("deterministic", json_bool(k.deterministic));
  field("determinism", json_string(tandem::to_string(k.determinism)));
  field("auto_pick", json_bool(k.auto_pick));
  field("baseline", json_bool(k.baseline));
  field("requirement", json_string(k.requirement));
  field("per_row_col", json_bool(k.per_row_col));
  field("runs_here", json_bool(k.runs_here));
  field("native_16bit", json_bool(k.native_16bit));
  s += '}';
  return s;
}

}  // namespace tandem_verify
