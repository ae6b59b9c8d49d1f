// The reduction ladder's kernels for the element types of part 0 (common/dispatch.hpp's kTypePart),
// instantiated here so that the parts compile in parallel (stages.cuh).
#include "backends/cuda/reduce/parts.cuh"

template struct tandem::cuda::reduce_table::Part<0>;
