// The address as an axis of the conformance matrix: the same values placed at every element-aligned byte
// offset from 0 to 63 of a 64-byte boundary (host memory and Buffers), reduced by every op and kernel, as a
// vector and per row / per column. Each result is judged against the reference, and its bits against the
// kernel's declared level: a kernel whose default mode promises run_to_run (or every_backend), and every
// kernel in deterministic mode, must give the same bits at every offset (the order of its adds may depend
// on the indices, never on where the data lies).
#include <cstdint>
#include <map>
#include <memory>

#include "verify/cases.hpp"
#include "verify/rng.hpp"

namespace tandem_verify::conformance {
namespace {

using tandem::Op;

constexpr std::size_t kSpan = 64;  // offsets 0 .. 63 bytes from a 64-byte boundary

// n elements placed at byte offset `offset` (a multiple of sizeof(T)) from a 64-byte boundary, in host
// memory and in a Buffer (the Buffer's memory starts on a 64-byte boundary on every backend).
template <class T>
struct AtOffset {
  std::unique_ptr<unsigned char[]> bytes;
  const T* host = nullptr;
  tandem::Buffer<T> buffer;
  std::size_t first = 0;  // the first element's index in the Buffer
};

template <class T>
AtOffset<T> at_offset(const tandem::Engine& eng, const Vector<T>& x, std::size_t offset) {
  AtOffset<T> a;
  const std::size_t bytes = offset + x.size() * sizeof(T) + 2 * kSpan;
  a.bytes.reset(new unsigned char[bytes]);
  const auto base = (reinterpret_cast<std::uintptr_t>(a.bytes.get()) + kSpan - 1) / kSpan * kSpan;
  T* p = reinterpret_cast<T*>(base + offset);
  std::copy(x.begin(), x.end(), p);
  a.host = p;
  a.first = offset / sizeof(T);
  Vector<T> arena(a.first + x.size(), poison<T>(false));
  std::copy(x.begin(), x.end(), arena.begin() + std::ptrdiff_t(a.first));
  a.buffer = eng.upload<T>(arena);
  return a;
}

// Whether a mode promises the same bits wherever the data lies.
bool same_bits_everywhere(const tandem::KernelInfo& k, bool det) {
  return det || k.determinism != tandem::Determinism::not_guaranteed;
}

template <class T>
Vector<T> data(std::size_t n, std::uint64_t seed) {
  SplitMix64 g{seed};
  return random_vector<T>(n, g, std::is_integral_v<T> ? Values::full_range : Values::uniform);
}

template <class T>
void vectors_at_offsets(const tandem::Engine& eng, Report& report) {
  const std::string backend = backend_name(eng), type = type_name<T>();
  const auto infos = eng.reduce_kernel_info();
  for (std::size_t n : report.options.quick ? std::vector<std::size_t>{4099} : std::vector<std::size_t>{4099, 100003}) {
    const Vector<T> x = data<T>(n, 77 + n);
    Vector<tandem::compute_t<T>> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = tandem::compute_t<T>(x[i]);
    const auto ref = reduce_reference<tandem::compute_t<T>>(values.data(), n, 1);
    std::vector<AtOffset<T>> placed;
    for (std::size_t offset = 0; offset < kSpan; offset += sizeof(T)) placed.push_back(at_offset(eng, x, offset));
    for_each_op([&]<Op O>() {
      for (const tandem::KernelInfo& k : infos)
        for (bool det : {false, true}) {
          if (!k.accepts(tandem::dtype_of<T>) || !k.accepts(O) || (det && !k.deterministic)) continue;
          const tandem::ReduceOptions o{k.name, det};
          for (bool in_buffer : {false, true}) {
            std::string first_bits;
            for (std::size_t i = 0; i < placed.size(); ++i) {
              const std::size_t offset = i * sizeof(T);
              const std::string what = backend + ": " + type + " n=" + std::to_string(n) + " at byte offset " +
                                       std::to_string(offset) + (in_buffer ? " (BufferView) " : " (span) ") +
                                       tandem::to_string(O) + " kernel " + k.name + (det ? " deterministic" : "");
              one_case(
                  report, eng, what, false, k,
                  [&] {
                    const AtOffset<T>& a = placed[i];
                    return in_buffer ? eng.reduce<O>(a.buffer.view(a.first, n), o)
                                     : eng.reduce<O>(std::span<const T>(a.host, n), o);
                  },
                  [&](const tandem::op_result_t<O, T>& got) -> std::string {
                    const Judgement j =
                        det ? judge_op_canonical<O, T>(got, ref, values) : judge_op<O, T>(got, ref, false);
                    if (!j.ok) return "got " + show(got) + ", expected " + j.expected;
                    const std::string bits = bytes_of(&got, 1);
                    if (i == 0) first_bits = bits;
                    if (same_bits_everywhere(k, det) && bits != first_bits)
                      return "got " + show(got) + ", other bits than at offset 0 (the kernel promises " +
                             (det ? std::string("every_backend") : tandem::to_string(k.determinism)) + ")";
                    return std::string();
                  });
            }
          }
        }
    });
  }
}

template <class T>
void matrices_at_offsets(const tandem::Engine& eng, Report& report) {
  const std::string backend = backend_name(eng), type = type_name<T>();
  const auto infos = eng.reduce_kernel_info();
  struct Shape {
    std::size_t rows, cols;
  };
  for (Shape s : {Shape{1000, 64}, Shape{37, 1029}}) {
    const Vector<T> x = data<T>(s.rows * s.cols, 91 + s.cols);
    std::vector<AtOffset<T>> placed;
    for (std::size_t offset = 0; offset < kSpan; offset += sizeof(T)) placed.push_back(at_offset(eng, x, offset));
    for (tandem::Per per : {tandem::Per::row, tandem::Per::col}) {
      const std::size_t count = per == tandem::Per::row ? s.rows : s.cols;
      for_each_op([&]<Op O>() {
        for (const tandem::KernelInfo& k : infos)
          for (bool det : {false, true}) {
            if (!k.per_row_col || !k.accepts(tandem::dtype_of<T>) || !k.accepts(O) || (det && !k.deterministic))
              continue;
            const tandem::ReduceOptions o{k.name, det};
            std::string first_bits;
            for (std::size_t i = 0; i < placed.size(); ++i) {
              const std::string what = backend + ": " + type + " " + std::to_string(s.rows) + "x" +
                                       std::to_string(s.cols) + " per " + tandem::to_string(per) + " at byte offset " +
                                       std::to_string(i * sizeof(T)) + " " + tandem::to_string(O) + " kernel " +
                                       k.name + (det ? " deterministic" : "");
              one_case(
                  report, eng, what, false, k,
                  [&] {
                    Vector<tandem::op_result_t<O, T>> out(count);
                    eng.reduce<O>(tandem::MatrixView<const T>{placed[i].host, s.rows, s.cols, s.cols}, per,
                                  std::span<tandem::op_result_t<O, T>>(out), o);
                    return out;
                  },
                  [&](const Vector<tandem::op_result_t<O, T>>& got) -> std::string {
                    const std::string bits = bytes_of(got.data(), got.size());
                    if (i == 0) first_bits = bits;
                    if (same_bits_everywhere(k, det) && bits != first_bits)
                      return "other bits than at offset 0 (the kernel promises " +
                             (det ? std::string("every_backend") : tandem::to_string(k.determinism)) + ")";
                    return std::string();
                  });
            }
          }
      });
    }
  }
}

// One product, A, B and C all placed at each element-aligned byte offset (host and Buffer): the bits of
// offset 0 at every offset wherever the kernel's level promises them. (Each result's value is judged by
// matmul_cases.cpp, whose layouts start one element past an aligned address.)
template <class T>
void products_at_offsets(const tandem::Engine& eng, Report& report) {
  using C = tandem::compute_t<T>;
  const std::string backend = backend_name(eng), type = type_name<T>();
  const std::size_t m = 67, k = 259, n = 45;  // tails of every tile; K past a few k-steps
  const Vector<T> a = data<T>(m * k, 301), b = data<T>(k * n, 302);
  const Vector<C> c0(m * n, C(0));
  std::vector<AtOffset<T>> pa, pb;
  std::vector<AtOffset<C>> pc;
  for (std::size_t offset = 0; offset < kSpan; offset += sizeof(T)) {
    pa.push_back(at_offset(eng, a, offset)), pb.push_back(at_offset(eng, b, offset));
    pc.push_back(at_offset(eng, c0, offset / sizeof(T) * sizeof(C) % kSpan));
  }
  for (const tandem::KernelInfo& info : eng.matmul_kernel_info())
    for (bool det : {false, true})
      for (bool in_buffer : {false, true}) {
        if (!info.accepts(tandem::dtype_of<T>) || (det && !info.deterministic)) continue;
        const tandem::MatmulOptions o{info.name, det};
        std::string first_bits;
        for (std::size_t i = 0; i < pa.size(); ++i) {
          const std::string what = backend + ": matmul " + type + " " + std::to_string(m) + "x" + std::to_string(k) +
                                   "x" + std::to_string(n) + " at byte offset " + std::to_string(i * sizeof(T)) +
                                   (in_buffer ? " (Buffer)" : " (host)") + " kernel " + info.name +
                                   (det ? " deterministic" : "");
          one_case(
              report, eng, what, false, info,
              [&] {
                if (in_buffer) {
                  eng.matmul(pa[i].buffer.matrix(m, k, k, pa[i].first), pb[i].buffer.matrix(k, n, n, pb[i].first),
                             pc[i].buffer.matrix(m, n, n, pc[i].first), o);
                  Vector<C> all = pc[i].buffer.to_vector();
                  return Vector<C>(all.begin() + std::ptrdiff_t(pc[i].first), all.end());
                }
                Vector<C> c(m * n);
                eng.matmul<T>({pa[i].host, m, k, k}, {pb[i].host, k, n, n}, {c.data(), m, n, n}, o);
                return c;
              },
              [&](const Vector<C>& got) -> std::string {
                const std::string bits = bytes_of(got.data(), got.size());
                if (i == 0) first_bits = bits;
                if (same_bits_everywhere(info, det) && bits != first_bits)
                  return "other bits than at offset 0 (the kernel promises " +
                         (det ? std::string("every_backend") : tandem::to_string(info.determinism)) + ")";
                return std::string();
              });
        }
      }
}

}  // namespace

void run_matmul_addresses(const tandem::Engine& eng, Report& report) {
  for_each_type<tandem::matmul_element_types>([&]<class T>() { products_at_offsets<T>(eng, report); });
}

void run_addresses(const tandem::Engine& eng, Report& report) {
  for_each_type([&]<class T>() {
    vectors_at_offsets<T>(eng, report);
    matrices_at_offsets<T>(eng, report);
  });
}

}  // namespace tandem_verify::conformance
