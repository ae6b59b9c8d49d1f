// The engine front end: backend selection, validation (once, here) and dispatch.
#include "tandem/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "engine/backend.hpp"
#include "engine/registry.hpp"

namespace tandem {

const char* to_string(Backend b) noexcept { return b == Backend::cpu ? "cpu" : "cuda"; }

namespace detail {

const char* to_string(Dtype d) noexcept {
  switch (d) {
    case Dtype::i32: return "int32";
    case Dtype::i64: return "int64";
    case Dtype::f32: return "float32";
    case Dtype::f64: return "float64";
  }
  return "?";
}
const char* to_string(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
  }
  return "?";
}
std::size_t size_of(Dtype d) noexcept { return (d == Dtype::i32 || d == Dtype::f32) ? 4 : 8; }

Allocation::Allocation(std::shared_ptr<BackendImpl> backend, std::size_t bytes)
    : backend_(std::move(backend)), bytes_(bytes) {
  data_ = bytes ? backend_->allocate(bytes) : nullptr;
}
Allocation::~Allocation() {
  if (data_) backend_->deallocate(data_);
}
Backend Allocation::backend() const noexcept { return backend_->kind(); }
void Allocation::upload(std::size_t offset, const void* src, std::size_t bytes) {
  backend_->copy_to_backend(static_cast<char*>(data_) + offset, src, bytes);
}
void Allocation::download(std::size_t offset, void* dst, std::size_t bytes) const {
  backend_->copy_to_host(dst, static_cast<const char*>(data_) + offset, bytes);
}

}  // namespace detail

namespace {

using detail::Dtype;
using detail::ReduceOp;

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

Backend parse_env_backend() {
  const char* v = std::getenv("TANDEM_BACKEND");
  std::string value = v ? v : "";
  if (value.empty() || value == "auto") return auto_backend().backend;
  if (value == "cpu") return Backend::cpu;
  if (value == "cuda") return Backend::cuda;
  throw Error("TANDEM_BACKEND='" + value + "' is not a backend; allowed values are cpu, cuda and auto " +
              "(or leave it unset for auto)");
}

void check_deterministic(bool deterministic, const std::string& kernel, const char* what) {
  if (deterministic && kernel != "auto")
    throw Error(std::string(what) + ": deterministic mode runs its own canonical-order kernel; leave kernel = \"auto\" "
                "(got '" + kernel + "')");
}

void check_kernel(const std::string& kernel, const std::vector<std::string>& valid, const char* what) {
  if (kernel == "auto" || std::find(valid.begin(), valid.end(), kernel) != valid.end()) return;
  throw Error(std::string("unknown ") + what + " kernel '" + kernel + "'; valid names are auto, " + join(valid));
}

// The number of elements from the first to the last one a strided view touches, or throws.
std::size_t extent(std::size_t count, std::size_t stride, std::size_t elem, const char* what) {
  if (count == 0) return 0;
  if (stride == 0) throw Error(std::string(what) + ": stride must be >= 1 (got 0)");
  const std::size_t limit = std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / elem;
  if (count - 1 > (limit - 1) / stride) throw Error(std::string(what) + ": count * stride overflows the address space");
  return (count - 1) * stride + 1;
}

// Matrix extent in elements: (rows-1)*ld + cols, or throws.
std::size_t matrix_extent(std::size_t rows, std::size_t cols, std::size_t ld, std::size_t elem, const char* name) {
  if (ld < cols)
    throw Error(std::string("matmul: ") + name + ".ld (" + std::to_string(ld) + ") is smaller than " + name +
                ".cols (" + std::to_string(cols) + "); ld must be >= cols");
  if (rows == 0 || cols == 0) return 0;
  const std::size_t limit = std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / elem;
  if (cols > limit || rows - 1 > (limit - cols) / ld)
    throw Error(std::string("matmul: ") + name + " is larger than the address space");
  return (rows - 1) * ld + cols;
}

bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

template <class T>
T canonical(T v) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(v)) return std::numeric_limits<T>::quiet_NaN();
  return v;
}

}  // namespace

// ---- selection -----------------------------------------------------------------------------------

AutoChoice auto_backend() {
  auto cuda = detail::probe(Backend::cuda);
  if (cuda.usable) return {Backend::cuda, "a usable CUDA GPU is present (" + cuda.reason + ")"};
  if (!cuda.compiled_in) return {Backend::cpu, "this build has no CUDA backend (configured with TANDEM_WITH_CUDA=OFF or without nvcc)"};
  return {Backend::cpu, "no usable CUDA GPU: " + cuda.reason};
}

std::vector<BackendStatus> backend_status() {
  std::vector<BackendStatus> out;
  for (Backend b : {Backend::cpu, Backend::cuda}) {
    auto p = detail::probe(b);
    out.push_back({b, p.compiled_in, p.usable, p.reason});
  }
  return out;
}

