// fuzz_api: a libFuzzer target that drives tandem's public API on the CPU backend with fuzzed shapes,
// strides, lds, offsets, kernel names, options and sizes (0, 1, small, and huge values near SIZE_MAX,
// PTRDIFF_MAX and PTRDIFF_MAX / sizeof(T)).
//
// For every call the harness decides from the API's contract (include/tandem/*.hpp, README) whether the
// input is valid, and hands the library only memory that really is valid for what the input declares:
// when a valid shape is larger than the harness allocates, the pointer is null (so the call must throw).
// Then:
//   - a valid call must return, with the result of a plain loop (sums of integers and of small-integer
//     floats exactly, min/max bit for bit, matmul of small integers exactly), and must write nothing but
//     its output (every array starts filled with a NaN poison that is compared bit for bit afterwards);
//   - an invalid call must throw tandem::Error with a message, and must leave memory untouched.
// Anything else (another exception, a wrong result, a crash, a sanitizer report, a hang) aborts so that
// libFuzzer reports it. TANDEM_FUZZ_VERBOSE=1 prints every call, for reading a reproducer.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "tandem/tandem.hpp"

namespace {

using tandem::Backend;
using tandem::Buffer;
using tandem::Engine;
using u128 = unsigned __int128;

// Work per input stays small so the fuzzer runs many inputs a second.
// (Still past the CPU backend's 16 Ki-element leaves and 4 Ki-element chunks, and its 256 x 256 blocks.)
constexpr std::size_t kMaxElems = std::size_t(1) << 16;     // largest array for a reduction or a buffer
constexpr std::size_t kMaxMatElems = std::size_t(1) << 16;  // largest matrix
constexpr std::size_t kMaxMatWork = std::size_t(1) << 18;   // largest m * k * n that runs
constexpr std::size_t kMaxHostCopy = 4096;                  // largest span for upload()/download()

bool verbose() {
  static const bool v = [] {
    const char* e = std::getenv("TANDEM_FUZZ_VERBOSE");
    return e && e[0] == '1';
  }();
  return v;
}

// Known library bugs the harness can be told to step around while they are open, so that a bounded CI
// run keeps looking for new ones: TANDEM_FUZZ_AVOID=matrix-extent,null-host-span,... (see README.md).
//   matrix-extent     matmul with a matrix whose cols exceed PTRDIFF_MAX / sizeof(T)
//   null-host-span    Buffer::upload/download of a span with null data and a non-zero size
//   deterministic-k0  deterministic matmul with k == 0 (and C not empty)
bool avoid(const char* bug) {
  static const std::string list = [] {
    const char* e = std::getenv("TANDEM_FUZZ_AVOID");
    return "," + std::string(e ? e : "") + ",";
  }();
  return list.find("," + std::string(bug) + ",") != std::string::npos;
}

// The call being made, printed with any failure.
std::string g_call;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "\nfuzz_api: %s\n  call: %s\n", what.c_str(), g_call.c_str());
  std::fflush(stderr);
  std::abort();
}

void begin_call(std::string call) {
  g_call = std::move(call);
  if (verbose()) std::fprintf(stderr, "fuzz_api: %s\n", g_call.c_str());
}

std::string str(std::size_t v) {
  if (v == SIZE_MAX) return "SIZE_MAX";
  if (v > (std::size_t(1) << 40)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%zu (0x%zx)", v, v);
    return buf;
  }
  return std::to_string(v);
}

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (unsigned char c : s) {
    if (c >= 32 && c < 127 && c != '"' && c != '\\') {
      q += char(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      q += buf;
    }
  }
  return q + "\"";
}

// The harness's own loops over arrays (filling them, and checking results against plain loops) are left
// out of the coverage instrumentation: they would slow every input down and guide the fuzzer nowhere.
#define TANDEM_FUZZ_BULK __attribute__((no_sanitize("coverage")))

enum class Expect { ok, error, either };

// Runs f under the contract: `expect` says whether the call is valid. Returns true when f returned.
template <class F>
bool run(Expect expect, F&& f) {
  try {
    f();
  } catch (const tandem::Error& e) {
    if (expect == Expect::ok) fail(std::string("a valid call threw tandem::Error: ") + e.what());
    if (e.what()[0] == '\0') fail("tandem::Error with an empty message");
    if (verbose()) std::fprintf(stderr, "  -> tandem::Error: %s\n", e.what());
    return false;
  }
  if (expect == Expect::error) fail("an invalid call returned instead of throwing tandem::Error");
  if (verbose()) std::fprintf(stderr, "  -> returned\n");
  return true;
}

