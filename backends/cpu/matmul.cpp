// The CPU backend's matrix products: C = alpha * op(A) * op(B) + beta * C for each entry of a batch.
//   eigen_tbb     Eigen's GEMM on 256 x 256 blocks of C, one TBB task per block (Eigen's own threading
//                 is off: tandem builds without OpenMP, so TBB owns the cores); batch entries in parallel
//   eigen_serial  one Eigen GEMM per entry on the calling thread
// Transposes are Eigen expressions over the stored matrices (no copies); alpha and beta go into the
// GEMM. Deterministic 16-bit and tf32 products run in the tensor-core arithmetic (matmul_tc.cpp); other
// deterministic products (common/canonical.hpp) the canonical fma chain (matmul_canonical.cpp).
#include "backends/cpu/matmul.hpp"

#include <tbb/blocked_range.h>
#include <tbb/blocked_range2d.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "backends/cpu/leaves.hpp"
#include "common/canonical.hpp"
#include "common/dispatch.hpp"
#include "common/operands.hpp"
#include "common/table_check.hpp"
#include "common/tensor_core.hpp"

namespace tandem::detail {
namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using ConstMap = Eigen::Map<const RowMajor<T>, 0, Eigen::OuterStride<>>;
template <class T>
using MutMap = Eigen::Map<RowMajor<T>, 0, Eigen::OuterStride<>>;

// Rows [r0, r1) x columns [c0, c1) of one entry's C = alpha * op(A) * op(B) + beta * C with Eigen.
template <class T, bool kTransA, bool kTransB>
void eigen_block(const MatmulArgs& g, const T* a, const T* b, T* c, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                 std::int64_t c1) {
  MutMap<T> cm(c + r0 * g.ldc + c0, r1 - r0, c1 - c0, Eigen::OuterStride<>(g.ldc));
  const T alpha = T(g.alpha), beta = T(g.beta);
  // op(A)'s rows [r0, r1): rows of A, or columns of the stored k x m A; op(B)'s columns likewise.
  const auto opa = [&] {
    if constexpr (kTransA)
      return ConstMap<T>(a + r0, g.k, r1 - r0, Eigen::OuterStride<>(g.lda)).transpose();
    else
      return ConstMap<T>(a + r0 * g.lda, r1 - r0, g.k, Eigen::OuterStride<>(g.lda));
  }();
  const auto opb = [&] {
    if constexpr (kTransB)
      return ConstMap<T>(b + c0 * g.ldb, c1 - c0, g.k, Eigen::OuterStride<>(g.ldb)).transpose();
    else
      return ConstMap<T>(b + c0, g.k, c1 - c0, Eigen::OuterStride<>(g.ldb));
  }();
  if (beta == T(0)) {
    if (alpha == T(1))
      cm.noalias() = opa * opb;
    else
      cm.noalias() = alpha * opa * opb;
  } else {
    cm *= beta;
    cm.noalias() += alpha * opa * opb;
  }
}

// eigen_block with g's transposes.
template <class T>
void eigen_block_of(const MatmulArgs& g, const T* a, const T* b, T* c, std::int64_t r0, std::int64_t r1,
                    std::int64_t c0, std::int64_t c1) {
  if (g.trans_a)
    g.trans_b ? eigen_block<T, true, true>(g, a, b, c, r0, r1, c0, c1)
              : eigen_block<T, true, false>(g, a, b, c, r0, r1, c0, c1);
  else
    g.trans_b ? eigen_block<T, false, true>(g, a, b, c, r0, r1, c0, c1)
              : eigen_block<T, false, false>(g, a, b, c, r0, r1, c0, c1);
}

// block(r0, r1, c0, c1) for the blocks of an m x n C: the whole of it when serial, else blocks of at most
// 256 x 256, every one on its own task. Both products walk C this way (eigen_entry, and storage16_entry,
// whose bits are those of eigen_entry's float product because its blocks are the same).
// Blocks of 256 x 256 keep each task large enough for Eigen's GEMM to reach its speed, while a tall or wide C
// still splits into enough tasks for every core. simple_partitioner: C is cut into the same blocks on every
// call, so Eigen blocks each the same way and the bits are the same from run to run (auto_partitioner's
// blocks, and so the bits, varied).
template <class Block>
void for_each_c_block(std::int64_t m, std::int64_t n, bool serial, Block&& block) {
  if (serial) return block(std::int64_t(0), m, std::int64_t(0), n);
  constexpr std::int64_t kBlock = 256;
  tbb::parallel_for(
      tbb::blocked_range2d<std::int64_t>(0, m, kBlock, 0, n, kBlock),
      [&](const tbb::blocked_range2d<std::int64_t>& r) {
        block(r.rows().begin(), r.rows().end(), r.cols().begin(), r.cols().end());
      },
      tbb::simple_partitioner());
}

template <class T>
void eigen_entry(const MatmulArgs& g, const T* a, const T* b, T* c, bool serial) {
  const T alpha = T(g.alpha), beta = T(g.beta);
  if (g.k == 0 || alpha == T(0))
    return for_each_c(c, g.m, g.n, g.ldc, [&](T v, auto, auto) { return canonical::gemm_scale(v, beta); });
  for_each_c_block(g.m, g.n, serial, [&](std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    eigen_block_of(g, a, b, c, r0, r1, c0, c1);
  });
}

// entry(e) for each entry e of a batch: in order when serial (or one entry), else side by side as TBB tasks (each
// entry's own work parallel inside).
template <class Entry>
void for_each_entry(std::int64_t batch, bool serial, Entry&& entry) {
  if (batch == 1 || serial) {
    for (std::int64_t e = 0; e < batch; ++e) entry(e);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, batch), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t e = r.begin(); e < r.end(); ++e) entry(e);
  });
}

