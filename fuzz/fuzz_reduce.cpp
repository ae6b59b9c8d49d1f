// fuzz_api's reductions: every op of the table over std::span, StridedView, Buffer and BufferView,
// checked against the test-support references (verify/verdict.hpp).
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
#include "verify/reference.hpp"
#include "verify/verdict.hpp"

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

// Checks op O's result over x[0], x[stride], ... (count >= 1) against the test-support reference of the
// elements as their compute type (16-bit inputs as the floats they convert to): the fuzzed values are
// small integers and specials, so every sum is exact and compared bit for bit (verify/verdict.hpp).
template <Op O, class T>
TANDEM_FUZZ_BULK void check_op(const tandem::op_result_t<O, T>& got, const T* x, std::size_t count,
                               std::size_t stride) {
  using C = tandem::compute_t<T>;
  tandem_verify::ReduceReference<C> ref;
  for (std::size_t i = 0; i < count; ++i) ref.add(C(x[i * stride]));
  const tandem_verify::Judgement j = tandem_verify::judge_op<O, T>(got, ref, /*exact=*/true);
  if (!j.ok) fail(std::string("wrong ") + name(O) + ": got " + tandem_verify::show(got) + ", expected " + j.expected);
}

// Fills the elements a view touches with fuzzed values; every other element keeps the poison.
template <class T>
TANDEM_FUZZ_BULK void fill_touched(tandem_verify::Vector<T>& v, std::size_t first, std::size_t count,
                                   std::size_t stride, std::uint64_t seed, int special_per_256) {
  for (std::size_t i = 0; i < count; ++i) v[first + i * stride] = fuzz_value<T>(seed, special_per_256);
}

// Host memory: std::span, StridedView; backend memory: Buffer, BufferView.
enum class Input { span, strided, buffer, buffer_view };

// An initial value: one the result type holds, or not (a fraction, out of range, NaN), or a 64-bit extreme.
long double fuzz_initial(FuzzedDataProvider& in) {
  constexpr long double kValues[] = {2.5L,
                                     1e30L,
                                     -0.0L,
                                     (long double)std::numeric_limits<std::int64_t>::max(),
                                     (long double)std::numeric_limits<std::uint64_t>::max(),
                                     -1e19L,
                                     std::numeric_limits<long double>::quiet_NaN()};
  const int pick = in.ConsumeIntegralInRange<int>(0, 13);
  return pick < 7 ? (long double)(pick - 3) : kValues[pick - 7];
}

// ReduceOptions::where and initial on a host input of `count` elements (`valid`: the call is valid without
// them): a mask of count entries, one of another size, a null one with entries, and initial or not. Only the
// contract is checked here (a tandem::Error exactly where the call is invalid, no crash, no write to the input);
// the tests and the conformance matrix check the values. Returns false (consuming nothing more) for a plain
// call, which the caller checks itself. call(options, reduce) calls reduce(view, options) on the fuzzed view.
template <class T, class Call>
bool fuzz_masks(FuzzedDataProvider& in, const Engine& eng, Op op, bool valid, std::size_t count, std::uint64_t seed,
                const tandem::ReduceOptions& opts, std::string what, Call&& call) {
  const int mask_mode =
      in.ConsumeIntegralInRange<int>(0, 7);  // 0 .. 4: none; 5: count entries; 6: another size; 7: null
  const bool with_initial = in.ConsumeIntegralInRange<int>(0, 3) == 3;  // (an exhausted input: 0, plain)
  tandem::ReduceOptions o = opts;
  tandem_verify::Vector<bool> mask;
  std::size_t kept = count;
  if (mask_mode == 5 && count <= kMaxElems) {
    mask.assign(count, false);
    kept = 0;
    for (std::size_t i = 0; i < count; ++i) kept += mask[i] = ((seed >> (i % 61)) & 1) != 0;
    o.where = std::span<const bool>(mask.data(), count);
  } else if (mask_mode == 6) {
    mask.assign(count < kMaxElems ? count + 1 : kMaxElems - 1, true);  // (never count entries)
    o.where = std::span<const bool>(mask.data(), mask.size());
  } else if (mask_mode == 7) {
    o.where = std::span<const bool>(static_cast<const bool*>(nullptr), count + 1);
  }
  const bool masked = o.where.data() != nullptr || !o.where.empty();
  if (with_initial) o.initial = fuzz_initial(in);
  if (!masked && !with_initial) return false;
  tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
    using R = tandem::op_result_t<O, T>;
    constexpr tandem::ResultKind kind = tandem::info(O).result;
    bool ok = valid && kind != tandem::ResultKind::index && !(kind == tandem::ResultKind::mean && with_initial) &&
              !(kind == tandem::ResultKind::value && masked && !with_initial) && (!masked || mask_mode == 5);
    if (kind == tandem::ResultKind::mean) ok = ok && kept > 0;  // (empty, or nothing kept)
    if (kind == tandem::ResultKind::value && !with_initial) ok = ok && count > 0;
    if constexpr (std::is_integral_v<R>)
      if (with_initial) {
        const long double v = *o.initial;
        const long double low = std::is_same_v<R, bool> ? 0 : (long double)std::numeric_limits<R>::lowest();
        const long double high = std::is_same_v<R, bool> ? 1 : (long double)std::numeric_limits<R>::max();
        ok = ok && std::trunc(v) == v && v >= low && v <= high;
      }
    begin_call(what + ", where " + (masked ? std::to_string(o.where.size()) + " entries" : "none") +
               (with_initial ? ", initial " + tandem_verify::show(double(*o.initial)) : "") + ")");
    run(ok ? Expect::ok : Expect::error,
        [&] { call(o, [&](auto view, const tandem::ReduceOptions& opt) { (void)eng.reduce<O>(view, opt); }); });
  });
  return true;
}

}  // namespace