// The engines: every input uses the same two (one for "a buffer of another engine").
const Engine& engine() {
  static const Engine e(Backend::cpu);
  return e;
}
const Engine& other_engine() {
  static const Engine e(Backend::cpu);
  return e;
}

bool cuda_usable() {
  static const bool usable = [] {
    for (const auto& s : tandem::backend_status())
      if (s.backend == Backend::cuda) return s.usable;
    return false;
  }();
  return usable;
}

// ---- fuzzed values -----------------------------------------------------------------------------------

// The largest element count whose bytes fit in ptrdiff_t: the API's address-space limit.
template <class T>
constexpr std::size_t limit_of() {
  return std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(T);
}

// A size, count, stride, ld or offset: mostly small, sometimes at the edges of the address space.
template <class T>
std::size_t fuzz_size(FuzzedDataProvider& in) {
  const auto delta = [&] { return std::size_t(in.ConsumeIntegralInRange<int>(-3, 3)); };
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
    case 3:
      return in.ConsumeIntegralInRange<std::size_t>(2, 17);
    case 4:
    case 5:
      return in.ConsumeIntegralInRange<std::size_t>(0, 300);
    case 6:
      return (std::size_t(1) << in.ConsumeIntegralInRange<int>(4, 18)) + delta();  // 2^k - 3 .. 2^k + 3
    case 7:
      return in.ConsumeIntegralInRange<std::size_t>(0, kMaxElems);
    case 8:
      return SIZE_MAX - in.ConsumeIntegralInRange<std::size_t>(0, 4);
    case 9:
      return std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) + delta();
    case 10:
      return limit_of<T>() + delta();
    case 11:
      return limit_of<T>() / in.ConsumeIntegralInRange<std::size_t>(1, 1024) + delta();
    case 12:
      return (std::size_t(1) << in.ConsumeIntegralInRange<int>(19, 63)) + delta();
    case 13:
      return SIZE_MAX / in.ConsumeIntegralInRange<std::size_t>(2, 64) + delta();
    case 14:
      return std::size_t(1) << 32 | in.ConsumeIntegralInRange<std::size_t>(0, 3);
    default:
      return in.ConsumeIntegral<std::size_t>();
  }
}

// A matrix dimension: small far more often than fuzz_size makes it, so products do run.
template <class T>
std::size_t fuzz_dim(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 8)) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
    case 3:
    case 4:
      return in.ConsumeIntegralInRange<std::size_t>(2, 24);
    case 5:
      return in.ConsumeIntegralInRange<std::size_t>(25, 600);
    case 6: {  // just past (or at) the address-space limit, where extent arithmetic overflows
      const std::size_t edges[] = {
          limit_of<T>(), limit_of<T>() + 1, std::size_t(1) << 62, std::size_t(1) << 63, SIZE_MAX / 2,
          SIZE_MAX / 3,  SIZE_MAX};
      return edges[in.ConsumeIntegralInRange<std::size_t>(0, std::size(edges) - 1)] -
             in.ConsumeIntegralInRange<std::size_t>(0, 2);
    }
    default:
      return fuzz_size<T>(in);
  }
}

// An ld for a matrix with `cols` columns: usually >= cols, sometimes smaller or huge.
template <class T>
std::size_t fuzz_ld(FuzzedDataProvider& in, std::size_t cols) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
    case 1:
    case 2:
      return cols;
    case 3:
      return cols + in.ConsumeIntegralInRange<std::size_t>(1, 9);
    case 4:
      return cols - in.ConsumeIntegralInRange<std::size_t>(1, 2);  // wraps when cols is 0 or 1
    case 5:
      return 0;
    default:
      return fuzz_size<T>(in);
  }
}

std::string fuzz_kernel(FuzzedDataProvider& in, const std::vector<std::string>& valid,
                        const std::vector<std::string>& other_kind) {
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
      return valid[in.ConsumeIntegralInRange<std::size_t>(0, valid.size() - 1)];
    case 5:
      return other_kind[in.ConsumeIntegralInRange<std::size_t>(0, other_kind.size() - 1)];
    case 6:
      return "";
    case 7: {
      std::string k = valid[in.ConsumeIntegralInRange<std::size_t>(0, valid.size() - 1)];
      switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
          return k + " ";
        case 1:
          return k.substr(0, k.size() - 1);
        case 2:
          return std::string(k).append(1, '\0');
        default:
          std::transform(k.begin(), k.end(), k.begin(), [](char c) { return char(std::toupper(c)); });
          return k;
      }
    }
    case 8:
      return std::string(in.ConsumeIntegralInRange<std::size_t>(0, 5000), 'a');
    default:
      return in.ConsumeRandomLengthString(40);
  }
}

