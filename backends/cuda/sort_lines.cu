// Lines put in order on the GPU (TopkArgs, common/backend.hpp): argsort of every line, and topk where topk.cu's
// selection does not take it (k > 1024, or a very long line with a large k).
//   1. Each element becomes its order key (order_keys.cuh) and its index within the line.
//   2. A stable radix sort of CUB puts each line's (key, index) pairs in order; equal keys keep their index order:
//        argsort: ascending keys, so NaN (the largest key) last;
//        topk:    descending keys of key_of(x, largest), so NaN first, then the most extreme.
//      Many lines: cub::DeviceSegmentedSort, a block per line. Few long lines (Method): lines of 32-bit keys all
//      at once by cub::DeviceRadixSort, each key joined to its line's number above it; other keys each line alone.
//   3. The first k indices of each line (argsort: all of them) and, for topk, the elements at them written out.
// As many lines at a time as kElementsAtOnce elements hold (kJoinedAtOnce joined; a longer line alone); lines longer
// than kLongestLine are left to the engine (the host).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/order_keys.cuh"
#include "common/dispatch.hpp"

namespace tandem::cuda {

using detail::Index;

namespace {

constexpr Index kElementsAtOnce = Index(1) << 26;
constexpr Index kJoinedAtOnce = Index(1) << 24;  // (Method::joined: 64-bit keys, 384 MiB of buffers at most)
constexpr Index kLongestLine = Index(1) << 30;   // (the indices within a line are sorted as int)

// How step 2 sorts (sort_method).
enum class Method {
  segmented,  // cub::DeviceSegmentedSort of the lines
  joined,     // cub::DeviceRadixSort of all of them at once, a 64-bit key: the line's number, then the 32-bit key
  alone,      // cub::DeviceRadixSort of each line alone
};

// 1. keys[l * length + i] and index[l * length + i] of element i of line l, for `lines` lines from x; the
// segments' offsets (l * length, l <= lines). SK wider than the element's key (Method::joined): the line's number
// above the key, inverted for a descending order (the joined keys sort ascending).
template <class T, class SK>
__global__ void __launch_bounds__(256)
    keys_kernel(const T* __restrict__ x, Index lines, Index length, Index line_step, Index step, bool largest,
                bool descending, SK* __restrict__ keys, int* __restrict__ index, Index* __restrict__ offsets) {
  const Index total = lines * length;
  for (Index e = Index(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += Index(gridDim.x) * blockDim.x) {
    const Index l = e / length, i = e - l * length;
    const KeyOf<T> key = key_of(x[l * line_step + i * step], largest);
    if constexpr (sizeof(SK) > sizeof(KeyOf<T>))
      keys[e] = (SK(l) << (8 * sizeof(KeyOf<T>))) | SK(descending ? KeyOf<T>(~key) : key);
    else
      keys[e] = key;
    index[e] = int(i);
  }
  for (Index l = Index(blockIdx.x) * blockDim.x + threadIdx.x; l <= lines; l += Index(gridDim.x) * blockDim.x)
    offsets[l] = l * length;
}

// 3. Result r < k of line l: the r-th index of the sorted line, and (values not null) the element there.
template <class T>
__global__ void __launch_bounds__(256)
    write_kernel(const T* __restrict__ x, Index lines, Index length, Index line_step, Index step, Index k,
                 const int* __restrict__ order, T* __restrict__ values, Index values_line, Index values_step,
                 std::int64_t* __restrict__ indices, Index indices_line, Index indices_step) {
  const Index total = lines * k;
  for (Index e = Index(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += Index(gridDim.x) * blockDim.x) {
    const Index l = e / k, r = e - l * k, i = order[l * length + r];
    indices[l * indices_line + r * indices_step] = i;
    if (values) values[l * values_line + r * values_step] = x[l * line_step + i * step];
  }
}

unsigned blocks_for(Index work) {
  return unsigned(std::clamp<Index>((work + 255) / 256, 1, Index(multiprocessor_count()) * 32));
}

// The segmented sort, unless a sort of the whole GPU (cub::DeviceRadixSort) of each line is estimated faster: the
// segmented sort's block per line takes long on a long line that the other blocks cannot share. Measured on an
// H200 (float keys, int indices): the segmented sort about 7.6 ns per element of a block's line, with a line per
// SM at a time (64 x 32000: 0.245 ms; one line of 3,000,000: 16 ms); a sort of the whole GPU about 15 us a call
// and 0.1 ns an element (one line of 3,000,000: 0.2 ms). Lines of 32-bit keys then go joined into one call (16
// lines of 200,000: 0.28 ms, 1.1x torch.argsort; each line alone took 1.2 ms), other keys each line alone.
template <class K>
Method sort_method(Index lines, Index length) {
  const double sms = double(multiprocessor_count()), n = double(length);
  const double whole = double(lines) * (15e-6 + n * 0.1e-9);
  const double segmented = std::ceil(double(lines) / sms) * n * 7.6e-9;
  if (whole >= segmented) return Method::segmented;
  if (sizeof(K) == 4 && lines > 1 && 2 * length <= kJoinedAtOnce)
    return Method::joined;  // (two lines a group, or more)
  return Method::alone;
}

// The stable sort of step 2, in order of a.argsort (ascending) or not (descending) as `method` sorts: `lines` lines
// (Method::alone: one). temp == nullptr: the size of its scratch into temp_bytes.
template <class K>
void sort_pairs(const detail::TopkArgs& a, Method method, void* temp, std::size_t& temp_bytes,
                cub::DoubleBuffer<K>& keys, cub::DoubleBuffer<int>& index, Index lines, const Index* offsets,
                cudaStream_t stream) {
  const Index items = lines * a.length;
  const bool alone = method == Method::alone;
  if (method == Method::joined) {  // (ascending: the lines in order, each line's keys as keys_kernel wrote them)
    int line_bits = 0;
    while ((Index(1) << line_bits) < lines) ++line_bits;
    TANDEM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, index, items, 0, 32 + line_bits, stream));
  } else if (alone && a.argsort)
    TANDEM_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, index, items, 0, int(sizeof(K) * 8), stream));
  else if (alone)
    TANDEM_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys, index, items, 0, int(sizeof(K) * 8), stream));
  else if (a.argsort)
    TANDEM_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(temp, temp_bytes, keys, index, items, lines, offsets,
                                                                offsets + 1, stream));
  else
    TANDEM_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairsDescending(temp, temp_bytes, keys, index, items, lines,
                                                                          offsets, offsets + 1, stream));
}