template <class T>
void fuzz_reduce_typed(FuzzedDataProvider& in) {
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

  // Calls op on a view of any kind (the API's overloads have the same shape), then checks a returned
  // result against the reference over `checked` (count elements, stride apart): an empty input's result
  // is 0 or 1 (EmptyRule::zero, one; the others must have thrown).
  auto call_and_check = [&](Expect expect, auto view, const T* checked, std::size_t count, std::size_t stride) {
    tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      tandem::op_result_t<O, T> got{};
      if (!run(expect, [&] { got = eng.reduce<O>(view, opts); })) return;
      if (count > 0) return check_op<O, T>(got, checked, count, stride);
      using R = tandem::op_result_t<O, T>;
      const bool one = tandem::info(O).empty == tandem::EmptyRule::one;
      if (!same_bits(got, one ? R(1) : R{}))
        fail(std::string("the ") + name(O) + " of an empty input is not " + (one ? "1" : "0"));
    });
  };
  std::string what = std::string(name(op)) + "<" + type_name<T>() + ">(";

  if (kind == Input::span || kind == Input::strided) {
    std::size_t count = fuzz_size<T>(in);
    const std::size_t stride = kind == Input::span ? 1 : fuzz_size<T>(in);
    if (stride == 0) count = std::min(count, kMaxElems);  // (valid at any count: one element read count times)
    const u128 ext = span_of(count, stride);
    // The contract: an extent whose bytes fit in ptrdiff_t, unless count is 0 (stride 0: one element,
    // read count times).
    const bool shape_ok = count == 0 || ext <= limit;
    // Memory is valid only for shapes the harness can allocate; a larger valid shape gets null data.
    tandem_verify::Vector<T> data;
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
    const tandem_verify::Vector<T> before = data;
    bool valid = kernel_ok && shape_ok && (count == 0 || ptr != nullptr);
    if (count == 0 && tandem::info(op).empty == tandem::EmptyRule::error) valid = false;
    what += (kind == Input::span ? "span{" : "StridedView{") + std::string(ptr ? "data" : "nullptr") + ", count " +
            str(count) + (kind == Input::strided ? ", stride " + str(stride) : "") + "}, kernel " + quoted(kernel) +
            (deterministic ? ", deterministic" : "");
    if (fuzz_masks<T>(in, eng, op, kernel_ok && shape_ok && (count == 0 || ptr != nullptr), count, seed, opts, what,
                      [&](const tandem::ReduceOptions& o, auto reduce) {
                        if (kind == Input::span) return reduce(std::span<const T>(ptr, count), o);
                        return reduce(tandem::StridedView<T>{ptr, count, stride}, o);
                      })) {
      if (!same_bits(data, before.data())) fail("a masked reduction wrote to its input");
      return;
    }
    what += ")";
    begin_call(what);
    const Expect expect = valid ? Expect::ok : Expect::error;
    if (kind == Input::span)
      call_and_check(expect, std::span<const T>(ptr, count), ptr, count, 1);
    else
      call_and_check(expect, tandem::StridedView<T>{ptr, count, stride}, ptr, count, stride);
    if (!same_bits(data, before.data())) fail("a reduction wrote to its input");
    return;
  }

  // Buffers: one of this engine (size <= kMaxElems), of another engine, empty, or default-constructed.
  const int buffer_mode = in.ConsumeIntegralInRange<int>(0, 7);
  std::size_t size = 0;
  if (buffer_mode <= 5) size = std::min(fuzz_size<T>(in), kMaxElems);
  tandem_verify::Vector<T> host(size, poison<T>());
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
  if (stride == 0) count = std::min(count, kMaxElems);  // (valid at any count: one element read count times)
  // Fill what the view touches when it lies inside the buffer; leave the rest poisoned.
  const u128 ext = span_of(count, stride);
  const bool inside = count == 0 || (ext <= limit && offset <= size && ext <= size - offset);
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
  } else if (tandem::info(op).empty == tandem::EmptyRule::error) {
    valid = false;
  }
  what += std::string(kind == Input::buffer ? "" : "BufferView{") + buf_desc + " of " + str(size) +
          (kind == Input::buffer_view
               ? ", offset " + str(offset) + ", count " + str(count) + ", stride " + str(stride) + "}"
               : "") +
          ", kernel " + quoted(kernel) + (deterministic ? ", deterministic" : "") + ")";
  begin_call(what);
  const Expect expect = valid ? Expect::ok : Expect::error;
  const T* checked = inside && count > 0 ? host.data() + offset : nullptr;  // (only a valid call is checked)
  if (kind == Input::buffer)
    call_and_check(expect, *bp, checked, count, stride);
  else
    call_and_check(expect, tandem::BufferView<T>{bp, offset, count, stride}, checked, count, stride);
  if (bp && bp->size() > 0) {
    const tandem_verify::Vector<T> after = bp->to_vector();
    if (!same_bits(after, host.data())) fail("a reduction changed its buffer");
  }
}

void fuzz_reduce(tandem::Dtype d, FuzzedDataProvider& in) {
  tandem_verify::with_dtype(d, [&]<class T>() { fuzz_reduce_typed<T>(in); });
}

}  // namespace tandem_fuzz
