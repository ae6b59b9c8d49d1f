// Buffer<T>: memory owned by one engine's backend (device memory on CUDA, host memory on the CPU).
#pragma once

#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "tandem/export.hpp"
#include "tandem/types.hpp"

namespace tandem {

class Engine;

namespace detail {
class BackendImpl;

// One allocation on a backend; frees itself when the last Buffer that shares it goes away.
class TANDEM_API Allocation {
 public:
  Allocation(std::shared_ptr<BackendImpl> backend, std::size_t bytes);
  // Memory the caller owns (Engine::wrap): never freed here.
  Allocation(std::shared_ptr<BackendImpl> backend, void* data, std::size_t bytes);
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  // One block of a sharded allocation (a Buffer of a multi-device engine): bytes [first, first +
  // mem->bytes()) of the whole, in the memory of the engine's member `member` (EngineOptions::devices
  // order).
  struct Shard {
    std::shared_ptr<Allocation> mem;
    std::size_t first;
    int member;
  };
  // Sharded: `bytes` in blocks (ascending, contiguous, each non-empty); data() is nullptr.
  Allocation(std::shared_ptr<BackendImpl> backend, std::vector<Shard> shards, std::size_t bytes);

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  Backend backend() const noexcept;
  BackendImpl& impl() const noexcept { return *backend_; }
  // The device index of the memory (a CUDA device number; on the CPU the engine's device, 0 by default).
  int device() const noexcept;
  const std::vector<Shard>& shards() const noexcept { return shards_; }
  bool sharded() const noexcept { return !shards_.empty(); }
  void upload(std::size_t offset_bytes, const void* src, std::size_t bytes);
  void download(std::size_t offset_bytes, void* dst, std::size_t bytes) const;

 private:
  std::shared_ptr<BackendImpl> backend_;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool owned_ = true;
  std::vector<Shard> shards_;
};
}  // namespace detail

template <class T>
class Buffer;

// One contiguous block of a Buffer on one device: elements [offset, offset + count) at data.
template <class T>
struct BufferShard {
  int device;  // the CUDA device index (on the CPU: the engine's EngineOptions::device, 0 by default)
  std::size_t offset, count;
  T* data;
};

// count elements of a Buffer starting at offset, stride elements apart (0: the one element count times).
template <class T>
struct BufferView {
  const Buffer<T>* buffer;
  std::size_t offset, count, stride = 1;
};

// A row-major matrix stored in a Buffer from element `offset` on (ld 0, for the per-row / per-column
// reductions: every row is the first one; Buffer::matrix() takes an ld of 0 for cols).
template <class T>
struct BufferMatrix {
  const Buffer<T>* buffer;
  std::size_t offset, rows, cols, ld;
};

// `count` row-major matrices stored in a Buffer, the first from element `offset` on, `stride` elements
// apart (0: one matrix repeated for every entry).
// A second, outer batch dimension as in BatchView: entry (o, e) starts at element
// offset + o * outer_stride + e * stride. Set it with .outer(count, stride).
template <class T>
struct BufferBatch {
  const Buffer<T>* buffer;
  std::size_t offset, rows, cols, ld, count, stride;
  std::size_t outer_count = 1, outer_stride = 0;