template <class T>
void matmul_typed(const MatmulArgs& g, bool serial) {
  auto entry = [&](std::int64_t e) {
    // (An empty operand, k == 0, comes as a null pointer: it is not offset.)
    const T* a = g.a ? static_cast<const T*>(g.a) + e * g.stride_a : nullptr;
    const T* b = g.b ? static_cast<const T*>(g.b) + e * g.stride_b : nullptr;
    T* c = static_cast<T*>(g.c) + e * g.stride_c;
    if (g.deterministic)
      cpu_canonical_entry(g, a, b, c);
    else
      eigen_entry(g, a, b, c, serial);
  };
  for_each_entry(g.batch, serial, entry);
}

// A 16-bit operand as packed floats (operands.hpp: ld = cols, entries rows * cols apart; exact
// conversions; padding and gaps are not copied; no pass to zero the copy first).
template <class T>
std::unique_ptr<float[]> widened(const T* x, const OperandLayout& o) {
  std::unique_ptr<float[]> w(new float[std::size_t(std::max<std::int64_t>(o.elements(), 1))]);  // never empty
  if (o.elements() == 0) return w;  // (an empty operand may come as a null x: nothing to offset)
  const OperandLayout p = o.packed();
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, o.count * o.rows, 64),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t er = r.begin(); er < r.end(); ++er) {
                        const std::int64_t e = er / o.rows, i = er % o.rows;
                        cpu_leaves::widen_run(x + e * o.stride + i * o.ld, o.cols, w.get() + e * p.stride + i * p.ld);
                      }
                    });
  return w;
}

