// NumPy's where= on tandem.Engine's reductions (sum, sumsq, prod, min, max, mean; var and std in
// python/moments.cpp): a boolean mask broadcast to the input's shape, whose False elements take no part.
// The reduction runs on the input with the masked elements replaced by its op's identity (0 for the sums,
// 1 for prod, the type's greatest value for min and its least for max: NumPy asks for initial= there, which
// is then combined as without where=), made by the array's library (numpy.where, cupy.where, torch.where: a
// temporary of the input's size); a mean divides the masked sum by the count of True elements. Every step is
// exact or one of tandem's reductions, so deterministic mode's bits stay the same on every backend.
#include "python/engine.hpp"
#include "python/layout.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Op;

bool where_given(const py::object& where) {
  if (where.is_none()) return false;
  const std::string type = py::str(py::type::of(where).attr("__name__"));
  const bool flag = py::isinstance<py::bool_>(where) || type == "bool" || type == "bool_";
  return !(flag && py::bool_(where).cast<bool>());  // (where=True: every element, the plain reduction)
}

py::module_ array_module(Lib lib, const std::string& what) {
  if (lib == Lib::other)
    throw tandem::type_error("tandem: " + what +
                             " is computed with the array's own library, which tandem does for NumPy, CuPy and "
                             "PyTorch arrays only; pass one of those");
  return py::module_::import(lib == Lib::numpy ? "numpy" : lib == Lib::cupy ? "cupy" : "torch");
}

py::object where_mask(const py::object& where, const Input& in, const std::string& what) {
  const py::module_ lib = array_module(in.a.lib, what);
  const py::tuple shape = to_tuple(in.a.shape);
  py::object mask;
  try {  // (booleans only, as NumPy's casting rule 'safe' takes them: no integers, floats or None)
    if (in.a.lib == Lib::torch)
      mask = lib.attr("as_tensor")(where, py::arg("device") = in.a.keep.attr("device"));
    else
      mask = lib.attr("asarray")(where);
  } catch (const py::error_already_set&) {
  }
  const bool boolean = mask && (in.a.lib == Lib::torch ? mask.attr("dtype").equal(lib.attr("bool"))
                                                       : std::string(py::str(mask.attr("dtype").attr("kind"))) == "b");
  if (!boolean)
    throw tandem::type_error(
        "tandem: " + what + ": where= must hold booleans (NumPy's casting rule 'safe'), not " +
        (mask ? std::string(py::str(mask.attr("dtype"))) : std::string(py::str(py::type::of(where).attr("__name__")))) +
        "; pass a comparison such as x > 0, or mask.astype(bool)");
  try {
    return lib.attr("broadcast_to")(mask, shape);
  } catch (const py::error_already_set& e) {
    throw tandem::value_error("tandem: " + what +
                              ": where= must be booleans of a shape that broadcasts to the "
                              "input's " +
                              shape_text(in.a.shape) + " (" + std::string(py::str(e.value())) + ")");
  }
}

namespace {

// The value of op's Identity in dtype d (a Python bool, int or float, which each library keeps in d).
py::object identity_fill(Op op, Dtype d) {
  const tandem::Identity id = tandem::info(op).identity;
  if (id == tandem::Identity::zero) return py::int_(0);
  if (id == tandem::Identity::one) return py::int_(1);
  const bool highest = id == tandem::Identity::highest;
  if (tandem::info(d).boolean) return py::bool_(highest);
  if (!tandem::info(d).integer) return py::float_(highest ? INFINITY : -INFINITY);
  const py::object limits = py::module_::import("numpy").attr("iinfo")(numpy_dtype(d));
  return py::int_(limits.attr(highest ? "max" : "min"));
}

}  // namespace