bool kernel_valid(const std::string& k, const std::vector<std::string>& valid) {
  return std::find(valid.begin(), valid.end(), k) != valid.end();  // valid lists "auto" first
}

// ---- values and their references -------------------------------------------------------------------

TANDEM_FUZZ_BULK std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// What fills every element no call may read or write: a NaN with a payload for floats (a read shows up
// as a NaN result, a write as changed bits), an odd large value for integers.
template <class T>
T poison() {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<float>(0x7fa5a5a5u);
  else if constexpr (std::is_same_v<T, double>)
    return std::bit_cast<double>(0x7ff5a5a5a5a5a5a5ull);
  else
    return T(std::numeric_limits<T>::max() / 3 + 12345);
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
template <class T>
bool same_bits(const std::vector<T>& a, const T* b) {
  return a.empty() || std::memcmp(a.data(), b, a.size() * sizeof(T)) == 0;
}

// An element a call reads: a small integer (so every float sum is exact, whatever its order), or now and
// then one of the values the API has rules for (NaN, infinities, signed zeros, integer extremes).
template <class T>
TANDEM_FUZZ_BULK T fuzz_value(std::uint64_t& rng, int special_per_256) {
  const std::uint64_t r = splitmix(rng);
  if (int(r & 255) < special_per_256) {
    if constexpr (std::is_floating_point_v<T>) {
      switch ((r >> 8) % 5) {
        case 0:
          return std::numeric_limits<T>::quiet_NaN();
        case 1:
          return -std::numeric_limits<T>::infinity();
        case 2:
          return std::numeric_limits<T>::infinity();
        case 3:
          return T(-0.0);
        default:
          return std::bit_cast<T>(~std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(
              T(0)));  // a negative NaN with every payload bit set
      }
    } else {
      switch ((r >> 8) % 3) {
        case 0:
          return std::numeric_limits<T>::min();
        case 1:
          return std::numeric_limits<T>::max();
        default:
          return T(r >> 11);
      }
    }
  }
  return T(int((r >> 8) % 17) - 8);
}

template <class T>
T canonical_nan() {
  return std::numeric_limits<T>::quiet_NaN();
}

// ---- reductions ----------------------------------------------------------------------------------

enum class Op { sum, min, max, mean };
const char* name(Op op) { return op == Op::sum ? "sum" : op == Op::min ? "min" : op == Op::max ? "max" : "mean"; }

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, std::int32_t>)
    return "int32_t";
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return "int64_t";
  else if constexpr (std::is_same_v<T, float>)
    return "float";
  else
    return "double";
}

// (count - 1) * stride + 1, the elements a strided view spans, in 128 bits.
u128 span_of(std::size_t count, std::size_t stride) { return count == 0 ? 0 : u128(count - 1) * stride + 1; }