Engine::Engine() : impl_(detail::make_backend(parse_env_backend())) {}
Engine::Engine(Backend backend) : impl_(detail::make_backend(backend)) {}

Backend Engine::backend() const noexcept { return impl_->kind(); }
DeviceInfo Engine::device() const { return impl_->device(); }

std::vector<std::string> Engine::reduce_kernels() const {
  auto k = impl_->reduce_kernels();
  k.insert(k.begin(), "auto");
  return k;
}
std::vector<std::string> Engine::matmul_kernels() const {
  auto k = impl_->matmul_kernels();
  k.insert(k.begin(), "auto");
  return k;
}

// ---- reductions ----------------------------------------------------------------------------------

namespace {

struct Input {
  const void* data;
  std::size_t count;
  std::size_t stride;
  bool resident;
};

template <class T>
Input host_input(const T* data, std::size_t count, std::size_t stride, const char* op) {
  extent(count, stride, sizeof(T), op);
  if (count > 0 && data == nullptr) throw Error(std::string(op) + ": data is null but count is " + std::to_string(count));
  return {data, count, stride, false};
}

template <class T>
Input buffer_input(const detail::BackendImpl& impl, BufferView<T> v, const char* op) {
  if (v.count == 0) return {nullptr, 0, 1, true};
  if (v.buffer == nullptr || !v.buffer->allocation())
    throw Error(std::string(op) + ": the BufferView has no buffer but count is " + std::to_string(v.count));
  if (&v.buffer->allocation()->impl() != &impl)
    throw Error(std::string(op) + ": the buffer belongs to another engine (" + to_string(v.buffer->backend()) +
                "); use buffers from the engine that runs the operation");
  std::size_t ext = extent(v.count, v.stride, sizeof(T), op);
  if (v.offset > v.buffer->size() || ext > v.buffer->size() - v.offset)
    throw Error(std::string(op) + ": the view (offset " + std::to_string(v.offset) + ", count " +
                std::to_string(v.count) + ", stride " + std::to_string(v.stride) + ") reaches past the buffer of " +
                std::to_string(v.buffer->size()) + " elements");
  return {v.buffer->data() + v.offset, v.count, v.stride, true};
}

template <class T, class R>
R run_reduce(detail::BackendImpl& impl, ReduceOp op, Input in, const ReduceOptions& opts, const char* name) {
  check_kernel(opts.kernel, impl.reduce_kernels(), "reduce");
  check_deterministic(opts.deterministic, opts.kernel, name);
  if (in.count == 0) {
    if (op == ReduceOp::sum) return R(0);
    throw Error(std::string(name) + " of an empty input is undefined; check for count == 0 before calling");
  }
  detail::ReduceArgs args{op, detail::dtype_of<T>(), in.data, std::int64_t(in.count), std::int64_t(in.stride),
                          in.resident, opts.deterministic};
  R result{};
  impl.reduce(args, opts.kernel, &result);
  return canonical(result);
}

}  // namespace

namespace {
void require_nonempty(std::size_t count, const char* op) {
  if (count == 0) throw Error(std::string(op) + " of an empty input is undefined; check for count == 0 before calling");
}
}  // namespace

template <class T>
sum_result_t<T> Engine::sum(std::span<const T> x, const ReduceOptions& o) const {
  return run_reduce<T, sum_result_t<T>>(*impl_, ReduceOp::sum, host_input(x.data(), x.size(), 1, "sum"), o, "sum");
}
template <class T>
sum_result_t<T> Engine::sum(StridedView<T> x, const ReduceOptions& o) const {
  return run_reduce<T, sum_result_t<T>>(*impl_, ReduceOp::sum, host_input(x.data, x.count, x.stride, "sum"), o, "sum");
}
template <class T>
sum_result_t<T> Engine::sum(BufferView<T> x, const ReduceOptions& o) const {
  return run_reduce<T, sum_result_t<T>>(*impl_, ReduceOp::sum, buffer_input(*impl_, x, "sum"), o, "sum");
}
template <class T>
sum_result_t<T> Engine::sum(const Buffer<T>& x, const ReduceOptions& o) const {
  return sum<T>(x.view(), o);
}

template <class T>
T Engine::min(std::span<const T> x, const ReduceOptions& o) const {
  return run_reduce<T, T>(*impl_, ReduceOp::min, host_input(x.data(), x.size(), 1, "min"), o, "min");
}
template <class T>
T Engine::min(StridedView<T> x, const ReduceOptions& o) const {
  return run_reduce<T, T>(*impl_, ReduceOp::min, host_input(x.data, x.count, x.stride, "min"), o, "min");
}
template <class T>
T Engine::min(BufferView<T> x, const ReduceOptions& o) const {
  return run_reduce<T, T>(*impl_, ReduceOp::min, buffer_input(*impl_, x, "min"), o, "min");
}
template <class T>
T Engine::min(const Buffer<T>& x, const ReduceOptions& o) const {
  return min<T>(x.view(), o);
}

