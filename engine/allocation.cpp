// detail::Allocation (include/tandem/buffer.hpp): one block of a backend's memory, or a sharded one of a
// multi-device engine (engine/multi_device.hpp) whose copies go to every shard at once.
#include <vector>

#include "common/backend.hpp"
#include "engine/extent.hpp"
#include "engine/parallel.hpp"
#include "tandem/buffer.hpp"

namespace tandem::detail {

namespace {

// Runs copy(shard, shard_offset, caller_offset, bytes) for the shards that bytes [offset, offset + bytes)
// touch, one thread per shard (each device's link at once; run_all).
template <class F>
void each_shard(const std::vector<Allocation::Shard>& shards, std::size_t offset, std::size_t bytes, F&& copy) {
  std::vector<std::size_t> touched;
  for (std::size_t i = 0; i < shards.size(); ++i)
    if (const auto [lo, hi] = bytes_in(shards[i], offset, bytes); lo < hi) touched.push_back(i);
  auto run = [&](std::size_t i) {
    const Allocation::Shard& s = shards[i];
    const auto [lo, hi] = bytes_in(s, offset, bytes);
    copy(*s.mem, lo - s.first, lo - offset, hi - lo);
  };
  run_all(touched.size(), [&](std::size_t i) { run(touched[i]); });  // (one shard: no thread)
}

}  // namespace

Allocation::Allocation(std::shared_ptr<BackendImpl> backend, std::size_t bytes)
    : backend_(std::move(backend)), bytes_(bytes) {
  data_ = bytes ? backend_->allocate(bytes) : nullptr;
}
Allocation::Allocation(std::shared_ptr<BackendImpl> backend, void* data, std::size_t bytes)
    : backend_(std::move(backend)), data_(data), bytes_(bytes), owned_(false) {}
Allocation::Allocation(std::shared_ptr<BackendImpl> backend, std::vector<Shard> shards, std::size_t bytes)
    : backend_(std::move(backend)), bytes_(bytes), owned_(false), shards_(std::move(shards)) {}
Allocation::~Allocation() {
  if (data_ && owned_) backend_->deallocate(data_);
}
Backend Allocation::backend() const noexcept { return backend_->kind(); }
int Allocation::device() const noexcept { return backend_->device_index(); }

void Allocation::upload(std::size_t offset, const void* src, std::size_t bytes) {
  if (!sharded()) return backend_->copy_to_backend(static_cast<char*>(data_) + offset, src, bytes);
  each_shard(shards_, offset, bytes, [&](Allocation& shard, std::size_t at, std::size_t from, std::size_t n) {
    shard.upload(at, static_cast<const char*>(src) + from, n);
  });
}
void Allocation::download(std::size_t offset, void* dst, std::size_t bytes) const {
  if (!sharded()) return backend_->copy_to_host(dst, static_cast<const char*>(data_) + offset, bytes);
  each_shard(shards_, offset, bytes, [&](Allocation& shard, std::size_t at, std::size_t to, std::size_t n) {
    shard.download(at, static_cast<char*>(dst) + to, n);
  });
}

}  // namespace tandem::detail
