// An engine over several devices (engine/multi_device.hpp says what runs where).
#include "engine/multi_device.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "engine/extent.hpp"
#include "engine/parallel.hpp"
#include "engine/parts.hpp"
#include "engine/registry.hpp"
#include "engine/results.hpp"

namespace tandem::detail {

namespace {

constexpr std::size_t kChunk = std::size_t(canonical::kChunk);

// "all" or a comma-separated list of device indices (TANDEM_DEVICES).
std::vector<int> parse_device_list(const std::string& value, const BackendEntry& backend) {
  if (value == "all") {
    const int count = backend.device_count();
    if (count == 0) throw Error("TANDEM_DEVICES=all: this machine has no usable " + std::string(backend.info->device));
    std::vector<int> all(static_cast<std::size_t>(count));
    for (int d = 0; d < count; ++d) all[std::size_t(d)] = d;
    return all;
  }
  std::vector<int> list;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = value.find(',', start);
    const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty() || item.size() > 6 || item.find_first_not_of("0123456789") != std::string::npos)
      throw value_error(Arg::devices, Message("TANDEM_DEVICES='", value, "' is not a device list"),
                        Message("set it to all, or to GPU indices separated by commas such as 0,1,3 (or leave it "
                                "unset for one GPU)"));
    list.push_back(std::stoi(item));
    if (comma == std::string::npos) return list;
    start = comma + 1;
  }
}

// The chunks [first, last) of `chunks` that member d of n holds: an even split, or one chunk for each
// of the first members when there are fewer chunks than members.
std::pair<std::size_t, std::size_t> chunks_of(std::size_t d, std::size_t n, std::size_t chunks) {
  if (chunks < n) return d < chunks ? std::pair{d, d + 1} : std::pair{chunks, chunks};
  return {chunks * d / n, chunks * (d + 1) / n};
}

// Copies between the members of a CPU engine: all host memory.
class HostCollectives final : public Collectives {
 public:
  void broadcast(const std::vector<Piece>& pieces, const std::vector<void*>& dst) override {
    for (const Piece& p : pieces)
      for (void* d : dst)
        if (static_cast<char*>(d) + p.offset != p.src) std::memcpy(static_cast<char*>(d) + p.offset, p.src, p.bytes);
  }
  void copy(void* dst, int, const void* src, int, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  std::size_t send_side(const std::vector<Transfer>& transfers) override {
    for (const Transfer& t : transfers)
      if (t.bytes > 0 && t.dst != t.src) std::memcpy(t.dst, t.src, t.bytes);
    return 0;
  }
  void wait_side(std::size_t, int) override {}
  void join_side() override {}
};

}  // namespace

std::size_t extent_of(const MatrixInput& v) {
  const std::size_t e = size_of(v.dtype);
  return batch_extent(batch_extent(matrix_extent(v.rows, v.cols, v.ld, e, "", true), v.count, v.stride, e, ""),
                      v.outer_count, v.outer_stride, e, "");
}

std::vector<std::size_t> bounds_by_shard(const Allocation* a, std::size_t e, std::size_t base, std::size_t step,
                                         std::size_t count, std::size_t D) {
  std::vector<std::size_t> bounds(D + 1, count);
  bounds[0] = 0;
  for (std::size_t d = 1; d < D; ++d) {
    if (a == nullptr || step == 0) {
      bounds[d] = count * d / D;
      continue;
    }
    for (const Allocation::Shard& sh : a->shards())
      if (std::size_t(sh.member) == d) {
        const std::size_t start = sh.first / e;
        bounds[d] = start <= base ? 0 : std::min(count, (start - base + step - 1) / step);
      }
    bounds[d] = std::max(bounds[d], bounds[d - 1]);
  }
  return bounds;
}

std::vector<std::size_t> bounds_by_index(std::size_t step, std::size_t count, std::size_t D) {
  std::vector<std::size_t> bounds(D + 1, count);
  bounds[0] = 0;
  const std::size_t chunks = (count * step + kChunk - 1) / kChunk;  // (allocate()'s shards of that Buffer)
  for (std::size_t d = 1; d < D; ++d) {
    const std::size_t start = chunks_of(d, D, chunks).first * kChunk;
    bounds[d] = std::max(bounds[d - 1], step == 0 ? count * d / D : std::min(count, (start + step - 1) / step));
  }
  return bounds;
}

