// fuzz_api's matmul: C = alpha * op(A) * op(B) + beta * C on MatrixViews of host memory or on
// BufferMatrix, with transposes, shapes, lds and offsets that may overflow, mismatch or make C overlap A
// or B, checked against a plain triple loop. With beta = 0, C holds poison that must not leak.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.hpp"

namespace tandem_fuzz {
namespace {

struct Shape {
  std::size_t rows, cols, ld;
};

// The elements from a matrix's first to its last one, (rows - 1) * ld + cols, or 0 when it has none.
u128 extent_of(const Shape& s) {
  if (s.rows == 0 || s.cols == 0) return 0;
  return u128(s.rows - 1) * s.ld + s.cols;
}

// The contract for one matrix: ld >= cols (always), and an extent whose bytes fit in ptrdiff_t.
template <class T>
bool shape_valid(const Shape& s) {
  return s.ld >= s.cols && extent_of(s) <= limit_of<T>();
}

std::string describe(const char* name, const Shape& s) {
  return std::string(name) + " " + str(s.rows) + "x" + str(s.cols) + " ld " + str(s.ld);
}

// The form of a call: transposes and the scalars (alpha, beta from {1, 0, -1, 2, 0.5}: exact).
struct Form {
  bool ta = false, tb = false;
  double alpha = 1, beta = 0;
};

// ", trans AB, alpha 2, beta 0.5" for a form other than the plain product.
std::string describe(const Form& f) {
  if (!f.ta && !f.tb && f.alpha == 1 && f.beta == 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, ", trans %s%s, alpha %g, beta %g", f.ta ? "A" : "-", f.tb ? "B" : "-", f.alpha,
                f.beta);
  return buf;
}

// C = alpha * op(A) * op(B) + beta * C0 with double accumulation: exact for the small integers the
// harness uses, and NaN exactly where the product has a NaN, an inf * 0 or inf - inf. alpha = 0 or an
// empty op(A).cols: no product (C = beta * C0); beta = 0: C0 is not read.
template <class T>
TANDEM_FUZZ_BULK void check_product(const T* a, const T* b, const T* c, const T* c0, const Shape& sa, const Shape& sb,
                                    const Shape& sc, const Form& f) {
  const std::size_t k = f.ta ? sa.rows : sa.cols;
  for (std::size_t i = 0; i < sc.rows; ++i)
    for (std::size_t j = 0; j < sc.cols; ++j) {
      double r = 0;
      if (f.alpha != 0 && k > 0) {
        for (std::size_t p = 0; p < k; ++p)
          r += double(a[f.ta ? p * sa.ld + i : i * sa.ld + p]) * double(b[f.tb ? j * sb.ld + p : p * sb.ld + j]);
        r *= f.alpha;
      }
      if (f.beta != 0) r += f.beta * double(c0[i * sc.ld + j]);
      const T got = c[i * sc.ld + j];
      if (std::isnan(r) ? !std::isnan(got) : !(double(got) == r)) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "wrong product: C(%zu, %zu) is %.17g, expected %.17g", i, j, double(got), r);
        fail(buf);
      }
    }
}

// Where a matrix lives: in one of the arenas at an offset, or nowhere (null data).
struct Place {
  int arena = -1;
  std::size_t offset = 0;
};

// Checks that after a call each arena holds what it held before, except C's elements when the call
// returned. (A and B are const; padding between cols and ld, and everything around, must not change.)
template <class T>
TANDEM_FUZZ_BULK void check_untouched(const std::vector<tandem_verify::Vector<T>>& before,
                                      const std::vector<tandem_verify::Vector<T>>& after, bool returned,
                                      const Place& pc, const Shape& sc) {
  for (std::size_t k = 0; k < after.size(); ++k)
    for (std::size_t e = 0; e < after[k].size(); ++e) {
      if (returned && int(k) == pc.arena && e >= pc.offset) {
        const std::size_t rel = e - pc.offset;
        if (sc.ld > 0 && rel / sc.ld < sc.rows && rel % sc.ld < sc.cols) continue;  // one of C's elements
      }
      if (!same_bits(before[k][e], after[k][e]))
        fail("memory outside C's rows x cols changed (arena " + std::to_string(k) + ", element " + std::to_string(e) +
             (returned ? ")" : ") although the call threw"));
    }
}

}  // namespace