// Products with a 16-bit B outside deterministic mode (k > 0, alpha != 0; A of TA, B of TB: 16-bit, or a mixed
// product's float A), entry by entry (storage16_batch): op(A) widened once (a float A is read in place), op(B)
// converted on load: each block of C (eigen_entry's blocks, so the same Eigen calls on the same values: the float
// product's bits) converts the columns of op(B) it needs into a buffer of its thread, reused across its blocks. No
// widened copy of B (a batch-1 product with a 4096 x 14336 B made one of 235 MB per call). (With one row of C, Eigen
// runs a matrix-vector product whose grouping of K depends on B's row stride, here the panel's: the float product's
// value, not always its bits.)
template <class TA, class TB>
void storage16_entry(const MatmulArgs& g, bool serial) {  // (g: one entry)
  std::unique_ptr<float[]> wide_a;
  if constexpr (!std::is_same_v<TA, float>) wide_a = widened(static_cast<const TA*>(g.a), operand_a(g));
  const MatmulArgs f = as_float_product(g, wide_a.get(), nullptr);
  const auto* a = static_cast<const float*>(f.a);
  const TB* b = static_cast<const TB*>(g.b);
  float* c = static_cast<float*>(g.c);
  tbb::enumerable_thread_specific<std::vector<float>> panels;
  for_each_c_block(g.m, g.n, serial, [&](std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    const std::int64_t w = c1 - c0;
    std::vector<float>& panel = panels.local();
    if (panel.size() < std::size_t(w * g.k)) panel.resize(std::size_t(w * g.k));
    if (g.trans_b)  // op(B)'s columns c0 .. c1 - 1: rows of the stored n x k B, w x k here
      for (std::int64_t j = 0; j < w; ++j) cpu_leaves::widen_run(b + (c0 + j) * g.ldb, g.k, panel.data() + j * g.k);
    else  // columns of the stored k x n B: k rows of w here
      for (std::int64_t kk = 0; kk < g.k; ++kk) cpu_leaves::widen_run(b + kk * g.ldb + c0, w, panel.data() + kk * w);
    MatmulArgs one = f;
    one.ldb = g.trans_b ? g.k : w;
    eigen_block_of(one, a, panel.data(), c + c0, r0, r1, 0, w);
  });
}

// Every entry of g by storage16_entry, the entries side by side as matmul_typed runs a float batch (each entry's
// blocks the same): no widened copy of a batch's B either.
template <class TA, class TB>
void storage16_batch(const MatmulArgs& g, bool serial) {
  if constexpr (!std::is_same_v<TA, float>)
    if (g.stride_a == 0 && g.batch > 1) {  // one A for every entry: widened once, then a float A
      const std::unique_ptr<float[]> wide_a = widened(static_cast<const TA*>(g.a), operand_a(g));
      MatmulArgs f = g;  // (A as floats; B as stored, of its type)
      f.dtype = Dtype::f32, f.mixed_b = g.b_type();
      f.a = wide_a.get(), f.lda = operand_a(g).packed().ld;
      return storage16_batch<float, TB>(f, serial);
    }
  auto entry = [&](std::int64_t e) {
    MatmulArgs one = g;
    one.a = static_cast<const TA*>(g.a) + e * g.stride_a;
    one.b = static_cast<const TB*>(g.b) + e * g.stride_b;
    one.c = static_cast<float*>(g.c) + e * g.stride_c;
    one.batch = 1, one.stride_a = one.stride_b = one.stride_c = 0;
    storage16_entry<TA, TB>(one, serial);
  };
  for_each_entry(g.batch, serial, entry);
}

// An operand of type T as floats: a 16-bit one widened to packed floats (kept in `keep`), a float one as stored.
template <class T>
const void* as_floats(const void* x, const OperandLayout& o, std::unique_ptr<float[]>& keep) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else {
    keep = widened(static_cast<const T*>(x), o);
    return keep.get();
  }
}

// Deterministic mode's float product of a 16-bit B (outside the tensor-core arithmetic): A as floats (a 16-bit A
// widened once), B read as stored by the canonical chains (cpu_canonical_entry_16bit_b), entry by entry.
template <class TA>
void canonical_16bit_b(const MatmulArgs& g) {
  std::unique_ptr<float[]> wa;
  const MatmulArgs f = as_float_product(g, as_floats<TA>(g.a, operand_a(g), wa), nullptr);
  MatmulArgs one = f;
  one.b = g.b, one.ldb = g.ldb;  // (B as stored)
  one.batch = 1, one.stride_a = one.stride_b = one.stride_c = 0;
  const std::size_t eb = size_of(g.b_type());
  for (std::int64_t e = 0; e < g.batch; ++e)
    cpu_canonical_entry_16bit_b(one, static_cast<const float*>(f.a) + e * f.stride_a,
                                static_cast<const char*>(g.b) + std::size_t(e * g.stride_b) * eb, g.b_type(),
                                static_cast<float*>(g.c) + e * g.stride_c);
}