std::unique_ptr<Collectives> make_host_collectives(const std::vector<std::shared_ptr<BackendImpl>>&) {
  return std::make_unique<HostCollectives>();
}

std::vector<int> resolve_devices(Backend backend, const EngineOptions& options) {
  std::vector<int> list = options.devices;
  Message what(Arg::devices);
  if (list.empty()) {
    const char* env = std::getenv("TANDEM_DEVICES");
    const BackendEntry& entry = backend_entry(backend);
    if (env == nullptr || *env == 0 || options.device >= 0 || options.stream != nullptr || !entry.device_count)
      return {};  // (a caller's device or stream means one GPU; a backend without a device count has one)
    const char* one = std::getenv("TANDEM_DEVICE");
    if (one != nullptr && *one != 0)
      throw value_error(
          Arg::devices, Message("TANDEM_DEVICE and TANDEM_DEVICES are both set"),
          Message("set TANDEM_DEVICES for an engine over several GPUs or TANDEM_DEVICE for one, not both"));
    list = parse_device_list(env, entry);
    what = Message("TANDEM_DEVICES");
  } else if (options.device >= 0) {
    throw value_error(Arg::devices, Message(Arg::device, " (", options.device, ") and ", Arg::devices, " are both set"),
                      Message("set ", Arg::devices, " alone for several GPUs, or ", Arg::device, " alone for one"));
  }
  std::set<int> seen;
  for (int d : list) {
    if (d < 0) throw value_error(Arg::devices, Message(what, " lists ", d), Message("device indices are 0, 1, ..."));
    if (!seen.insert(d).second)
      throw value_error(Arg::devices, Message(what, " lists device ", d, " twice"), Message("list each device once"));
  }
  if (list.size() > 1 && options.stream != nullptr)
    throw value_error(Arg::stream, Message(Arg::stream, " is one GPU's stream, but ", what, " lists several devices"),
                      Message("an engine over several GPUs makes a stream per device: leave ", Arg::stream, " null"));
  return list;
}

Group::Group(Backend backend, const std::vector<int>& devices) {
  for (int d : devices) {
    EngineOptions one;
    one.device = d;
    members_.emplace_back(backend_entry(backend).make(one));
  }
  std::vector<std::shared_ptr<BackendImpl>> impls;
  for (const SingleDevice& m : members_) impls.push_back(m.first());
  collectives_ = backend_entry(backend).make_collectives(impls);
}

bool Group::split_by_index() const noexcept {
#ifdef TANDEM_LAB_KERNELS
  return true;
#else
  return first()->kind() == Backend::cpu;  // (not yet run on GPUs: lab builds only there)
#endif
}

bool Group::reduction_by_index(Op local, Dtype dtype, bool deterministic, bool in_buffer) const {
  return in_buffer && !deterministic && canonical::in_canonical_order(local, dtype) && split_by_index();
}

bool Group::owns(const Allocation& a) const noexcept {
  return &a.impl() == first().get() && (a.sharded() || a.bytes() == 0);
}

Group::~Group() {
  for (const SingleDevice& m : members_) try {
      m.synchronize();
    } catch (...) {  // (a failure of enqueued work was the caller's to collect)
    }
}

std::vector<DeviceInfo> Group::devices() const {
  std::vector<DeviceInfo> out;
  for (const SingleDevice& m : members_) out.push_back(m.impl().device());
  return out;
}

void Group::synchronize() const {
  for (const SingleDevice& m : members_) m.synchronize();
}

// ---- memory --------------------------------------------------------------------------------------

std::shared_ptr<Allocation> Group::wrap(void*, std::size_t, std::size_t) const {
  throw Error(ErrorKind::failure, Arg::none, Message("wrap: an engine over several devices shards its Buffers itself"),
              Message("wrap the memory with a single-device engine of its GPU (", Arg::device, ")"));
}

std::shared_ptr<Allocation> Group::allocate(std::size_t count, std::size_t e) const {
  const std::size_t chunks = (count + kChunk - 1) / kChunk, n = members_.size();
  std::vector<Allocation::Shard> shards;
  for (std::size_t d = 0; d < n; ++d) {
    const auto [c0, c1] = chunks_of(d, n, chunks);
    const std::size_t first = c0 * kChunk, last = std::min(count, c1 * kChunk);
    if (last > first)
      shards.push_back({std::make_shared<Allocation>(members_[d].first(), (last - first) * e), first * e, int(d)});
  }
  if (shards.empty()) return std::make_shared<Allocation>(first(), 0);
  return std::make_shared<Allocation>(first(), std::move(shards), count * e);
}

