// Vector<T>: a host array of elements of type T, for the backends' scratch arrays and the data of tests,
// fuzzers, the CLI and the benchmarks (tandem_verify::Vector). std::vector<T> for every element type but bool, whose
// std::vector packs bits and has no data(), so no std::span<const bool>: for bool, BoolVector, the same interface over
// one bool per byte.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace tandem::detail {

// A std::vector<bool> that is an array of bool (one byte each, as the element type bool is): the members
// of std::vector the tests use, with bool* iterators.
class BoolVector {
 public:
  using value_type = bool;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = bool&;
  using const_reference = const bool&;
  using pointer = bool*;
  using const_pointer = const bool*;
  using iterator = bool*;
  using const_iterator = const bool*;

  BoolVector() = default;
  explicit BoolVector(std::size_t n, bool v = false) { assign(n, v); }
  BoolVector(std::initializer_list<bool> v) { assign(v.begin(), v.end()); }
  template <std::input_iterator It>
  BoolVector(It first, It last) {
    assign(first, last);
  }
  BoolVector(const BoolVector& o) { assign(o.begin(), o.end()); }
  BoolVector(BoolVector&& o) noexcept
      : data_(std::move(o.data_)), size_(std::exchange(o.size_, 0)), cap_(std::exchange(o.cap_, 0)) {}
  BoolVector& operator=(const BoolVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  BoolVector& operator=(BoolVector&& o) noexcept {
    data_ = std::move(o.data_), size_ = std::exchange(o.size_, 0), cap_ = std::exchange(o.cap_, 0);
    return *this;
  }

  void assign(std::size_t n, bool v) {
    resize(0);
    resize(n, v);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    resize(0);
    for (; first != last; ++first) push_back(bool(*first));
  }
  void reserve(std::size_t n) {
    if (n <= cap_) return;
    auto p = std::make_unique_for_overwrite<bool[]>(n);
    std::copy_n(data_.get(), size_, p.get());
    data_ = std::move(p), cap_ = n;
  }
  void resize(std::size_t n, bool v = false) {
    reserve(n);
    std::fill(data_.get() + std::min(n, size_), data_.get() + n, v);
    size_ = n;
  }
  void push_back(bool v) {
    if (size_ == cap_) reserve(std::max<std::size_t>(16, 2 * cap_));
    data_[size_++] = v;
  }
  void clear() { size_ = 0; }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool* data() { return data_.get(); }
  const bool* data() const { return data_.get(); }
  bool& operator[](std::size_t i) { return data_[i]; }
  const bool& operator[](std::size_t i) const { return data_[i]; }
  bool& at(std::size_t i) { return data_[i]; }
  bool& front() { return data_[0]; }
  bool& back() { return data_[size_ - 1]; }
  const bool& front() const { return data_[0]; }
  const bool& back() const { return data_[size_ - 1]; }
  bool* begin() { return data(); }
  bool* end() { return data() + size_; }
  const bool* begin() const { return data(); }
  const bool* end() const { return data() + size_; }
  const bool* cbegin() const { return data(); }
  const bool* cend() const { return data() + size_; }

  friend bool operator==(const BoolVector& a, const BoolVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::unique_ptr<bool[]> data_;
  std::size_t size_ = 0, cap_ = 0;
};

// A class template (not an alias), so that a function taking a `const Vector<T>&` deduces T; a
// std::vector<T> converts to it.
template <class T>
class Vector : public std::vector<T> {
 public:
  using std::vector<T>::vector;
  Vector() = default;
  Vector(const std::vector<T>& v) : std::vector<T>(v) {}
  Vector(std::vector<T>&& v) : std::vector<T>(std::move(v)) {}
};
template <>
class Vector<bool> : public BoolVector {
 public:
  using BoolVector::BoolVector;
  Vector() = default;
  Vector(const std::vector<bool>& v) : BoolVector(v.begin(), v.end()) {}
};

}  // namespace tandem::detail