template <class T>
void fuzz_matmul_typed(FuzzedDataProvider& in) {
  const Engine& eng = engine();
  const MatmulChoice choice = fuzz_matmul_choice<T>(in);
  const bool buffers = choice.buffers, deterministic = choice.deterministic, kernel_ok = choice.kernel_ok;
  const std::string& kernel = choice.kernel;
  Form form;
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    form.ta = in.ConsumeBool(), form.tb = in.ConsumeBool();
    form.alpha = kMatmulScalars[in.ConsumeIntegralInRange<int>(0, 4)];
    form.beta = kMatmulScalars[in.ConsumeIntegralInRange<int>(0, 4)];
  }
  const tandem::MatmulOptions opts{kernel, deterministic, form.ta, form.tb, form.alpha, form.beta};
  const std::uint64_t seed = in.ConsumeIntegral<std::uint64_t>();
  const int special = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int>(1, 20);

  std::size_t m = fuzz_dim<T>(in), k = fuzz_dim<T>(in), n = fuzz_dim<T>(in);
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    // One dimension at the edge of the address space, the others tiny: where extent arithmetic overflows.
    m = in.ConsumeIntegralInRange<std::size_t>(0, 3);
    k = in.ConsumeIntegralInRange<std::size_t>(0, 3);
    n = in.ConsumeIntegralInRange<std::size_t>(0, 3);
    const std::size_t edge = fuzz_size<T>(in) | (std::size_t(1) << in.ConsumeIntegralInRange<int>(40, 63));
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
      case 0:
        m = edge;
        break;
      case 1:
        k = edge;
        break;
      default:
        n = edge;
        break;
    }
  }
  // As stored: A is k x m when transposed, B n x k.
  Shape sa{form.ta ? k : m, form.ta ? m : k, 0}, sb{form.tb ? n : k, form.tb ? k : n, 0}, sc{m, n, 0};
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {  // a mismatched shape now and then
    Shape* s[] = {&sa, &sb, &sc};
    Shape& t = *s[in.ConsumeIntegralInRange<int>(0, 2)];
    (in.ConsumeBool() ? t.rows : t.cols) = fuzz_dim<T>(in);
  }
  sa.ld = fuzz_ld<T>(in, sa.cols);
  sb.ld = fuzz_ld<T>(in, sb.cols);
  sc.ld = fuzz_ld<T>(in, sc.cols);
  // op(A) is opa_rows x opa_cols, op(B) opb_rows x opb_cols.
  const std::size_t opa_rows = form.ta ? sa.cols : sa.rows, opa_cols = form.ta ? sa.rows : sa.cols;
  const std::size_t opb_rows = form.tb ? sb.cols : sb.rows, opb_cols = form.tb ? sb.rows : sb.cols;
  const bool shapes_match = opa_cols == opb_rows && sc.rows == opa_rows && sc.cols == opb_cols;
  const Shape* shapes[] = {&sa, &sb, &sc};
  u128 ext[3];
  bool shape_ok[3];
  for (int i = 0; i < 3; ++i) {
    ext[i] = extent_of(*shapes[i]);
    shape_ok[i] = shape_valid<T>(*shapes[i]);
  }
  const u128 work = u128(opa_rows) * opa_cols * opb_cols;
  if (avoid("matrix-extent") && std::max({sa.cols, sb.cols, sc.cols}) > limit_of<T>()) return;
  if (avoid("deterministic-k0") && deterministic && opa_cols == 0 && sc.rows > 0 && sc.cols > 0) return;

  // Arenas: 0 holds A, 1 holds B, 2 holds C, unless the layout shares one among several matrices.
  // Offsets inside a shared arena decide whether C overlaps A or B (the API must then throw).
  const int layout = in.ConsumeIntegralInRange<int>(0, 3);  // 0 separate, 1 B in A's arena, 2 C in A's, 3 all in one
  Place place[3];
  std::vector<tandem_verify::Vector<T>> arena(3);
  std::size_t arena_size[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    place[i].arena = i;
    if ((layout == 1 && i == 1) || (layout == 2 && i == 2) || layout == 3) place[i].arena = 0;
  }
  // Host memory must be valid for what each matrix declares: a valid shape too large to allocate gets
  // null data (so the call must throw); a shape the API must reject gets null or a one-element array.
  // Buffers may be given any offset and shape: the API checks them against the buffer's size.
  bool null_data[3] = {false, false, false};
  for (int i = 0; i < 3; ++i) {
    Place& p = place[i];
    const bool small = shape_ok[i] && ext[i] <= kMaxMatElems;
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
      case 0:
        p.offset = 0;
        break;
      case 1:
      case 2:
        p.offset = in.ConsumeIntegralInRange<std::size_t>(0, 16);
        break;
      case 3:
      case 4:  // right after (or overlapping the end of) what the arena already holds
        p.offset = arena_size[p.arena] -
                   std::min<std::size_t>(arena_size[p.arena], in.ConsumeIntegralInRange<std::size_t>(0, 2));
        break;
      case 5:
        null_data[i] = true;
        break;
      default:
        p.offset = buffers ? fuzz_size<T>(in) : in.ConsumeIntegralInRange<std::size_t>(0, 64);
    }
    if (!buffers) {
      if (!small) {
        p.offset = 0;
        if (shape_ok[i] || in.ConsumeBool())
          null_data[i] = true;
        else
          arena_size[p.arena] = std::max<std::size_t>(arena_size[p.arena], 1);
        continue;
      }
      if (!null_data[i]) arena_size[p.arena] = std::max(arena_size[p.arena], p.offset + std::size_t(ext[i]));
    } else if (small && !null_data[i] && p.offset <= kMaxMatElems) {
      arena_size[p.arena] = std::max(arena_size[p.arena], p.offset + std::size_t(ext[i]));
    }
  }
  // The product must stay small: when a valid one would not, C gets no memory and the call must throw.
  if (work > kMaxMatWork && !buffers) null_data[2] = true;

  for (int a = 0; a < 3; ++a)
    arena[a].assign(arena_size[a] + (buffers ? in.ConsumeIntegralInRange<std::size_t>(0, 3) : 0), poison<T>());
  std::uint64_t rng = seed;
  for (int i = 0; i < (form.beta != 0 ? 3 : 2); ++i) {  // A's and B's elements; C's too where beta reads them
    const Place& p = place[i];
    const Shape& s = *shapes[i];
    if (null_data[i] || !shape_ok[i] || ext[i] == 0 || ext[i] > kMaxMatElems ||
        p.offset + ext[i] > arena[p.arena].size())
      continue;
    for (std::size_t r = 0; r < s.rows; ++r)
      for (std::size_t c = 0; c < s.cols; ++c) arena[p.arena][p.offset + r * s.ld + c] = fuzz_value<T>(rng, special);
  }
  const std::vector<tandem_verify::Vector<T>> before = arena;

  // Does the call's memory lie where the API needs it? (null data and foreign buffers only matter for a
  // matrix with elements: an empty one is never read.)
  bool memory_ok[3];
  const char* names[3] = {"A", "B", "C"};
  std::string what = std::string("matmul<") + type_name<T>() + ">(";
  if (!buffers) {
    const T* ptr[3];
    for (int i = 0; i < 3; ++i) {
      const Place& p = place[i];
      ptr[i] = null_data[i] || arena[p.arena].empty() ? nullptr : arena[p.arena].data() + p.offset;
      memory_ok[i] = ext[i] == 0 || ptr[i] != nullptr;
      what += describe(names[i], *shapes[i]) +
              (ptr[i] ? " at arena " + std::to_string(p.arena) + "+" + str(p.offset) : " null") + ", ";
    }
    // C overlaps A or B when their [first, last] element ranges meet in the same arena.
    bool overlap = false;
    for (int i = 0; i < 2; ++i)
      if (ptr[i] && ptr[2] && place[i].arena == place[2].arena && ext[i] > 0 && ext[2] > 0 &&
          place[i].offset < place[2].offset + ext[2] && place[2].offset < place[i].offset + ext[i])
        overlap = true;
    const bool valid = kernel_ok && shapes_match && shape_ok[0] && shape_ok[1] && shape_ok[2] && memory_ok[0] &&
                       memory_ok[1] && memory_ok[2] && !overlap;
    what += "kernel " + quoted(kernel) + (deterministic ? ", deterministic" : "") + describe(form) + ")";
    begin_call(what);
    const bool returned = run(valid ? Expect::ok : Expect::error, [&] {
      eng.matmul<T>(tandem::MatrixView<const T>{ptr[0], sa.rows, sa.cols, sa.ld},
                    tandem::MatrixView<const T>{ptr[1], sb.rows, sb.cols, sb.ld},
                    tandem::MatrixView<T>{const_cast<T*>(ptr[2]), sc.rows, sc.cols, sc.ld}, opts);
    });
    if (returned && ext[2] > 0)
      check_product<T>(ptr[0], ptr[1], ptr[2], before[place[2].arena].data() + place[2].offset, sa, sb, sc, form);
    check_untouched<T>(before, arena, returned, place[2], sc);
    return;
  }

  // Buffers: each arena uploaded; a matrix may instead name a foreign, default-constructed or no buffer.
  Buffer<T> bufs[3];
  for (int a = 0; a < 3; ++a)
    if (!arena[a].empty() || in.ConsumeBool()) bufs[a] = eng.upload<T>(arena[a]);
  Buffer<T> foreign = other_engine().upload<T>(arena[0]);
  Buffer<T> none;
  tandem::BufferMatrix<T> bm[3];
  for (int i = 0; i < 3; ++i) {
    const Place& p = place[i];
    const Shape& s = *shapes[i];
    const Buffer<T>* b = &bufs[p.arena];
    const char* desc = "buffer";
    if (null_data[i]) {
      switch (in.ConsumeIntegralInRange<int>(0, 2)) {
        case 0:
          b = nullptr;
          desc = "no buffer";
          break;
        case 1:
          b = &none;
          desc = "default Buffer";
          break;
        default:
          b = &foreign;
          desc = "Buffer of another engine";
          break;
      }
    }
    // matrix() turns ld 0 into cols; a BufferMatrix written by hand keeps it.
    if (b && s.ld == s.cols && s.cols != 0 && in.ConsumeBool())
      bm[i] = b->matrix(s.rows, s.cols, 0, p.offset);
    else
      bm[i] = tandem::BufferMatrix<T>{b, p.offset, s.rows, s.cols, s.ld};
    const std::size_t size = b ? b->size() : 0;
    const bool fits =
        b && b->allocation() && b != &foreign && shape_ok[i] && p.offset <= size && ext[i] <= size - p.offset;
    memory_ok[i] = ext[i] == 0 || fits;
    what += describe(names[i], s) + " in " + desc + " " + std::to_string(p.arena) + " of " + str(size) + " at offset " +
            str(p.offset) + ", ";
  }
  bool overlap = false;
  for (int i = 0; i < 2; ++i)
    if (memory_ok[i] && memory_ok[2] && ext[i] > 0 && ext[2] > 0 && bm[i].buffer == bm[2].buffer &&
        place[i].offset < place[2].offset + ext[2] && place[2].offset < place[i].offset + ext[i])
      overlap = true;
  bool valid = kernel_ok && shapes_match && shape_ok[0] && shape_ok[1] && shape_ok[2] && memory_ok[0] && memory_ok[1] &&
               memory_ok[2] && !overlap;
  what += "kernel " + quoted(kernel) + (deterministic ? ", deterministic" : "") + describe(form) + ")";
  if (valid && work > kMaxMatWork) return;  // valid but too slow for a fuzz input
  begin_call(what);
  const bool returned = run(valid ? Expect::ok : Expect::error, [&] { eng.matmul<T>(bm[0], bm[1], bm[2], opts); });
  std::vector<tandem_verify::Vector<T>> after(3);
  for (int a = 0; a < 3; ++a) after[a] = bufs[a].size() ? bufs[a].to_vector() : arena[a];
  if (returned && ext[2] > 0) {
    // (A or B may be empty, k == 0, at any offset: only point into arenas that hold them.)
    const T* at[3];
    for (int i = 0; i < 3; ++i) at[i] = ext[i] > 0 ? after[place[i].arena].data() + place[i].offset : nullptr;
    check_product<T>(at[0], at[1], at[2], before[place[2].arena].data() + place[2].offset, sa, sb, sc, form);
  }
  check_untouched<T>(before, after, returned, place[2], sc);
}

// The element types whose C has their own type (float, double); 16-bit A and B (float C) go to fuzz_batch.
void fuzz_matmul(tandem::Dtype d, FuzzedDataProvider& in) {
  tandem_verify::with_dtype(d, [&]<class T>() {
    if constexpr (tandem::is_matmul_type_v<T> && std::is_same_v<T, tandem::compute_t<T>>) fuzz_matmul_typed<T>(in);
  });
}

}  // namespace tandem_fuzz