template <class T>
T Engine::max(std::span<const T> x, const ReduceOptions& o) const {
  return run_reduce<T, T>(*impl_, ReduceOp::max, host_input(x.data(), x.size(), 1, "max"), o, "max");
}
template <class T>
T Engine::max(StridedView<T> x, const ReduceOptions& o) const {
  return run_reduce<T, T>(*impl_, ReduceOp::max, host_input(x.data, x.count, x.stride, "max"), o, "max");
}
template <class T>
T Engine::max(BufferView<T> x, const ReduceOptions& o) const {
  return run_reduce<T, T>(*impl_, ReduceOp::max, buffer_input(*impl_, x, "max"), o, "max");
}
template <class T>
T Engine::max(const Buffer<T>& x, const ReduceOptions& o) const {
  return max<T>(x.view(), o);
}

// mean is double(sum) / n: for integers that is the exact sum (while it fits in int64), for floats
// the sum in the input's precision.
template <class T>
double Engine::mean(std::span<const T> x, const ReduceOptions& o) const {
  require_nonempty(x.size(), "mean");
  return double(sum<T>(x, o)) / double(x.size());
}
template <class T>
double Engine::mean(StridedView<T> x, const ReduceOptions& o) const {
  require_nonempty(x.count, "mean");
  return double(sum<T>(x, o)) / double(x.count);
}
template <class T>
double Engine::mean(BufferView<T> x, const ReduceOptions& o) const {
  require_nonempty(x.count, "mean");
  return double(sum<T>(x, o)) / double(x.count);
}
template <class T>
double Engine::mean(const Buffer<T>& x, const ReduceOptions& o) const {
  return mean<T>(x.view(), o);
}

template <class T>
Buffer<T> Engine::buffer(std::size_t count) const {
  if (count > std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(T))
    throw Error("buffer: " + std::to_string(count) + " elements do not fit in the address space");
  return Buffer<T>(std::make_shared<detail::Allocation>(impl_, count * sizeof(T)), count);
}
template <class T>
Buffer<T> Engine::upload(std::span<const T> host) const {
  if (!host.empty() && host.data() == nullptr) throw Error("upload: data is null but size is non-zero");
  Buffer<T> b = buffer<T>(host.size());
  b.upload(host);
  return b;
}

#define TANDEM_INSTANTIATE_REDUCE(T)                                                                  \
  template sum_result_t<T> Engine::sum<T>(std::span<const T>, const ReduceOptions&) const;           \
  template sum_result_t<T> Engine::sum<T>(StridedView<T>, const ReduceOptions&) const;               \
  template sum_result_t<T> Engine::sum<T>(BufferView<T>, const ReduceOptions&) const;                \
  template sum_result_t<T> Engine::sum<T>(const Buffer<T>&, const ReduceOptions&) const;             \
  template T Engine::min<T>(std::span<const T>, const ReduceOptions&) const;                         \
  template T Engine::min<T>(StridedView<T>, const ReduceOptions&) const;                             \
  template T Engine::min<T>(BufferView<T>, const ReduceOptions&) const;                              \
  template T Engine::min<T>(const Buffer<T>&, const ReduceOptions&) const;                           \
  template T Engine::max<T>(std::span<const T>, const ReduceOptions&) const;                         \
  template T Engine::max<T>(StridedView<T>, const ReduceOptions&) const;                             \
  template T Engine::max<T>(BufferView<T>, const ReduceOptions&) const;                              \
  template T Engine::max<T>(const Buffer<T>&, const ReduceOptions&) const;                           \
  template double Engine::mean<T>(std::span<const T>, const ReduceOptions&) const;                   \
  template double Engine::mean<T>(StridedView<T>, const ReduceOptions&) const;                       \
  template double Engine::mean<T>(BufferView<T>, const ReduceOptions&) const;                        \
  template double Engine::mean<T>(const Buffer<T>&, const ReduceOptions&) const;                     \
  template Buffer<T> Engine::buffer<T>(std::size_t) const;                                           \
  template Buffer<T> Engine::upload<T>(std::span<const T>) const;

TANDEM_INSTANTIATE_REDUCE(std::int32_t)
TANDEM_INSTANTIATE_REDUCE(std::int64_t)
TANDEM_INSTANTIATE_REDUCE(float)
TANDEM_INSTANTIATE_REDUCE(double)
#undef TANDEM_INSTANTIATE_REDUCE

