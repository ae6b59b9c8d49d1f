// The elementwise pass of SelectArgs on the host (the CPU backend's BackendImpl::select), on oneTBB's threads.
#include "common/select.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace tandem::detail {

void host_select(const SelectArgs& a) {
  visit_select(a, [&]<class T, class Out>(std::type_identity<T>, std::type_identity<Out>) {
    const T* x = static_cast<const T*>(a.data);
    Out* out = static_cast<Out*>(a.out);
    const Out fill = fill_of<Out>(a);
    const Index cols = a.cols;
    // (in pieces of 2^15 elements: one thread copied at about a twentieth of the speed of the reduction
    // that reads the result on 16 cores)
    tbb::parallel_for(tbb::blocked_range<Index>(0, a.rows * cols, Index(1) << 15), [&](const auto& range) {
      Index r = range.begin() / cols, c = range.begin() % cols;
      for (Index k = range.begin(); k < range.end(); ++k) {
        out[k] = select_value<T, Out>(x[r * a.ld + c * a.stride], a.mask == nullptr || a.mask[k], a.shift,
                                      shift_index(a.shift_kind, r, c), fill);
        if (++c == cols) c = 0, ++r;
      }
    });
  });
}

}  // namespace tandem::detail
