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

namespace tandem::detail {

namespace {

constexpr std::size_t kChunk = std::size_t(canonical::kChunk);

// "all" or a comma-separated list of device indices (TANDEM_DEVICES).
std::vector<int> parse_device_list(const std::string& value, const BackendEntry& backend) {
  if (value == "all") {
    const int count = backend.device_count();
    if (count == 0) throw Error("TANDEM_DEVICES=all: this machine has no usable " + std::string(backend.device));
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
      throw value_error("TANDEM_DEVICES='" + value +
                        "' is not a device list; set it to all, or to GPU indices separated by commas such as 0,1,3 "
                        "(or leave it unset for one GPU)");
    list.push_back(std::stoi(item));
    if (comma == std::string::npos) return list;
    start = comma + 1;
  }
}

// Throws unless `a` is a Buffer of this engine (a sharded one; empty Buffers have no memory to check).
void check_owned(const Allocation* a, const BackendImpl& first, const std::string& what) {
  if (a == nullptr) throw value_error(what + " has no buffer; make it with this engine's buffer() or upload()");
  if (&a->impl() != &first || (!a->sharded() && a->bytes() > 0))
    throw value_error(what + "'s buffer belongs to another engine; use buffers of the engine that runs the operation");
}

// Elements from the first to the last of a matrix or batch (as engine.cpp counts them), or throws.
std::size_t extent_of(const MatrixInput& v, const std::string& what) {
  const std::size_t e = size_of(v.dtype);
  return batch_extent(matrix_extent(v.rows, v.cols, v.ld, e, what), v.count, v.stride, e, what);
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
};

}  // namespace

std::unique_ptr<Collectives> make_host_collectives(const std::vector<std::shared_ptr<BackendImpl>>&) {
  return std::make_unique<HostCollectives>();
}

std::vector<int> resolve_devices(Backend backend, const EngineOptions& options) {
  std::vector<int> list = options.devices;
  std::string what = "EngineOptions::devices";
  if (list.empty()) {
    const char* env = std::getenv("TANDEM_DEVICES");
    const BackendEntry& entry = backend_entry(backend);
    if (env == nullptr || *env == 0 || options.device >= 0 || options.stream != nullptr || !entry.device_count)
      return {};  // (a caller's device or stream means one GPU; a backend without a device count has one)
    const char* one = std::getenv("TANDEM_DEVICE");
    if (one != nullptr && *one != 0)
      throw value_error(
          "TANDEM_DEVICE and TANDEM_DEVICES are both set; set TANDEM_DEVICES for an engine over several GPUs "
          "or TANDEM_DEVICE for one, not both");
    list = parse_device_list(env, entry);
    what = "TANDEM_DEVICES";
  } else if (options.device >= 0) {
    throw value_error("EngineOptions: device (" + std::to_string(options.device) +
                      ") and devices are both set; set devices alone for several GPUs, or device alone for one");
  }
  std::set<int> seen;
  for (int d : list) {
    if (d < 0) throw value_error(what + " lists " + std::to_string(d) + "; device indices are 0, 1, ...");
    if (!seen.insert(d).second)
      throw value_error(what + " lists device " + std::to_string(d) + " twice; list each device once");
  }
  if (list.size() > 1 && options.stream != nullptr)
    throw value_error(
        "EngineOptions::stream is one GPU's stream, but " + what +
        " lists several devices; an engine over several GPUs makes a stream per device: leave stream null");
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
  throw Error(
      "wrap: an engine over several devices shards its Buffers itself; wrap the memory with a single-device "
      "engine of its GPU (EngineOptions::device)");
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

// Bytes [first, first + bytes) of a sharded allocation in one member's memory: in place when that
// member's shard holds them all, else copied from the shards into a new allocation of the member.
struct Group::Staged {
  const Allocation* source;
  std::size_t first, bytes;
  int member;
  std::shared_ptr<Allocation> copy;  // null: in place
  void* data;
  std::shared_ptr<Allocation> view;  // a non-owning Allocation of the member over data
};

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
MatrixInput Group::on_member(const MatrixInput& v, int member, std::vector<Staged>& keep,
                             const std::string& what) const {
  if (!v.in_buffer) return v;
  const std::size_t ext = extent_of(v, what), e = size_of(v.dtype);
  if (ext == 0) return {v.dtype, nullptr, v.rows, v.cols, v.ld, true, nullptr, 0, 0, v.count, v.stride};
  check_owned(v.allocation, *first(), what);
  if (v.offset > v.buffer_size || ext > v.buffer_size - v.offset)
    throw value_error(what + " (offset " + std::to_string(v.offset) + ", " + std::to_string(v.rows) + "x" +
                      std::to_string(v.cols) + ", ld " + std::to_string(v.ld) + ") reaches past its buffer of " +
                      std::to_string(v.buffer_size) + " elements");
  keep.push_back(stage(v.allocation, v.offset * e, ext * e, member));
  const Staged& s = keep.back();
  return {v.dtype, s.data, v.rows, v.cols, v.ld, true, s.view.get(), 0, ext, v.count, v.stride};
}

}  // namespace tandem::detail

namespace tandem::detail {

// ---- reductions ----------------------------------------------------------------------------------

// Host inputs: one part per member, whole chunks each (the last part ends with the input). Buffer
// views: the view's elements in each shard, a part each (any view: chunks may then cross parts).
std::vector<Group::Part> Group::split(const ReduceInput& in) const {
  std::vector<Part> parts;
  if (in.count == 0) return parts;
  const std::size_t e = size_of(in.dtype);
  if (!in.in_buffer) {
    const std::size_t chunks = (in.count + kChunk - 1) / kChunk, n = members_.size();
    for (std::size_t d = 0; d < n; ++d) {
      const auto [c0, c1] = chunks_of(d, n, chunks);
      const std::size_t first = c0 * kChunk, last = std::min(in.count, c1 * kChunk);
      if (last > first)
        parts.push_back({int(d),
                         {in.dtype, static_cast<const char*>(in.data) + first * in.stride * e, last - first, in.stride},
                         first});
    }
    return parts;
  }
  for (const Allocation::Shard& sh : in.allocation->shards()) {
    const std::size_t f = sh.first / e, count = sh.mem->bytes() / e;  // the shard's elements [f, f + count)
    // View element i is buffer element in.offset + i * stride: those in the shard.
    auto first_at_or_after = [&](std::size_t x) -> std::size_t {
      if (x <= in.offset) return 0;
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
compute_t<T> Group::resident_deterministic_sum(Op local, const std::vector<Part>& pieces, std::uint64_t total,
                                               const ReduceOptions& opts) const {
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
  for (std::size_t i = 0; i < pieces.size(); ++i)  // gather them on the first device (each copy waits)
    if (own[i])
      collectives_->copy(static_cast<char*>(values->data()) + pieces[i].offset / kChunk * sizeof(V), 0, own[i]->data(),
                         pieces[i].member, own[i]->bytes());
  ReduceOptions det = opts;
  det.kernel = "auto";
  V s{};  // (the chunk values are summed as they are, whatever op made them)
  members_.front().reduce(Op::sum, {dtype_of<V>, values->data(), chunks, 1, true, values.get(), 0, chunks}, det, &s);
  return s;
}

void Group::reduce(Op op, const ReduceInput& in, const ReduceOptions& opts, void* result) const {
  members_.front().check_reduce(op, in, opts);  // the whole input (a sharded Buffer's bounds), kernel, options
  require_nonempty(op, in.count, to_string(op));
  const Op local = info(op).computed_as;
  const std::vector<Part> pieces = split(in);
  visit(in.dtype, [&]<class T>(std::type_identity<T>) {
    const bool canonical = parts::by_chunks(op, in.dtype, opts.deterministic) && in.count > 0;
    if (canonical && whole_chunks(in, pieces))
      return parts::finish<T>(op, resident_deterministic_sum<T>(local, pieces, in.count, opts), in.count, result);
    if (canonical) {
      std::vector<parts::Chunks<T>> chunks(pieces.size());
      run_all(pieces.size(), [&](std::size_t i) {
        const Part& p = pieces[i];
        chunks[i] = parts::local_chunks<T>(local, members_[std::size_t(p.member)].impl(), p.in, p.offset);
      });
      return parts::finish<T>(op, parts::combine_chunks<T>(chunks, in.count), in.count, result);
    }
    std::vector<parts::Record> records(pieces.size());
    if (in.in_buffer) {  // every device at once without host threads: enqueue each part, then collect
      const Dtype out = result_dtype(local, in.dtype);  // (as a Buffer holds it: indices int64)
      std::vector<std::shared_ptr<Allocation>> slots;
      for (const Part& p : pieces) {
        slots.push_back(std::make_shared<Allocation>(members_[std::size_t(p.member)].first(), 8));
        members_[std::size_t(p.member)].reduce_into(local, p.in, {out, slots.back().get(), 1, 0}, opts);
      }
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        const Part& p = pieces[i];
        records[i] = parts::record<T>(local, p.in, p.offset, [&](Op o, void* r) {
          if (!is_arg(o)) return slots[i]->download(0, r, size_of(out));
          std::int64_t index = 0;
          slots[i]->download(0, &index, sizeof index);
          const std::size_t at = std::size_t(index);
          std::memcpy(r, &at, sizeof at);
        });
      }
      return parts::combine<T>(op, records, in.count, result);
    }
    run_all(pieces.size(), [&](std::size_t i) {
      const Part& p = pieces[i];
      records[i] = parts::record<T>(local, p.in, p.offset,
                                    [&](Op o, void* r) { members_[std::size_t(p.member)].reduce(o, p.in, opts, r); });
    });
    parts::combine<T>(op, records, in.count, result);
  });
}

// The result is computed (waiting), then written into out's element.
void Group::reduce_into(Op op, const ReduceInput& in, const OutSlot& out, const ReduceOptions& opts) const {
  const std::string name = std::string(to_string(op)) + "_into";
  if (out.allocation == nullptr)
    throw value_error(name + ": the output Buffer is empty; make it with Engine::buffer<R>(n) (n > index)");
  check_owned(out.allocation, *first(), name + ": the output Buffer");
  if (out.index >= out.size)
    throw value_error(name + ": index " + std::to_string(out.index) + " is outside the output Buffer of " +
                      std::to_string(out.size) + " elements");
  unsigned char value[8] = {};
  reduce(op, in, opts, value);
  const std::size_t e = size_of(out.dtype);
  const_cast<Allocation*>(out.allocation)->upload(out.index * e, value, e);
}

// On the first member, Buffers staged there.
void Group::reduce_per(Op op, Per per, const MatrixInput& in, const ReduceOutput& out,
                       const ReduceOptions& opts) const {
  if (!in.in_buffer) return members_.front().reduce_per(op, per, in, out, opts);
  const std::string name = std::string(to_string(op)) + " (per " + to_string(per) + ")";
  std::lock_guard lock(collective_mutex_);
  std::vector<Staged> keep;
  const MatrixInput m = on_member(in, 0, keep, name + ": the matrix");
  ReduceOutput o = out;
  const std::size_t count = std::min(out.size, per == Per::row ? in.rows : in.cols);
  std::optional<Staged> staged_out;
  if (out.allocation != nullptr && count > 0) {
    check_owned(out.allocation, *first(), name + ": the output Buffer");
    if (out.allocation == in.allocation &&
        overlap(0, count * out.element_size, in.offset * size_of(in.dtype), extent_of(in, name) * size_of(in.dtype)))
      throw value_error(name + ": the output overlaps the matrix; the results must go to separate memory");
    staged_out = stage(out.allocation, 0, count * out.element_size, 0);
    o.allocation = staged_out->view.get();
    o.size = count;
  }
  members_.front().reduce_per(op, per, m, o, opts);
  if (staged_out) write_back(*staged_out);
}

// ---- matmul --------------------------------------------------------------------------------------

void Group::matmul(const MatrixInput& a, const MatrixInput& b, const MatrixInput& c, const MatmulOptions& opts) const {
  const std::size_t m = opts.trans_a ? a.cols : a.rows, k = opts.trans_a ? a.rows : a.cols;
  const std::size_t kb = opts.trans_b ? b.cols : b.rows, n = opts.trans_b ? b.rows : b.cols;
  if (k != kb || c.rows != m || c.cols != n)
    throw value_error("matmul: shapes do not match: op(A) is " + std::to_string(m) + "x" + std::to_string(k) +
                      ", op(B) is " + std::to_string(kb) + "x" + std::to_string(n) + ", C is " +
                      std::to_string(c.rows) + "x" + std::to_string(c.cols) +
                      "; need op(A).cols == op(B).rows, C = op(A).rows x op(B).cols");
  // Whole-operand checks before anything is split: Buffers of this engine within their bounds, and C
  // apart from A and B (each member sees only its own block).
  const MatrixInput* operands[] = {&a, &b, &c};
  const char* names[] = {"matmul: A", "matmul: B", "matmul: C"};
  std::size_t begin[3] = {}, bytes[3] = {};
  for (int i = 0; i < 3; ++i) {
    const MatrixInput& v = *operands[i];
    const std::size_t e = size_of(v.dtype), ext = extent_of(v, names[i]);
    bytes[i] = ext * e;
    if (!v.in_buffer) {
      begin[i] = reinterpret_cast<std::uintptr_t>(v.data);
      if (ext > 0 && v.data == nullptr) throw value_error(std::string(names[i]) + ".data is null but it has elements");
      continue;
    }
    begin[i] = v.offset * e;
    if (ext == 0) continue;
    check_owned(v.allocation, *first(), names[i]);
    if (v.offset > v.buffer_size || ext > v.buffer_size - v.offset)
      throw value_error(std::string(names[i]) + " reaches past its buffer of " + std::to_string(v.buffer_size) +
                        " elements");
  }
  for (int i = 0; i < 2; ++i)
    if ((c.in_buffer ? operands[i]->allocation == c.allocation : true) &&
        overlap(begin[2], bytes[2], begin[i], bytes[i]))
      throw value_error("matmul: C overlaps A or B; the output must be separate memory");
  const bool batch = a.count > 1 || b.count > 1 || c.count > 1;
  if (!batch && m > 0 && n > 0) return matmul_rows(a, b, c, opts);
  // Batches (and empty products): on the first member.
  if (!c.in_buffer) return members_.front().matmul(a, b, c, opts);
  std::lock_guard lock(collective_mutex_);
  std::vector<Staged> keep;
  const MatrixInput a0 = on_member(a, 0, keep, "matmul: A"), b0 = on_member(b, 0, keep, "matmul: B");
  const MatrixInput c0 = on_member(c, 0, keep, "matmul: C");
  members_.front().matmul(a0, b0, c0, opts);
  if (c0.allocation != nullptr) write_back(keep.back());
}

// Row blocks of C and op(A) per member; B whole on every member.
void Group::matmul_rows(const MatrixInput& a, const MatrixInput& b, const MatrixInput& c,
                        const MatmulOptions& o) const {
  const std::size_t m = c.rows, k = o.trans_a ? a.rows : a.cols, D = members_.size();
  const std::size_t e = size_of(a.dtype), ce = size_of(c.dtype);
  // Member d computes rows [rows[d], rows[d + 1]): even blocks for host matrices; for Buffers the rows
  // that start in the member's shard of C, so that its block of C is in place.
  std::vector<std::size_t> rows(D + 1, m);
  rows[0] = 0;
  for (std::size_t d = 1; d < D; ++d) {
    if (!c.in_buffer) {
      rows[d] = m * d / D;
      continue;
    }
    for (const Allocation::Shard& sh : c.allocation->shards())
      if (std::size_t(sh.member) == d) {
        const std::size_t start = sh.first / ce;
        rows[d] = start <= c.offset ? 0 : std::min(m, (start - c.offset + c.ld - 1) / c.ld);
      }
    rows[d] = std::max(rows[d], rows[d - 1]);
  }
  // op(A)'s rows r0 .. r1 - 1 and C's, as a sub-matrix at element `first` of the operand.
  auto a_rows = [&](std::size_t r0, std::size_t r1, std::size_t& first) {
    MatrixInput x = a;
    if (o.trans_a)
      first = r0, x.cols = r1 - r0;
    else
      first = r0 * a.ld, x.rows = r1 - r0;
    return x;
  };
  if (!c.in_buffer) {  // host: every member its rows, at once (host B goes up each member's own link)
    run_all(D, [&](std::size_t d) {
      if (rows[d] == rows[d + 1]) return;
      std::size_t first = 0;
      MatrixInput ad = a_rows(rows[d], rows[d + 1], first), cd = c;
      if (ad.data && k > 0) ad.data = static_cast<const char*>(a.data) + first * e;
      if (cd.data) cd.data = static_cast<const char*>(c.data) + rows[d] * c.ld * ce;
      cd.rows = rows[d + 1] - rows[d];
      members_[d].matmul(ad, b, cd, o);
    });
    return;
  }
  std::lock_guard lock(collective_mutex_);
  // B on every member: one group of NCCL broadcasts, each from the member holding that piece of B.
  const std::size_t b_bytes = extent_of(b, "matmul: B") * e;
  std::vector<std::shared_ptr<Allocation>> b_copies(D), b_views(D);
  std::vector<void*> dst(D);
  std::vector<Collectives::Piece> pieces;
  if (b_bytes > 0) {
    const std::size_t b0 = b.offset * e;  // (B's engine and bounds: checked in Group::matmul)
    for (const Allocation::Shard& sh : b.allocation->shards()) {
      const auto [lo, hi] = bytes_in(sh, b0, b_bytes);
      if (lo < hi)
        pieces.push_back({sh.member, static_cast<const char*>(sh.mem->data()) + (lo - sh.first), lo - b0, hi - lo});
    }
    for (std::size_t d = 0; d < D; ++d) b_copies[d] = std::make_shared<Allocation>(members_[d].first(), b_bytes);
    for (std::size_t d = 0; d < D; ++d) dst[d] = b_copies[d]->data();
  }
  std::vector<Staged> keep;
  std::vector<std::size_t> c_staged(D, SIZE_MAX);
  std::vector<MatrixInput> ad(D), cd(D);
  for (std::size_t d = 0; d < D; ++d) {  // A's and C's rows (staging copies before the broadcast)
    if (rows[d] == rows[d + 1]) continue;
    std::size_t first_a = 0;
    MatrixInput x = a_rows(rows[d], rows[d + 1], first_a), y = c;
    y.rows = rows[d + 1] - rows[d];
    x.offset = a.offset + first_a, y.offset = c.offset + rows[d] * c.ld;
    ad[d] = on_member(x, int(d), keep, "matmul: A");
    cd[d] = on_member(y, int(d), keep, "matmul: C");
    if (keep.back().copy) c_staged[d] = keep.size() - 1;
  }
  collectives_->broadcast(pieces, dst);
  for (std::size_t d = 0; d < D; ++d) {
    if (rows[d] == rows[d + 1]) continue;
    MatrixInput bd{b.dtype, dst[d], b.rows, b.cols, b.ld, true, nullptr, 0, b_bytes / e};
    if (b_bytes > 0) {
      b_views[d] = std::make_shared<Allocation>(members_[d].first(), dst[d], b_bytes);
      bd.allocation = b_views[d].get();
    }
    members_[d].matmul(ad[d], bd, cd[d], o);  // enqueued on the member's stream
  }
  for (std::size_t d = 0; d < D; ++d)
    if (c_staged[d] != SIZE_MAX) write_back(keep[c_staged[d]]);
}

}  // namespace tandem::detail