// ---- matmul --------------------------------------------------------------------------------------

namespace {

struct Mat {
  const void* data;
  std::size_t rows, cols, ld, extent;
};

template <class T>
void run_matmul(detail::BackendImpl& impl, Mat a, Mat b, Mat c, bool resident, const MatmulOptions& opts) {
  check_kernel(opts.kernel, impl.matmul_kernels(), "matmul");
  check_deterministic(opts.deterministic, opts.kernel, "matmul");
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols) {
    std::ostringstream m;
    m << "matmul: shapes do not match: A is " << a.rows << "x" << a.cols << ", B is " << b.rows << "x" << b.cols
      << ", C is " << c.rows << "x" << c.cols << "; need A.cols == B.rows, C = A.rows x B.cols";
    throw Error(m.str());
  }
  const char* names[] = {"A", "B", "C"};
  Mat* ms[] = {&a, &b, &c};
  for (int i = 0; i < 3; ++i)
    if (ms[i]->extent > 0 && ms[i]->data == nullptr)
      throw Error(std::string("matmul: ") + names[i] + ".data is null but " + names[i] + " has " +
                  std::to_string(ms[i]->rows) + "x" + std::to_string(ms[i]->cols) + " elements");
  const std::size_t e = sizeof(T);
  if (overlaps(c.data, c.extent * e, a.data, a.extent * e) || overlaps(c.data, c.extent * e, b.data, b.extent * e))
    throw Error("matmul: C overlaps A or B; the output must be separate memory");
  if (c.rows == 0 || c.cols == 0) return;
  detail::MatmulArgs args{detail::dtype_of<T>(), a.data, b.data, const_cast<void*>(c.data),
                          std::int64_t(a.rows), std::int64_t(a.cols), std::int64_t(b.cols),
                          std::int64_t(a.ld), std::int64_t(b.ld), std::int64_t(c.ld), resident,
                          opts.deterministic};
  impl.matmul(args, opts.kernel);
}

template <class T, class V>
Mat host_mat(V v, const char* name) {
  return {v.data, v.rows, v.cols, v.ld, matrix_extent(v.rows, v.cols, v.ld, sizeof(T), name)};
}

template <class T>
Mat buffer_mat(const detail::BackendImpl& impl, BufferMatrix<T> v, const char* name) {
  std::size_t ext = matrix_extent(v.rows, v.cols, v.ld, sizeof(T), name);
  if (ext == 0) return {nullptr, v.rows, v.cols, v.ld, 0};
  if (v.buffer == nullptr || !v.buffer->allocation())
    throw Error(std::string("matmul: ") + name + " has no buffer but " + std::to_string(v.rows) + "x" +
                std::to_string(v.cols) + " elements");
  if (&v.buffer->allocation()->impl() != &impl)
    throw Error(std::string("matmul: ") + name + "'s buffer belongs to another engine; use buffers from the engine that runs the operation");
  if (v.offset > v.buffer->size() || ext > v.buffer->size() - v.offset)
    throw Error(std::string("matmul: ") + name + " (offset " + std::to_string(v.offset) + ", " +
                std::to_string(v.rows) + "x" + std::to_string(v.cols) + ", ld " + std::to_string(v.ld) +
                ") reaches past its buffer of " + std::to_string(v.buffer->size()) + " elements");
  return {v.buffer->data() + v.offset, v.rows, v.cols, v.ld, ext};
}

}  // namespace

template <class T>
void Engine::matmul(MatrixView<const T> a, MatrixView<const T> b, MatrixView<T> c, const MatmulOptions& opts) const {
  run_matmul<T>(*impl_, host_mat<T>(a, "A"), host_mat<T>(b, "B"), host_mat<T>(c, "C"), false, opts);
}
template <class T>
void Engine::matmul(BufferMatrix<T> a, BufferMatrix<T> b, BufferMatrix<T> c, const MatmulOptions& opts) const {
  run_matmul<T>(*impl_, buffer_mat<T>(*impl_, a, "A"), buffer_mat<T>(*impl_, b, "B"), buffer_mat<T>(*impl_, c, "C"),
                true, opts);
}

template void Engine::matmul<float>(MatrixView<const float>, MatrixView<const float>, MatrixView<float>,
                                    const MatmulOptions&) const;
template void Engine::matmul<double>(MatrixView<const double>, MatrixView<const double>, MatrixView<double>,
                                     const MatmulOptions&) const;
template void Engine::matmul<float>(BufferMatrix<float>, BufferMatrix<float>, BufferMatrix<float>,
                                    const MatmulOptions&) const;
template void Engine::matmul<double>(BufferMatrix<double>, BufferMatrix<double>, BufferMatrix<double>,
                                     const MatmulOptions&) const;

}  // namespace tandem
