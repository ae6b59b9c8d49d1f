// tandem.Engine's var and std (python/module.cpp binds them) with NumPy's conventions, in NumPy's two passes
// and the steps of Engine::var (engine/moments.cpp), so both give the same bits: the mean over the reduced
// axes (eng.mean, the reduced axes kept as 1, rounded to the working type), the deviations x - mean by the
// array's library (NumPy, CuPy or PyTorch: one exactly rounded subtraction per element, into a temporary of
// x's size; of a broadcast's distinct elements, broadcast again), their sum of squares (eng.sumsq), divided by n - ddof
// (and for std its correctly rounded square root). With deterministic=True the bits are the same on every backend and
// run.
#include <algorithm>
#include <cmath>
#include <limits>

#include "python/engine.hpp"
#include "python/layout.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Op;

namespace {

void warn(const char* message) {
  if (PyErr_WarnEx(PyExc_RuntimeWarning, message, 1) != 0) throw py::error_already_set();
}

}  // namespace

py::object PyEngine::moment(bool root, const py::object& x, const ReduceArgs& r, double ddof) const {
  const char* what = root ? "std" : "var";
  Input in = input(x);
  const std::vector<bool> reduced = reduced_axes(r.axis, in.a.ndim(), true);
  const Dtype d = in.a.dtype;
  // NumPy's result type: the element type for floats, float64 for integers and bool (dtype= chooses).
  Dtype result = is_float(d) ? d : Dtype::f64;
  if (!r.dtype.is_none()) {
    Dtype want = Dtype::f64;
    bool ok = true;
    try {
      want = dtype_from_object(r.dtype);
    } catch (const tandem::Error&) {
      ok = false;
    }
    if (!ok || !is_float(want)) {
      std::string asked = py::str(r.dtype);
      try {  // NumPy's name of the type, where NumPy knows it
        asked = py::str(py::module_::import("numpy").attr("dtype")(r.dtype).attr("name"));
      } catch (const py::error_already_set&) {
      }
      throw tandem::type_error(std::string("tandem: ") + what + "(dtype=" + asked +
                               "): tandem computes the deviations in float32, float64, float16 or bfloat16; pass "
                               "one of them");
    }
    result = want;
  }
  // The type the passes compute in: float32 for 16-bit results, the result's type otherwise.
  const Dtype work = tandem::info(result).compute;
  const auto shape = result_shape(in.a, reduced, r.keepdims);
  if (!r.out.is_none()) check_out(Op::mean, output(r.out, in), shape, result);
  const std::int64_t n = reduced_size(in.a, reduced);
  const py::module_ lib = array_module(in.a.lib, what);
  // where=: the mean and the sum of squares of the True elements, divided by their count less ddof.
  const bool masked = where_given(r.where);
  const py::object mask = masked ? where_mask(r.where, in, std::string(what) + "(where=)") : py::none();
  if (double(n) - ddof <= 0 && !(masked && n > 0)) warn("Degrees of freedom <= 0 for slice");
  // (a broadcast: cast and subtracted from its mean as its distinct elements, broadcast again, so that no
  // temporary holds its repeats)
  const bool repeats = repeats_elements(in.a) && in.a.lib != Lib::other;
  const py::object xw = d == work ? in.a.keep : cast_keeping_repeats(in.a, work);
  const py::object dtype_arg = numpy_dtype(work);

  ReduceArgs pass{r.axis, dtype_arg, py::none()};
  pass.kernel = r.kernel, pass.deterministic = r.deterministic;
  py::object sq;
  if (n == 0) {  // NumPy: NaN (with the warning above), not the mean's own warning
    pass.keepdims = r.keepdims;
    pass.initial = numpy_scalar(work, std::numeric_limits<double>::quiet_NaN());
    sq = reduce(Op::sum, xw, pass);  // (an empty sum with initial=NaN: NaN of the result's shape)
  } else {
    pass.keepdims = true;
    // The mean in float64 (of the elements converted to float64, exactly, or from an integer input's exact
    // sum), the reduced axes kept as 1, rounded to work's type: the steps of Engine::var (engine/moments.cpp).
    pass.where = mask, pass.dtype = numpy_dtype(Dtype::f64);
    py::object mean = reduce(Op::mean, in.a.keep, pass);
    if (work != Dtype::f64) mean = library_cast(mean, in.a.lib, work);
    pass.where = py::none(), pass.dtype = dtype_arg;
    const char* subtract = in.a.lib == Lib::torch ? "sub" : "subtract";
    py::object deviations;
    if (repeats) {
      // The first element along x's repeated axes where the deviations repeat too: reduced ones (the mean is
      // one value along them), and kept ones where the mask, if any, repeats as well (the mean is the same
      // along them; a mask that varies there gives each index its own mean).
      py::tuple first = first_of_repeats(in.a);
      if (masked) {
        const std::vector<bool> mask_repeats = zero_strides(mask, in.a.lib);
        for (std::size_t k = 0; k < reduced.size(); ++k)
          if (!reduced[k] && !mask_repeats[k]) first[k] = py::slice(py::none(), py::none(), py::none());
      }
      deviations = broadcast_view(lib.attr(subtract)(xw[first], mean[first]), in.a.lib, in.a.shape);
    } else {
      deviations = lib.attr(subtract)(xw, mean);
    }
    if (masked) {  // (the masked elements' deviations, inf or NaN among them, as 0)
      Input dev;   // (repeating where the input does: masked_input keeps what the mask repeats there too)
      dev.a.lib = in.a.lib, dev.a.keep = deviations, dev.a.dtype = work;
      if (repeats) dev.a.shape = in.a.shape, dev.a.strides = in.a.strides;
      deviations = masked_input(dev, mask, py::int_(0), what);
    }
    pass.keepdims = r.keepdims, pass.dtype = py::none();
    sq = reduce(Op::sumsq, deviations, pass);
  }
  py::object value;
  if (masked && n > 0) {  // by the count of each slice's True elements less ddof (at least 0)
    ReduceArgs counting{r.axis, py::none(), py::none()};
    counting.keepdims = r.keepdims;
    const py::object count = library_cast(reduce(Op::sum, mask, counting), in.a.lib, work);
    const py::object less =
        in.a.lib == Lib::torch ? lib.attr("sub")(count, ddof) : lib.attr("subtract")(count, numpy_scalar(work, ddof));
    const py::object divisor = in.a.lib == Lib::torch ? less.attr("clamp")(py::arg("min") = 0)
                                                      : lib.attr("maximum")(less, numpy_scalar(work, 0.0));
    if (in.a.lib == Lib::numpy && py::module_::import("numpy").attr("any")(divisor.attr("__le__")(0)).cast<bool>())
      warn("Degrees of freedom <= 0 for slice");
    value = lib.attr(in.a.lib == Lib::torch ? "div" : "true_divide")(sq, divisor);
  } else if (in.a.lib == Lib::torch) {  // (by a tensor on sq's device: PyTorch multiplies by a scalar's reciprocal)
    value = lib.attr("div")(
        sq, lib.attr("full")(py::tuple(), std::max(double(n) - ddof, 0.0), py::arg("dtype") = sq.attr("dtype"),
                             py::arg("device") = sq.attr("device")));
  } else {
    value = lib.attr("true_divide")(sq, numpy_scalar(work, std::max(double(n) - ddof, 0.0)));
  }
  if (root) value = lib.attr("sqrt")(value);
  return finish(value, shape, in, work, result, shape, r.out);
}

}  // namespace tandem_python