std::size_t rounded(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// The lines of `a` in groups of as many as kElementsAtOnce elements hold (Method::alone: one at a time), each group
// sorted by `method` with sort keys SK.
template <class T, class SK>
void sort_groups(const detail::TopkArgs& a, Method method, Workspace& ws, cudaStream_t stream) {
  const Index most = method == Method::joined ? kJoinedAtOnce : kElementsAtOnce;
  const Index at_once = method == Method::alone ? 1 : std::clamp<Index>(most / a.length, 1, a.lines);
  const Index last = a.lines - (a.lines - 1) / at_once * at_once;  // (the last group's lines)
  std::size_t temp_bytes = 0;
  for (Index lines : {at_once, last}) {
    cub::DoubleBuffer<SK> keys(nullptr, nullptr);
    cub::DoubleBuffer<int> index(nullptr, nullptr);
    std::size_t bytes = 0;
    sort_pairs(a, method, nullptr, bytes, keys, index, lines, static_cast<const Index*>(nullptr), stream);
    temp_bytes = std::max(temp_bytes, bytes);
  }
  // The workspace: two buffers of keys and of indices, the offsets, CUB's scratch.
  const auto items = std::size_t(at_once * a.length);
  const std::size_t key_bytes = rounded(items * sizeof(SK)), index_bytes = rounded(items * sizeof(int)),
                    offset_bytes = rounded(std::size_t(at_once + 1) * sizeof(Index));
  auto* base = static_cast<unsigned char*>(ws.get(2 * key_bytes + 2 * index_bytes + offset_bytes + temp_bytes));
  SK* const key_buf[2] = {reinterpret_cast<SK*>(base), reinterpret_cast<SK*>(base + key_bytes)};
  int* const index_buf[2] = {reinterpret_cast<int*>(base + 2 * key_bytes),
                             reinterpret_cast<int*>(base + 2 * key_bytes + index_bytes)};
  auto* const offsets = reinterpret_cast<Index*>(base + 2 * key_bytes + 2 * index_bytes);
  void* const temp = base + 2 * key_bytes + 2 * index_bytes + offset_bytes;

  const auto* x = static_cast<const T*>(a.data);
  auto* values = static_cast<T*>(a.values);
  for (Index first = 0; first < a.lines; first += at_once) {
    const Index lines = std::min(at_once, a.lines - first);
    const T* in = x + first * a.line_step;
    keys_kernel<T, SK><<<blocks_for(lines * a.length), 256, 0, stream>>>(in, lines, a.length, a.line_step, a.step,
                                                                         a.argsort || a.largest, !a.argsort, key_buf[0],
                                                                         index_buf[0], offsets);
    TANDEM_CUDA_CHECK_LAUNCH();
    cub::DoubleBuffer<SK> keys(key_buf[0], key_buf[1]);
    cub::DoubleBuffer<int> index(index_buf[0], index_buf[1]);
    std::size_t bytes = temp_bytes;
    sort_pairs(a, method, temp, bytes, keys, index, lines, offsets, stream);
    write_kernel<T><<<blocks_for(lines * a.k), 256, 0, stream>>>(
        in, lines, a.length, a.line_step, a.step, a.k, index.Current(),
        values ? values + first * a.values_line : nullptr, a.values_line, a.values_step,
        a.indices + first * a.indices_line, a.indices_line, a.indices_step);
    TANDEM_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

bool sort_lines(const detail::TopkArgs& a, Workspace& ws, cudaStream_t stream) {
  if (a.length > kLongestLine) return false;
  if (a.lines == 0 || a.k == 0) return true;
  detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    using K = KeyOf<T>;
    const Method method = sort_method<K>(a.lines, a.length);
    if constexpr (sizeof(K) == 4)
      if (method == Method::joined) return sort_groups<T, std::uint64_t>(a, method, ws, stream);
    sort_groups<T, K>(a, method, ws, stream);
  });
  return true;
}

}  // namespace tandem::cuda