// Checks the result of `op` over x[0], x[stride], ... (count >= 1 for min/max/mean) against plain loops.
template <class T>
TANDEM_FUZZ_BULK void check_reduce(Op op, const T* x, std::size_t count, std::size_t stride,
                                   tandem::sum_result_t<T> sum, T mm, double mean) {
  if constexpr (std::is_integral_v<T>) {
    std::uint64_t s = 0;
    T lo = x[0], hi = x[0];
    for (std::size_t i = 0; i < count; ++i) {
      const T v = x[i * stride];
      s += std::uint64_t(std::int64_t(v));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (op == Op::sum && sum != std::int64_t(s))
      fail("wrong sum: got " + std::to_string(sum) + ", expected " + std::to_string(std::int64_t(s)));
    if (op == Op::min && mm != lo) fail("wrong min: got " + std::to_string(mm) + ", expected " + std::to_string(lo));
    if (op == Op::max && mm != hi) fail("wrong max: got " + std::to_string(mm) + ", expected " + std::to_string(hi));
    if (op == Op::mean && !same_bits(mean, double(std::int64_t(s)) / double(count)))
      fail("wrong mean: got " + std::to_string(mean) + ", expected " +
           std::to_string(double(std::int64_t(s)) / double(count)));
  } else {
    bool nan = false, pinf = false, ninf = false;
    double s = 0;  // exact: small integers
    T lo = std::numeric_limits<T>::infinity(), hi = -std::numeric_limits<T>::infinity();
    for (std::size_t i = 0; i < count; ++i) {
      const T v = x[i * stride];
      if (std::isnan(v)) {
        nan = true;
        continue;
      }
      if (std::isinf(v))
        (v > 0 ? pinf : ninf) = true;
      else
        s += double(v);
      // min(-0, +0) is -0 and max(-0, +0) is +0, whatever the order.
      if (v < lo || (v == lo && std::signbit(v))) lo = v;
      if (v > hi || (v == hi && !std::signbit(v))) hi = v;
    }
    T ref_sum;
    if (nan || (pinf && ninf))
      ref_sum = canonical_nan<T>();
    else if (pinf)
      ref_sum = std::numeric_limits<T>::infinity();
    else if (ninf)
      ref_sum = -std::numeric_limits<T>::infinity();
    else
      ref_sum = T(s);
    if (nan) lo = hi = canonical_nan<T>();
    char buf[160];
    switch (op) {
      case Op::sum:
        // A NaN sum is the canonical quiet NaN; a zero sum may be either zero.
        if (std::isnan(ref_sum) ? !same_bits(sum, ref_sum) : !(sum == ref_sum)) {
          std::snprintf(buf, sizeof buf, "wrong sum: got %.17g, expected %.17g", double(sum), double(ref_sum));
          fail(buf);
        }
        break;
      case Op::min:
      case Op::max: {
        const T ref = op == Op::min ? lo : hi;
        if (!same_bits(mm, ref)) {
          std::snprintf(buf, sizeof buf, "wrong %s: got %.17g, expected %.17g (compared bit for bit)", name(op),
                        double(mm), double(ref));
          fail(buf);
        }
        break;
      }
      case Op::mean: {
        const double ref = double(ref_sum) / double(count);
        if (std::isnan(ref) ? !std::isnan(mean) : !(mean == ref)) {
          std::snprintf(buf, sizeof buf, "wrong mean: got %.17g, expected %.17g", mean, ref);
          fail(buf);
        }
        break;
      }
    }
  }
}

// Fills the elements a view touches with fuzzed values; every other element keeps the poison.
template <class T>
TANDEM_FUZZ_BULK void fill_touched(std::vector<T>& v, std::size_t first, std::size_t count, std::size_t stride,
                                   std::uint64_t seed, int special_per_256) {
  for (std::size_t i = 0; i < count; ++i) v[first + i * stride] = fuzz_value<T>(seed, special_per_256);
}

// Host memory: std::span, StridedView; backend memory: Buffer, BufferView.
enum class Input { span, strided, buffer, buffer_view };

template <class T>
void fuzz_reduce(FuzzedDataProvider& in) {
  const Engine& eng = engine();
  const Op op = Op(in.ConsumeIntegralInRange<int>(0, 3));
  const Input kind = Input(in.ConsumeIntegralInRange<int>(0, 3));
  const std::string kernel = fuzz_kernel(in, eng.reduce_kernels(), eng.matmul_kernels());
  const bool deterministic = in.ConsumeIntegralInRange<int>(0, 3) == 0;
  // Deterministic mode runs its own kernel: it needs kernel == "auto".
  const bool kernel_ok = kernel_valid(kernel, eng.reduce_kernels()) && (!deterministic || kernel == "auto");
  const std::uint64_t seed = in.ConsumeIntegral<std::uint64_t>();
  const int special = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int>(1, 40);
  const tandem::ReduceOptions opts{kernel, deterministic};
  constexpr std::size_t limit = limit_of<T>();

  tandem::sum_result_t<T> sum{};
  T mm{};
  double mean = 0;
  // Calls op on a view of any kind (the API's four overloads have the same shape).
  auto call = [&](auto view) {
    switch (op) {
      case Op::sum:
        sum = eng.sum(view, opts);
        break;
      case Op::min:
        mm = eng.min(view, opts);
        break;
      case Op::max:
        mm = eng.max(view, opts);
        break;
      case Op::mean:
        mean = eng.mean(view, opts);
        break;
    }
  };
  std::string what = std::string(name(op)) + "<" + type_name<T>() + ">(";

  if (kind == Input::span || kind == Input::strided) {
    const std::size_t count = fuzz_size<T>(in);
    const std::size_t stride = kind == Input::span ? 1 : fuzz_size<T>(in);
    const u128 ext = span_of(count, stride);
    // The contract: stride >= 1 and an extent whose bytes fit in ptrdiff_t, unless count is 0.
    const bool shape_ok = count == 0 || (stride >= 1 && ext <= limit);
    // Memory is valid only for shapes the harness can allocate; a larger valid shape gets null data.
    std::vector<T> data;
    const T* ptr = nullptr;
    const int ptr_mode = in.ConsumeIntegralInRange<int>(0, 5);  // 0: null on purpose
    if (shape_ok && count > 0 && ext <= kMaxElems) {
      data.assign(std::size_t(ext), poison<T>());
      fill_touched(data, 0, count, stride, seed, special);
      if (ptr_mode != 0) ptr = data.data();
    } else if (!shape_ok || count == 0) {
      data.assign(1, poison<T>());  // a shape the API must reject (or an empty one): any pointer will do
      if (ptr_mode != 0) ptr = data.data();
    }
    const std::vector<T> before = data;
    bool valid = kernel_ok && shape_ok && (count == 0 || ptr != nullptr);
    if (count == 0 && op != Op::sum) valid = false;  // min, max, mean of an empty input throw
    what += (kind == Input::span ? "span{" : "StridedView{") + std::string(ptr ? "data" : "nullptr") + ", count " +
            str(count) + (kind == Input::strided ? ", stride " + str(stride) : "") + "}, kernel " + quoted(kernel) +
            (deterministic ? ", deterministic" : "") + ")";
    begin_call(what);
    const bool returned = run(valid ? Expect::ok : Expect::error, [&] {
      if (kind == Input::span)
        call(std::span<const T>(ptr, count));
      else
        call(tandem::StridedView<T>{ptr, count, stride});
    });
    if (returned) {
      if (count == 0) {
        if (sum != 0) fail("the sum of an empty input is not 0");
      } else {
        check_reduce<T>(op, ptr, count, stride, sum, mm, mean);
      }
    }
    if (!same_bits(data, before.data())) fail("a reduction wrote to its input");
    return;
  }

  // Buffers: one of this engine (size <= kMaxElems), of another engine, empty, or default-constructed.
  const int buffer_mode = in.ConsumeIntegralInRange<int>(0, 7);
  std::size_t size = 0;
  if (buffer_mode <= 5) size = std::min(fuzz_size<T>(in), kMaxElems);
  std::vector<T> host(size, poison<T>());
  std::size_t offset = 0, count = size, stride = 1;
  if (kind == Input::buffer_view) {
    offset = fuzz_size<T>(in);
    count = fuzz_size<T>(in);
    stride = fuzz_size<T>(in);
    if (in.ConsumeBool() && size > 0) {  // a view that fits, so that most of these calls do run
      offset %= size;
      stride = stride % 9 + 1;
      count = (size - offset - 1) / stride + 1 - std::min<std::size_t>(count % 4, (size - offset - 1) / stride);
    }
  }
  // Fill what the view touches when it lies inside the buffer; leave the rest poisoned.
  const u128 ext = span_of(count, stride);
  const bool inside = count == 0 || (stride >= 1 && ext <= limit && offset <= size && ext <= size - offset);
  if (inside && count > 0) fill_touched(host, offset, count, stride, seed, special);
  Buffer<T> buf;
  const Buffer<T>* bp = &buf;
  const char* buf_desc = "Buffer";
  switch (buffer_mode) {
    case 5:
      buf_desc = "Buffer of another engine";
      buf = other_engine().upload<T>(host);
      break;
    case 6:
      buf_desc = "default Buffer";
      break;
    case 7:
      buf_desc = "nullptr";
      bp = nullptr;
      break;
    default:
      if (in.ConsumeBool()) {
        buf = eng.upload<T>(host);
      } else {
        buf = eng.buffer<T>(size);
        buf.upload(host);
      }
  }
  if (kind == Input::buffer && bp == nullptr) bp = &buf;  // a Buffer& cannot be null
  bool valid = kernel_ok;
  if (count > 0) {
    valid = valid && buffer_mode <= 4 && inside;
  } else if (op != Op::sum) {
    valid = false;
  }
  what += std::string(kind == Input::buffer ? "" : "BufferView{") + buf_desc + " of " + str(size) +
          (kind == Input::buffer_view
               ? ", offset " + str(offset) + ", count " + str(count) + ", stride " + str(stride) + "}"
               : "") +
          ", kernel " + quoted(kernel) + (deterministic ? ", deterministic" : "") + ")";
  begin_call(what);
  const bool returned = run(valid ? Expect::ok : Expect::error, [&] {
    if (kind == Input::buffer)
      call(*bp);
    else
      call(tandem::BufferView<T>{bp, offset, count, stride});
  });
  if (returned) {
    if (count == 0) {
      if (sum != 0) fail("the sum of an empty input is not 0");
    } else {
      check_reduce<T>(op, host.data() + offset, count, stride, sum, mm, mean);
    }
  }
  if (bp && bp->size() > 0) {
    const std::vector<T> after = bp->to_vector();
    if (!same_bits(after, host.data())) fail("a reduction changed its buffer");
  }
}

// ---- matmul --------------------------------------------------------------------------------------

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

// C = A * B with double accumulation: exact for the small integers the harness uses, and NaN exactly
// where the product has a NaN, an inf * 0 or inf - inf.
template <class T>
TANDEM_FUZZ_BULK void check_product(const T* a, const T* b, const T* c, const Shape& sa, const Shape& sb,
                                    const Shape& sc) {
  for (std::size_t i = 0; i < sc.rows; ++i)
    for (std::size_t j = 0; j < sc.cols; ++j) {
      double r = 0;
      for (std::size_t p = 0; p < sa.cols; ++p) r += double(a[i * sa.ld + p]) * double(b[p * sb.ld + j]);
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
TANDEM_FUZZ_BULK void check_untouched(const std::vector<std::vector<T>>& before,
                                      const std::vector<std::vector<T>>& after, bool returned, const Place& pc,
                                      const Shape& sc) {
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

template <class T>
void fuzz_matmul(FuzzedDataProvider& in) {
  const Engine& eng = engine();
  const bool buffers = in.ConsumeBool();
  const std::string kernel = fuzz_kernel(in, eng.matmul_kernels(), eng.reduce_kernels());
  const bool deterministic = in.ConsumeIntegralInRange<int>(0, 3) == 0;
  const bool kernel_ok = kernel_valid(kernel, eng.matmul_kernels()) && (!deterministic || kernel == "auto");
  const tandem::MatmulOptions opts{kernel, deterministic};
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
  Shape sa{m, k, 0}, sb{k, n, 0}, sc{m, n, 0};
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {  // a mismatched shape now and then
    Shape* s[] = {&sa, &sb, &sc};
    Shape& t = *s[in.ConsumeIntegralInRange<int>(0, 2)];
    (in.ConsumeBool() ? t.rows : t.cols) = fuzz_dim<T>(in);
  }
  sa.ld = fuzz_ld<T>(in, sa.cols);
  sb.ld = fuzz_ld<T>(in, sb.cols);
  sc.ld = fuzz_ld<T>(in, sc.cols);
  const bool shapes_match = sa.cols == sb.rows && sc.rows == sa.rows && sc.cols == sb.cols;
  const Shape* shapes[] = {&sa, &sb, &sc};
  u128 ext[3];
  bool shape_ok[3];
  for (int i = 0; i < 3; ++i) {
    ext[i] = extent_of(*shapes[i]);
    shape_ok[i] = shape_valid<T>(*shapes[i]);
  }
  const u128 work = u128(sa.rows) * sa.cols * sb.cols;
  if (avoid("matrix-extent") && std::max({sa.cols, sb.cols, sc.cols}) > limit_of<T>()) return;
  if (avoid("deterministic-k0") && deterministic && sa.cols == 0 && sc.rows > 0 && sc.cols > 0) return;

  // Arenas: 0 holds A, 1 holds B, 2 holds C, unless the layout shares one among several matrices.
  // Offsets inside a shared arena decide whether C overlaps A or B (the API must then throw).
  const int layout = in.ConsumeIntegralInRange<int>(0, 3);  // 0 separate, 1 B in A's arena, 2 C in A's, 3 all in one
  Place place[3];
  std::vector<std::vector<T>> arena(3);
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
  for (int i = 0; i < 2; ++i) {  // A's and B's elements; C's stay poisoned
    const Place& p = place[i];
    const Shape& s = *shapes[i];
    if (null_data[i] || !shape_ok[i] || ext[i] == 0 || ext[i] > kMaxMatElems ||
        p.offset + ext[i] > arena[p.arena].size())
      continue;
    for (std::size_t r = 0; r < s.rows; ++r)
      for (std::size_t c = 0; c < s.cols; ++c) arena[p.arena][p.offset + r * s.ld + c] = fuzz_value<T>(rng, special);
  }
  const std::vector<std::vector<T>> before = arena;

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
    what += "kernel " + quoted(kernel) + (deterministic ? ", deterministic" : "") + ")";
    begin_call(what);
    const bool returned = run(valid ? Expect::ok : Expect::error, [&] {
      eng.matmul<T>(tandem::MatrixView<const T>{ptr[0], sa.rows, sa.cols, sa.ld},
                    tandem::MatrixView<const T>{ptr[1], sb.rows, sb.cols, sb.ld},
                    tandem::MatrixView<T>{const_cast<T*>(ptr[2]), sc.rows, sc.cols, sc.ld}, opts);
    });
    if (returned && ext[2] > 0) check_product<T>(ptr[0], ptr[1], ptr[2], sa, sb, sc);
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
  what += "kernel " + quoted(kernel) + (deterministic ? ", deterministic" : "") + ")";
  if (valid && work > kMaxMatWork) return;  // valid but too slow for a fuzz input
  begin_call(what);
  const bool returned = run(valid ? Expect::ok : Expect::error, [&] { eng.matmul<T>(bm[0], bm[1], bm[2], opts); });
  std::vector<std::vector<T>> after(3);
  for (int a = 0; a < 3; ++a) after[a] = bufs[a].size() ? bufs[a].to_vector() : arena[a];
  if (returned && ext[2] > 0) {
    // (A or B may be empty, k == 0, at any offset: only point into arenas that hold them.)
    const T* at[3];
    for (int i = 0; i < 3; ++i) at[i] = ext[i] > 0 ? after[place[i].arena].data() + place[i].offset : nullptr;
    check_product<T>(at[0], at[1], at[2], sa, sb, sc);
  }
  check_untouched<T>(before, after, returned, place[2], sc);
}

// ---- buffers -------------------------------------------------------------------------------------

template <class T>
void fuzz_buffer(FuzzedDataProvider& in) {
  const Engine& eng = engine();
  constexpr std::size_t limit = limit_of<T>();
  std::uint64_t rng = in.ConsumeIntegral<std::uint64_t>();
  Buffer<T> buf;
  std::vector<T> mirror;  // what the buffer holds
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: {  // buffer(count): small counts succeed; counts past the address space throw
      std::size_t count = fuzz_size<T>(in);
      Expect expect = Expect::ok;
      if (count > limit) {
        expect = Expect::error;
      } else if (count > kMaxElems) {
        // Counts the machine cannot back must throw tandem::Error (allocation failure); ones it might
        // back are not tried, so a run never holds more memory than -rss_limit_mb allows.
        if (count < (std::size_t(1) << 41) / sizeof(T))
          count = count % (kMaxElems + 1);
        else
          expect = Expect::either;
      }
      begin_call(std::string("buffer<") + type_name<T>() + ">(" + str(count) + ")");
      if (!run(expect, [&] { buf = eng.buffer<T>(count); })) return;
      if (buf.size() != count) fail("buffer(" + str(count) + ").size() is " + str(buf.size()));
      if (count > kMaxElems) return;  // never touched: it only exists virtually
      mirror.resize(count);
      for (auto& v : mirror) v = fuzz_value<T>(rng, 8);
      begin_call("Buffer::upload(all " + str(count) + " elements)");
      run(Expect::ok, [&] { buf.upload(mirror); });
      break;
    }
    case 1: {  // upload(span)
      const std::size_t count = in.ConsumeIntegralInRange<std::size_t>(0, kMaxHostCopy);
      mirror.resize(count);
      for (auto& v : mirror) v = fuzz_value<T>(rng, 8);
      const bool null = in.ConsumeIntegralInRange<int>(0, 7) == 0;
      const std::size_t claimed = null ? fuzz_size<T>(in) : count;
      begin_call(std::string("upload<") + type_name<T>() + ">(span{" + (null ? "nullptr" : "data") + ", " +
                 str(claimed) + "})");
      if (!run(null && claimed > 0 ? Expect::error : Expect::ok,
               [&] { buf = eng.upload<T>(std::span<const T>(null ? nullptr : mirror.data(), claimed)); }))
        return;
      if (null) mirror.clear();
      break;
    }
    case 2:
      break;    // a default-constructed Buffer
    default: {  // a buffer of another engine, used only through its own methods
      mirror.resize(in.ConsumeIntegralInRange<std::size_t>(0, 64));
      buf = other_engine().upload<T>(mirror);
    }
  }
  if (buf.size() != mirror.size()) fail("the buffer's size is " + str(buf.size()) + ", expected " + str(mirror.size()));
  begin_call("Buffer::backend()");
  if (run(buf.allocation() ? Expect::ok : Expect::error, [&] { (void)buf.backend(); }) && buf.backend() != Backend::cpu)
    fail("a CPU engine's buffer does not say Backend::cpu");

  // A few transfers at fuzzed offsets; each must stay inside the buffer or throw, and change nothing then.
  for (int step = in.ConsumeIntegralInRange<int>(0, 4); step > 0 && in.remaining_bytes() > 0; --step) {
    const bool up = in.ConsumeBool();
    const std::size_t offset = fuzz_size<T>(in);
    const std::size_t count = in.ConsumeIntegralInRange<std::size_t>(0, kMaxHostCopy);
    const bool inside = offset <= mirror.size() && count <= mirror.size() - offset;
    std::vector<T> host(count);
    for (auto& v : host) v = fuzz_value<T>(rng, 8);
    const std::vector<T> host_before = host;
    // A span with null data and a size is an error, as Engine::upload says.
    const bool null = count > 0 && !avoid("null-host-span") && in.ConsumeIntegralInRange<int>(0, 7) == 0;
    T* const ptr = null ? nullptr : host.data();
    begin_call(std::string(up ? "Buffer::upload" : "Buffer::download") + "(span{" + (null ? "nullptr" : "data") + ", " +
               str(count) + "}, offset " + str(offset) + ") on a buffer of " + str(mirror.size()));
    const bool returned = run(inside && !null ? Expect::ok : Expect::error, [&] {
      if (up)
        buf.upload(std::span<const T>(ptr, count), offset);
      else
        buf.download(std::span<T>(ptr, count), offset);
    });
    if (returned && up) std::copy(host.begin(), host.end(), mirror.begin() + std::ptrdiff_t(offset));
    if (returned && !up && !same_bits(host, mirror.data() + offset))
      fail("download returned other values than were uploaded");
    if (!returned && !same_bits(host, host_before.data())) fail("a download that threw wrote to its host span");
  }
  begin_call("Buffer::to_vector()");
  const std::vector<T> all = buf.to_vector();
  if (all.size() != mirror.size() || !same_bits(all, mirror.data())) fail("to_vector() differs from what was uploaded");
}

// ---- engine selection ----------------------------------------------------------------------------

void fuzz_engine(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) {
    const int b = in.ConsumeIntegralInRange<int>(0, 3);  // 2 and 3 are not enumerators
    begin_call("Engine(Backend(" + std::to_string(b) + "))");
    const bool ok = b == 0 || cuda_usable();
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
  const bool ok = is_auto || as_set == "cpu" || (as_set == "cuda" && cuda_usable());
  Backend got = Backend::cpu;
  if (run(ok ? Expect::ok : Expect::error, [&] { got = Engine().backend(); })) {
    const Backend want = as_set == "cpu"    ? Backend::cpu
                         : as_set == "cuda" ? Backend::cuda
                                            : tandem::auto_backend().backend;
    if (got != want) fail("Engine() picked another backend than TANDEM_BACKEND names");
  }
  if (old)
    setenv("TANDEM_BACKEND", saved.c_str(), 1);
  else
    unsetenv("TANDEM_BACKEND");
}

template <class T>
void fuzz_typed(FuzzedDataProvider& in, int what) {
  if (what <= 3)
    fuzz_reduce<T>(in);
  else if (what <= 5)
    fuzz_buffer<T>(in);
  else if constexpr (tandem::is_matmul_type_v<T>)
    fuzz_matmul<T>(in);
  else
    fuzz_reduce<T>(in);
}

}  // namespace

// Out-of-memory is an error the API reports (tandem::Error), so an allocation the sanitizer cannot
// serve must return null, as malloc does, instead of ending the process.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  try {
    // Up to four calls per input, so that one input can mix operations on the same engine.
    for (int calls = in.ConsumeIntegralInRange<int>(1, 4); calls > 0 && in.remaining_bytes() > 0; --calls) {
      const int what = in.ConsumeIntegralInRange<int>(0, 8);  // 0-3 reduce, 4-5 buffers, 6-7 matmul, 8 engine
      if (what == 8) {
        fuzz_engine(in);
        continue;
      }
      switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
          fuzz_typed<float>(in, what);
          break;
        case 1:
          fuzz_typed<double>(in, what);
          break;
        case 2:
          fuzz_typed<std::int32_t>(in, what);
          break;
        default:
          fuzz_typed<std::int64_t>(in, what);
          break;
      }
    }
  } catch (const tandem::Error& e) {
    fail(std::string("tandem::Error escaped the harness: ") + e.what());
  } catch (const std::exception& e) {
    fail(std::string("an exception other than tandem::Error: ") + typeid(e).name() + ": " + e.what());
  } catch (...) {
    fail("an exception other than tandem::Error (not a std::exception)");
  }
  return 0;
}