Group::Staged Group::stage(const Allocation* src, std::size_t first, std::size_t bytes, int member) const {
  Staged s{src, first, bytes, member, nullptr, nullptr, nullptr};
  const std::shared_ptr<BackendImpl>& impl = members_[std::size_t(member)].first();
  if (bytes > 0) {
    for (const Allocation::Shard& sh : src->shards())
      if (sh.member == member && first >= sh.first && first + bytes <= sh.first + sh.mem->bytes())
        s.data = static_cast<char*>(sh.mem->data()) + (first - sh.first);
    if (s.data == nullptr) {
      s.copy = std::make_shared<Allocation>(impl, bytes);
      s.data = s.copy->data();
      for (const Allocation::Shard& sh : src->shards()) {
        const auto [lo, hi] = bytes_in(sh, first, bytes);
        if (lo < hi)
          collectives_->copy(static_cast<char*>(s.data) + (lo - first), member,
                             static_cast<const char*>(sh.mem->data()) + (lo - sh.first), sh.member, hi - lo);
      }
    }
  }
  s.view = std::make_shared<Allocation>(impl, s.data, bytes);
  return s;
}

void Group::write_back(const Staged& s) const {
  if (!s.copy) return;
  for (const Allocation::Shard& sh : s.source->shards()) {
    const auto [lo, hi] = bytes_in(sh, s.first, s.bytes);
    if (lo < hi)
      collectives_->copy(static_cast<char*>(sh.mem->data()) + (lo - sh.first), sh.member,
                         static_cast<const char*>(s.data) + (lo - s.first), s.member, hi - lo);
  }
}

// A Buffer matrix (or batch) as a Buffer matrix of one member: its whole extent staged there. Host
// matrices pass through.
MatrixInput Group::on_member(const MatrixInput& v, int member, std::vector<Staged>& keep) const {
  if (!v.in_buffer) return v;
  const std::size_t ext = extent_of(v), e = size_of(v.dtype);
  if (ext == 0) return {v.dtype, nullptr, v.rows, v.cols, v.ld, true, nullptr, 0, 0, v.count, v.stride};
  keep.push_back(stage(v.allocation, v.offset * e, ext * e, member));
  const Staged& s = keep.back();
  return {v.dtype, s.data, v.rows, v.cols, v.ld, true, s.view.get(), 0, ext, v.count, v.stride};
}

}  // namespace tandem::detail

