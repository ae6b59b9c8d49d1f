// fuzz_api's reductions: sum, min, max and mean over std::span, StridedView, Buffer and BufferView,
// checked against plain loops.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "harness.hpp"

namespace tandem_fuzz {
namespace {

template <class T>
T canonical_nan() {
  return std::numeric_limits<T>::quiet_NaN();
}

using tandem::Op;  // the one op enum of the project
const char* name(Op op) { return tandem::to_string(op); }

// (count - 1) * stride + 1, the elements a strided view spans, in 128 bits.
u128 span_of(std::size_t count, std::size_t stride) { return count == 0 ? 0 : u128(count - 1) * stride + 1; }

// argmin / argmax by NumPy's rule with a plain loop: the first NaN, else the first extreme (-0.0 below
// +0.0).
template <class T>
TANDEM_FUZZ_BULK std::size_t arg_reference(bool max, const T* x, std::size_t count, std::size_t stride) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const T v = x[i * stride], b = x[best * stride];
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(v)) return i;
    bool better = max ? v > b : v < b;
    if constexpr (std::is_floating_point_v<T>)
      better = better || (v == b && std::signbit(v) != std::signbit(b) && std::signbit(v) != max);
    if (better) best = i;
  }
  return best;
}

// Checks the result of `op` over x[0], x[stride], ... (count >= 1 but for sum) against plain loops.
template <class T>
TANDEM_FUZZ_BULK void check_reduce(Op op, const T* x, std::size_t count, std::size_t stride,
                                   tandem::sum_result_t<T> sum, T mm, double mean, std::size_t index) {
  if (tandem::is_arg(op)) {
    const std::size_t ref = arg_reference(op == Op::argmax, x, count, stride);
    if (index != ref)
      fail(std::string("wrong ") + name(op) + ": got " + std::to_string(index) + ", expected " + std::to_string(ref));
    return;
  }
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
      default:  // argmin / argmax: checked above
        break;
    }
  }
}

// check_reduce for any element type: 16-bit inputs are checked as the floats they convert to (their
// results are floats).
template <class T>
TANDEM_FUZZ_BULK void check_any(Op op, const T* x, std::size_t count, std::size_t stride, tandem::sum_result_t<T> sum,
                                tandem::compute_t<T> mm, double mean, std::size_t index) {
  if constexpr (tandem::is_storage_type_v<T>) {
    std::vector<float> wide((count - 1) * stride + 1);
    for (std::size_t i = 0; i < count; ++i) wide[i * stride] = float(x[i * stride]);
    check_reduce<float>(op, wide.data(), count, stride, sum, mm, mean, index);
  } else {
    check_reduce<T>(op, x, count, stride, sum, mm, mean, index);
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

}  // namespace

template <class T>
void fuzz_reduce(FuzzedDataProvider& in) {
  const Engine& eng = engine();
  const Op op = Op(in.ConsumeIntegralInRange<int>(0, int(std::size(tandem::all_ops)) - 1));
  const Input kind = Input(in.ConsumeIntegralInRange<int>(0, 3));
  const std::string kernel = fuzz_kernel(in, eng.reduce_kernels(), eng.matmul_kernels());
  const bool deterministic = in.ConsumeIntegralInRange<int>(0, 3) == 0;
  // Deterministic mode runs its own kernel: it needs kernel == "auto".
  const bool kernel_ok = kernel_accepts(eng.reduce_kernel_info(), kernel, tandem::dtype_of<T>, &op, deterministic);
  const std::uint64_t seed = in.ConsumeIntegral<std::uint64_t>();
  const int special = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int>(1, 40);
  const tandem::ReduceOptions opts{kernel, deterministic};
  constexpr std::size_t limit = limit_of<T>();

  tandem::sum_result_t<T> sum{};
  tandem::compute_t<T> mm{};
  double mean = 0;
  std::size_t index = 0;
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
      case Op::argmin:
        index = eng.argmin(view, opts);
        break;
      case Op::argmax:
        index = eng.argmax(view, opts);
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
        check_any<T>(op, ptr, count, stride, sum, mm, mean, index);
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
      check_any<T>(op, host.data() + offset, count, stride, sum, mm, mean, index);
    }
  }
  if (bp && bp->size() > 0) {
    const std::vector<T> after = bp->to_vector();
    if (!same_bits(after, host.data())) fail("a reduction changed its buffer");
  }
}

template void fuzz_reduce<std::int32_t>(FuzzedDataProvider&);
template void fuzz_reduce<std::int64_t>(FuzzedDataProvider&);
template void fuzz_reduce<float>(FuzzedDataProvider&);
template void fuzz_reduce<double>(FuzzedDataProvider&);
template void fuzz_reduce<tandem::bfloat16>(FuzzedDataProvider&);
template void fuzz_reduce<tandem::half>(FuzzedDataProvider&);

}  // namespace tandem_fuzz