py::object masked_input(const Input& in, const py::object& mask, const py::object& fill, const std::string& what) {
  const py::module_ lib = array_module(in.a.lib, what);
  // The axes along which both the input and the mask repeat (a broadcast of each): the selection made of
  // their first elements there, broadcast again, so that no temporary holds the repeats.
  const Array& a = in.a;
  py::tuple first(a.shape.size());
  bool repeats = false;
  if (a.strides.size() == a.shape.size() && a.lib != Lib::other) {
    const std::vector<bool> mask_repeats = zero_strides(mask, a.lib);
    for (std::size_t d = 0; d < a.shape.size(); ++d) {
      const bool both = a.shape[d] > 1 && a.strides[d] == 0 && mask_repeats[d];
      repeats |= both;
      first[d] = both ? py::slice(0, 1, 1) : py::slice(py::none(), py::none(), py::none());
    }
  }
  const py::object m = repeats ? mask[first] : mask, x = repeats ? a.keep[first] : a.keep;
  py::object selected;
  if (in.a.lib == Lib::torch) {
    selected = lib.attr("where")(m, x, fill);
  } else {
    // (a NumPy scalar of the input's type, which NumPy and CuPy keep; CuPy takes no NumPy arrays)
    const py::object value = py::module_::import("numpy").attr("asarray")(fill, numpy_dtype(a.dtype))[py::tuple()];
    selected = lib.attr("where")(m, x, value);
  }
  return repeats ? broadcast_view(selected, a.lib, a.shape) : selected;
}

py::object PyEngine::reduce_where(Op op, const py::object& x, const ReduceArgs& r) const {
  const std::string what = std::string(tandem::to_string(op)) + "(where=)";
  Input in = input(x);
  const py::object mask = where_mask(r.where, in, what);
  ReduceArgs plain = r;
  plain.where = py::none();
  const tandem::OpInfo& o = tandem::info(op);
  if (o.result == tandem::ResultKind::value && r.initial.is_none())
    throw tandem::value_error("tandem: " + what + ": " + o.name +
                              " has no identity, so a where= mask needs initial= (NumPy's rule): the result of a "
                              "slice whose every element is masked");
  if (o.result != tandem::ResultKind::mean) {
    // A float sum with initial= fills with -0.0: with nothing kept the sum is then -0.0, to which initial
    // adds as the first element of NumPy's sum (initial=-0.0 stays -0.0); x + -0.0 is x for every other x.
    const bool signed_zero =
        op == Op::sum && !r.initial.is_none() && !tandem::info(in.a.dtype).integer && !tandem::info(in.a.dtype).boolean;
    const py::object fill = signed_zero ? py::float_(-0.0) : identity_fill(op, in.a.dtype);
    return reduce(op, masked_input(in, mask, fill, what), plain);
  }
  // mean: the masked sum divided by the count of True elements (0 / 0: NaN, as NumPy's).
  const Dtype d = in.a.dtype;
  Dtype result = tandem::info(d).integer ? Dtype::f64 : d;
  if (!r.dtype.is_none()) result = dtype_from_object(r.dtype);
  if (tandem::info(result).integer || tandem::info(result).boolean)
    throw tandem::type_error("tandem: " + what + " computes in a float type; pass dtype= of a float type");
  const auto shape = result_shape(in.a, reduced_axes(r.axis, in.a.ndim(), true), r.keepdims);
  if (!r.out.is_none()) check_out(op, output(r.out, in), shape, result);  // (before the passes)
  const Dtype work = tandem::info(result).compute;
  ReduceArgs pass = plain;
  pass.out = py::none(), pass.dtype = numpy_dtype(work);
  const py::object total = reduce(Op::sum, masked_input(in, mask, py::int_(0), what), pass);
  pass.dtype = py::none();
  const py::object count = library_cast(reduce(Op::sum, mask, pass), in.a.lib, work);
  const py::module_ lib = array_module(in.a.lib, what);
  if (in.a.lib == Lib::numpy && lib.attr("any")(count.attr("__eq__")(0)).cast<bool>())  // (NumPy's warning)
    if (PyErr_WarnEx(PyExc_RuntimeWarning, "Mean of empty slice.", 1) != 0) throw py::error_already_set();
  py::object value = lib.attr(in.a.lib == Lib::torch ? "div" : "true_divide")(total, count);
  return finish(value, shape, in, work, result, shape, r.out);
}

}  // namespace tandem_python