namespace tandem::detail {

// ---- reductions ----------------------------------------------------------------------------------

// Host inputs (and Buffers with `keep`): one part per member, whole chunks each (the last part ends with
// the input); with `keep`, a part that no shard holds whole is staged onto its member. Buffer views
// otherwise: the view's elements in each shard, a part each (any view: chunks may then cross parts).
std::vector<Group::Part> Group::split(const ReduceInput& in, std::vector<Staged>* keep) const {
  std::vector<Part> parts;
  if (in.count == 0) return parts;
  const std::size_t e = size_of(in.dtype);
  if (!in.in_buffer || keep != nullptr) {
    const std::size_t chunks = (in.count + kChunk - 1) / kChunk, n = members_.size();
    for (std::size_t d = 0; d < n; ++d) {
      const auto [c0, c1] = chunks_of(d, n, chunks);
      const std::size_t first = c0 * kChunk, last = std::min(in.count, c1 * kChunk);
      if (last <= first) continue;
      if (!in.in_buffer) {
        parts.push_back({int(d),
                         {in.dtype, static_cast<const char*>(in.data) + first * in.stride * e, last - first, in.stride},
                         first});
        continue;
      }
      // The part's bytes: in place in a shard that holds them all, or staged onto member d.
      const std::size_t lo = (in.offset + first * in.stride) * e, bytes = ((last - first - 1) * in.stride + 1) * e;
      const Allocation::Shard* whole = nullptr;
      for (const Allocation::Shard& sh : in.allocation->shards())
        if (lo >= sh.first && lo + bytes <= sh.first + sh.mem->bytes()) whole = &sh;
      if (whole != nullptr) {
        parts.push_back({whole->member,
                         {in.dtype, whole->mem->data(), last - first, in.stride, true, whole->mem.get(),
                          (lo - whole->first) / e, whole->mem->bytes() / e},
                         first});
        continue;
      }
      keep->push_back(stage(in.allocation, lo, bytes, int(d)));
      const Staged& s = keep->back();
      parts.push_back({int(d), {in.dtype, s.data, last - first, in.stride, true, s.view.get(), 0, bytes / e}, first});
    }
    return parts;
  }
  for (const Allocation::Shard& sh : in.allocation->shards()) {
    const std::size_t f = sh.first / e, count = sh.mem->bytes() / e;  // the shard's elements [f, f + count)
    // View element i is buffer element in.offset + i * stride: those in the shard.
    auto first_at_or_after = [&](std::size_t x) -> std::size_t {
      if (x <= in.offset) return 0;
      if (in.stride == 0) return in.count;  // (every element is the one at in.offset)
      return std::min(in.count, (x - in.offset + in.stride - 1) / in.stride);
    };
    const std::size_t i0 = first_at_or_after(f), i1 = first_at_or_after(f + count);
    if (i1 <= i0) continue;
    ReduceInput p{in.dtype, sh.mem->data(), i1 - i0, in.stride, true, sh.mem.get(), in.offset + i0 * in.stride - f,
                  count};
    parts.push_back({sh.member, p, i0});
  }
  return parts;
}

// A deterministic sum of a Buffer whose parts are whole chunks of the global order (a whole sharded
// Buffer, stride 1: its shards end on chunk boundaries) stays on the devices: each computes its chunk
// values into its memory at once, they are gathered on the first device, and the canonical sum of the
// chunk values (canonical.hpp step 4) is the deterministic sum of that array there (with two or more
// chunks, step 4 over the values is exactly the canonical sum of the values taken as an input).
bool Group::whole_chunks(const ReduceInput& in, const std::vector<Part>& pieces) {
  if (!in.in_buffer || in.stride != 1 || pieces.size() < 2) return false;
  for (std::size_t i = 0; i < pieces.size(); ++i)
    if (pieces[i].offset % kChunk != 0 || (i + 1 < pieces.size() && pieces[i].in.count % kChunk != 0)) return false;
  return true;
}

template <class T>
compute_t<T> Group::resident_deterministic_sum(Op local, const std::vector<Part>& pieces, std::uint64_t total) const {
  using V = compute_t<T>;
  const std::size_t chunks = std::size_t(canonical::chunk_count(std::int64_t(total)));
  const auto values = std::make_shared<Allocation>(first(), chunks * sizeof(V));
  std::vector<std::shared_ptr<Allocation>> own(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) {  // enqueue every device's chunk values
    const Part& p = pieces[i];
    const std::size_t count = std::size_t(canonical::chunk_count(std::int64_t(p.in.count)));
    void* to = static_cast<char*>(values->data()) + p.offset / kChunk * sizeof(V);
    if (p.member != 0)
      own[i] = std::make_shared<Allocation>(members_[std::size_t(p.member)].first(), count * sizeof(V));
    members_[std::size_t(p.member)].impl().canonical_chunk_values_resident(
        local, p.in.dtype, parts::element(p.in, 0), std::int64_t(p.in.count), 1, own[i] ? own[i]->data() : to);
  }
  // Gathered on the first device in one step beside the members' streams (nothing waits on the host: the
  // first device's stream waits for the step, then sums them).
  std::vector<Collectives::Transfer> gather;
  for (std::size_t i = 0; i < pieces.size(); ++i)
    if (own[i])
      gather.push_back({pieces[i].member, own[i]->data(), 0,
                        static_cast<char*>(values->data()) + pieces[i].offset / kChunk * sizeof(V), own[i]->bytes()});
  if (!gather.empty()) {
    std::lock_guard lock(collective_mutex_);
    JoinOnUnwind guard{*collectives_};
    collectives_->wait_side(collectives_->send_side(gather), 0);
    guard.armed = false;
    collectives_->join_side();
  }
  // The chunk values are combined as they are, in deterministic mode, kernel auto: summed whatever sum-like op
  // made them (sumsq's are sums of squares), multiplied for prod.
  const ReduceInput all{dtype_of<V>, values->data(), chunks, 1, true, values.get(), 0, chunks};
  alignas(16) unsigned char sum[kBackendResultBytes] = {};
  members_.front().reduce(ReduceCall{canonical::chunk_values_op(local), all, KernelId{}, true}, sum);
  V s;
  std::memcpy(&s, sum, sizeof s);
  return s;
}

void Group::reduce(const ReduceCall& call, void* result) const {
  const Op op = call.op, local = info(op).computed_as;
  const ReduceInput& in = call.in;
  // Float sums and products outside deterministic mode combine the parts' results in an order whose bits
  // depend on where the parts end: Buffer views are then split by index (as host inputs are), not by shard,
  // so that the bits never depend on where the data lies (run_to_run); a part no shard holds is staged.
  std::unique_lock lock(collective_mutex_, std::defer_lock);
  std::vector<Staged> keep;
  const bool by_index = reduction_by_index(local, in.dtype, call.deterministic, in.in_buffer);
  if (by_index) lock.lock();
  const std::vector<Part> pieces = split(in, by_index ? &keep : nullptr);
  // A part's reduction on its member: the checked call's kernel and mode on the part (op: local, or an
  // op parts.hpp asks for).
  auto part_call = [&](Op o, const Part& p) { return ReduceCall{o, p.in, call.kernel, call.deterministic}; };
  visit(in.dtype, [&]<class T>(std::type_identity<T>) {
    const bool canonical = parts::by_chunks(op, in.dtype, call.deterministic) && in.count > 0;
    if constexpr (is_floating_v<T>)
      if (canonical) {  // the canonical sum, a compute_t<T> (the backend result of a float sum)
        compute_t<T> sum;
        if (whole_chunks(in, pieces)) {
          sum = resident_deterministic_sum<T>(local, pieces, in.count);
        } else {
          std::vector<parts::Chunks<T>> chunks(pieces.size());
          run_all(pieces.size(), [&](std::size_t i) {
            const Part& p = pieces[i];
            chunks[i] = parts::local_chunks<T>(local, members_[std::size_t(p.member)].impl(), p.in, p.offset);
          });
          sum = parts::combine_chunks<T>(chunks, in.count);
        }
        std::memcpy(result, &sum, sizeof sum);
        return;
      }
    std::vector<parts::Record> records(pieces.size());
    // Buffers: every device at once without host threads (enqueue each part into a slot, then collect),
    // but for integer sums, whose exact sums a Buffer's int64 would not hold.
    const bool exact_sum = std::is_same_v<backend_result_t<Op::sum, T>, ExactSum> && local == Op::sum;
    if (in.in_buffer && !exact_sum) {
      const Dtype out = result_dtype(local, in.dtype);  // (as a Buffer holds it: indices int64)
      std::vector<std::shared_ptr<Allocation>> slots;
      for (const Part& p : pieces) {
        slots.push_back(std::make_shared<Allocation>(members_[std::size_t(p.member)].first(), 8));
        members_[std::size_t(p.member)].reduce_into(part_call(local, p), {out, slots.back().get(), 1, 0});
      }
      for (std::size_t i = 0; i < pieces.size(); ++i)
        records[i] = parts::record<T>(local, pieces[i].in, pieces[i].offset,
                                      [&](Op, void* r) { slots[i]->download(0, r, size_of(out)); });
    } else {
      run_all(pieces.size(), [&](std::size_t i) {
        const Part& p = pieces[i];
        records[i] = parts::record<T>(
            local, p.in, p.offset, [&](Op o, void* r) { members_[std::size_t(p.member)].reduce(part_call(o, p), r); });
      });
    }
    parts::combine<T>(op, records, result);
  });
}

// The result is computed (waiting), then written into out's element.
void Group::reduce_into(const ReduceCall& call, const OutSlot& out) const {
  alignas(16) unsigned char backend[kBackendResultBytes] = {};
  unsigned char value[8] = {};
  reduce(call, backend);
  api_result(call.op, call.in.dtype, backend, call.in.count, value);
  const std::size_t e = size_of(out.dtype);
  const_cast<Allocation*>(out.allocation)->upload(out.index * e, value, e);
}

}  // namespace tandem::detail