// 16-bit A and B (float C), or a mixed product (A and B two of float, bfloat16 and half): the float product
// of the converted matrices, so every kernel and deterministic mode give what they give for them: a 16-bit op(B)
// is converted on load, entry by entry (storage16_batch; deterministic mode: canonical_16bit_b); a 16-bit A, and
// B in deterministic mode's tensor-core arithmetic, are widened to packed floats first, and the float product runs
// (cpu_matmul: deterministic mode's tensor-core format of float inputs included; a same-type 16-bit deterministic
// product took the tensor-core arithmetic in cpu_matmul before it came here).
template <bool kSerial>
void run_eigen(const MatmulArgs& g) {
  if (!g.mixed() && !info(g.dtype).storage)
    return visit(
        g.dtype,
        [&]<class T>(std::type_identity<T>) {
          if constexpr (!is_storage_type_v<T>) matmul_typed<T>(g, kSerial);
        },
        matmul_types{});
  constexpr type_list<float, bfloat16, half> kFloating{};
  visit(
      g.dtype,
      [&]<class TA>(std::type_identity<TA>) {
        visit(
            g.b_type(),
            [&]<class TB>(std::type_identity<TB>) {
              if constexpr (!std::is_same_v<TB, float>)
                if (g.k > 0 && float(g.alpha) != 0.0f && g.m > 0 && g.n > 0) {
                  tensor_core::Format format;
                  if (!g.deterministic) return storage16_batch<TA, TB>(g, kSerial);
                  if (!tensor_core::canonical_format(Dtype::f32, g.precision, format)) return canonical_16bit_b<TA>(g);
                }
              std::unique_ptr<float[]> wa, wb;
              const void* a = as_floats<TA>(g.a, operand_a(g), wa);
              const void* b = as_floats<TB>(g.b, operand_b(g), wb);
              cpu_matmul(as_float_product(g, a, b));  // (a float product now: no way back here)
            },
            kFloating);
      },
      kFloating);
}

// The table: one row per kernel, with the function that runs it (every entry of the batch; deterministic
// mode, whatever the kernel, the canonical fma chain). Both split C into the same blocks on every call (so
// Eigen's blocking of each is the same): run to run.
struct MatmulKernel {
  const char* name;
  Determinism determinism;
  bool auto_pick = false;  // the one kernel "auto" runs
  void (*run)(const MatmulArgs& g);
};
constexpr MatmulKernel kMatmulKernels[] = {
    {.name = "eigen_tbb", .determinism = Determinism::run_to_run, .auto_pick = true, .run = &run_eigen<false>},
    {.name = "eigen_serial", .determinism = Determinism::run_to_run, .run = &run_eigen<true>},
};
constexpr const MatmulKernel& kAutoMatmul = []() -> const MatmulKernel& {
  for (const MatmulKernel& k : kMatmulKernels)
    if (k.auto_pick) return k;
  throw "backends/cpu: no matmul kernel has auto_pick";
}();
static_assert(
    [] {
      int picked = 0;
      for (const MatmulKernel& k : kMatmulKernels) {
        if (!given(k.run)) return false;
        picked += k.auto_pick;
      }
      return picked == 1;
    }(),
    "backends/cpu: every matmul kernel needs its function, and exactly one is auto's");

}  // namespace

std::vector<KernelInfo> cpu_matmul_kernel_info() {
  std::vector<KernelInfo> infos;
  for (const MatmulKernel& k : kMatmulKernels)
    infos.push_back(KernelInfo{.name = k.name,
                               .dtypes = matmul_dtypes(),
                               .precisions = std::vector<Precision>(matmul_dtypes().size(), Precision::full),
                               .determinism = k.determinism,
                               .auto_pick = k.auto_pick});
  return infos;
}

void cpu_matmul(const MatmulArgs& g) {
  if (!g.mixed() && cpu_tensor_core_matmul(g)) return;  // (a mixed product: as its float product, run_eigen)
  (g.kernel.is_auto() ? kAutoMatmul : kMatmulKernels[g.kernel.stage]).run(g);
}

}  // namespace tandem::detail
