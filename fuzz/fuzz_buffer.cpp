// fuzz_api's buffers: buffer(count), upload(span), Buffer::upload/download at fuzzed offsets, to_vector
// and backend, on buffers of this engine, of another engine, and default-constructed ones.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness.hpp"

namespace tandem_fuzz {

template <class T>
void fuzz_buffer_typed(FuzzedDataProvider& in) {
  const Engine& eng = engine();
  constexpr std::size_t limit = limit_of<T>();
  std::uint64_t rng = in.ConsumeIntegral<std::uint64_t>();
  Buffer<T> buf;
  tandem_verify::Vector<T> mirror;  // what the buffer holds
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
    tandem_verify::Vector<T> host(count);
    for (auto& v : host) v = fuzz_value<T>(rng, 8);
    const tandem_verify::Vector<T> host_before = host;
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
  const tandem_verify::Vector<T> all = buf.to_vector();
  if (all.size() != mirror.size() || !same_bits(all, mirror.data())) fail("to_vector() differs from what was uploaded");
}

void fuzz_buffer(tandem::Dtype d, FuzzedDataProvider& in) {
  tandem_verify::with_dtype(d, [&]<class T>() { fuzz_buffer_typed<T>(in); });
}

}  // namespace tandem_fuzz