  // This batch as each entry of an outer dimension of `n` entries, `step` elements apart (0: a broadcast).
  BufferBatch outer(std::size_t n, std::size_t step) const {
    BufferBatch v = *this;
    v.outer_count = n, v.outer_stride = step;
    return v;
  }
};

// A typed array in a backend's memory. Create it with Engine::buffer<T>(n) or Engine::upload(span).
// Copies share the same memory (like a shared_ptr); the memory lives as long as one copy does.
template <class T>
class Buffer {
 public:
  Buffer() = default;

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  Backend backend() const;
  // The address in the backend's memory space (a device pointer on CUDA). For interop only. nullptr for
  // a Buffer of a multi-device engine, whose elements are spread over its devices: see shards().
  T* data() const noexcept { return mem_ ? static_cast<T*>(mem_->data()) : nullptr; }
  // Where the elements live: one shard for a single-device engine's Buffer; for a multi-device engine
  // (EngineOptions::devices), contiguous blocks in device order, their boundaries on multiples of 4096
  // elements (the canonical chunk), devices without elements left out. Empty for an empty Buffer.
  std::vector<BufferShard<T>> shards() const {
    std::vector<BufferShard<T>> out;
    if (!mem_ || size_ == 0) return out;
    if (!mem_->sharded()) return {{mem_->device(), 0, size_, data()}};
    for (const auto& s : mem_->shards())
      out.push_back({s.mem->device(), s.first / sizeof(T), s.mem->bytes() / sizeof(T), static_cast<T*>(s.mem->data())});
    return out;
  }

  // Copies host data into elements [offset, offset + host.size()).
  void upload(std::span<const T> host, std::size_t offset = 0) {
    check_range(offset, host.size(), "upload", host.data());
    if (!host.empty()) mem_->upload(offset * sizeof(T), host.data(), host.size_bytes());
  }
  // Copies elements [offset, offset + host.size()) into host memory.
  void download(std::span<T> host, std::size_t offset = 0) const {
    check_range(offset, host.size(), "download", host.data());
    if (!host.empty()) mem_->download(offset * sizeof(T), host.data(), host.size_bytes());
  }
  // The elements as a std::vector<T> (for bool, std::vector<bool>, which packs them into bits).
  std::vector<T> to_vector() const {
    if constexpr (std::is_same_v<T, bool>) {
      const auto bytes = std::make_unique_for_overwrite<bool[]>(size_);
      download(std::span<bool>(bytes.get(), size_));
      return std::vector<bool>(bytes.get(), bytes.get() + size_);
    } else {
      std::vector<T> v(size_);
      download(v);
      return v;
    }
  }

  BufferView<T> view() const { return {this, 0, size_, 1}; }
  BufferView<T> view(std::size_t offset, std::size_t count, std::size_t stride = 1) const {
    return {this, offset, count, stride};
  }
  BufferMatrix<T> matrix(std::size_t rows, std::size_t cols, std::size_t ld = 0, std::size_t offset = 0) const {
    return {this, offset, rows, cols, ld == 0 ? cols : ld};
  }

  // count matrices of rows x cols, stride elements apart (packed: rows * cols; 0: one matrix repeated),
  // the first at element offset; ld 0 means cols.
  BufferBatch<T> batch(std::size_t rows, std::size_t cols, std::size_t count, std::size_t stride, std::size_t ld = 0,
                       std::size_t offset = 0) const {
    return {this, offset, rows, cols, ld == 0 ? cols : ld, count, stride};
  }

  const std::shared_ptr<detail::Allocation>& allocation() const noexcept { return mem_; }

 private:
  friend class Engine;
  Buffer(std::shared_ptr<detail::Allocation> mem, std::size_t n) : mem_(std::move(mem)), size_(n) {}

  void check_range(std::size_t offset, std::size_t count, const char* what, const void* host) const {
    if (count > 0 && host == nullptr)
      throw value_error(std::string("tandem::Buffer::") + what + ": the host span is null but has " +
                        std::to_string(count) + " elements");
    if (offset > size_ || count > size_ - offset)
      throw value_error(std::string("tandem::Buffer::") + what + ": elements [" + std::to_string(offset) + ", " +
                        std::to_string(offset) + " + " + std::to_string(count) + ") are outside the buffer of " +
                        std::to_string(size_) + " elements");
  }

  std::shared_ptr<detail::Allocation> mem_;
  std::size_t size_ = 0;
};

template <class T>
Backend Buffer<T>::backend() const {
  if (!mem_) throw Error("tandem::Buffer::backend: this buffer is empty and belongs to no backend");
  return mem_->backend();
}

}  // namespace tandem
