// tandem::Error: every failure the caller can cause or handle.
//
// An Error says what went wrong and what the caller can do, as a Message: plain text and terms (an
// argument of the call, an argument with a value, an element type). Each front end words the terms in its
// own way (Words): the C++ API says `kernel = "auto"` and `float`, the Python module `kernel='auto'` and
// `float32`, the tandem CLI `--kernel auto`. what() is the C++ wording; Error::message(words) any other.
// An Error also says which argument it is about (Error::argument()), for programs that react to it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tandem/dtype.hpp"
#include "tandem/export.hpp"

namespace tandem {

// What kind of failure an Error reports (the Python module raises ValueError / TypeError subclasses of
// tandem.Error for the first two).
enum class ErrorKind : std::uint8_t {
  value,    // an argument's value or shape is not accepted (sizes, strides, names, options)
  type,     // an element type is not accepted (a kernel or call does not take it)
  failure,  // the machine or a library failed, or nothing usable is there (no GPU, a CUDA error)
};

// The arguments errors name, in no front end's words (the comment: the C++ API's).
enum class Arg : std::uint8_t {
  none,
  backend,        // the backend: Engine(Backend), TANDEM_BACKEND
  device,         // EngineOptions::device (TANDEM_DEVICE)
  devices,        // EngineOptions::devices (TANDEM_DEVICES)
  stream,         // EngineOptions::stream
  kernel,         // ReduceOptions::kernel, MatmulOptions::kernel
  deterministic,  // ReduceOptions::deterministic, MatmulOptions::deterministic
  precision,      // MatmulOptions::precision
  alpha,          // MatmulOptions::alpha
  beta,           // MatmulOptions::beta
  input,          // a reduction's input
  output,         // where a call writes its result (a span, a Buffer)
  a,              // matmul's A
  b,              // matmul's B
  c,              // matmul's C
  kernel_info,    // a field of KernelInfo, which says what a kernel takes (Setting::value: the field)
  where,          // ReduceOptions::where
  initial,        // ReduceOptions::initial
};

// An argument with a value: Setting{Arg::kernel, "auto"} is `kernel = "auto"` in C++, `kernel='auto'` in
// Python, `--kernel auto` on the command line.
struct Setting {
  Arg arg;
  std::string value;
};

// One piece of a message: text, or a term a front end words.
struct Term {
  enum class Kind : std::uint8_t { text, arg, setting, dtype };
  Kind kind = Kind::text;
  std::string text;  // text: the text; setting: the value
  Arg arg = Arg::none;
  Dtype dtype = Dtype::f32;
};

// How a front end words the terms.
class Words {
 public:
  virtual ~Words() = default;
  virtual std::string arg(Arg a) const = 0;
  virtual std::string setting(Arg a, const std::string& value) const = 0;
  virtual std::string dtype(Dtype d) const = 0;
};

// The C++ API's words (what() uses them).
class CppWords final : public Words {
 public:
  std::string arg(Arg a) const override {
    switch (a) {
      case Arg::none:
        return "";
      case Arg::backend:
        return "the backend";
      case Arg::device:
        return "EngineOptions::device";
      case Arg::devices:
        return "EngineOptions::devices";
      case Arg::stream:
        return "EngineOptions::stream";
      case Arg::kernel:
        return "kernel";
      case Arg::deterministic:
        return "deterministic";
      case Arg::precision:
        return "MatmulOptions::precision";
      case Arg::alpha:
        return "alpha";
      case Arg::beta:
        return "beta";
      case Arg::input:
        return "the input";
      case Arg::output:
        return "the output";
      case Arg::a:
        return "A";
      case Arg::b:
        return "B";
      case Arg::c:
        return "C";
      case Arg::kernel_info:
        return "KernelInfo";
      case Arg::where:
        return "ReduceOptions::where";
      case Arg::initial:
        return "ReduceOptions::initial";
    }
    return "?";
  }
  std::string setting(Arg a, const std::string& value) const override {
    switch (a) {
      case Arg::backend:
        return "Backend::" + value;
      case Arg::kernel:
        return "kernel = \"" + value + "\"";
      case Arg::deterministic:
        return "deterministic = " + value;
      case Arg::kernel_info:
        return "KernelInfo::" + value;
      default:
        return arg(a) + " = " + value;
    }
  }
  std::string dtype(Dtype d) const override { return to_string(d); }
};
inline const Words& cpp_words() {
  static const CppWords words;
  return words;
}

// A message: text and terms in order, e.g. Message("kernel '", name, "' does not take ", Dtype::f32).
// Parts: text (std::string, const char*, a char), integers, a double (as %g), a Dtype, an Arg (its
// name), a Setting.
class Message {
 public:
  Message() = default;
  template <class... Parts>
  explicit Message(const Parts&... parts) {
    (add(parts), ...);
  }
  const std::vector<Term>& terms() const noexcept { return terms_; }
  bool empty() const noexcept { return terms_.empty(); }
  Message& operator+=(const Message& more) {
    terms_.insert(terms_.end(), more.terms_.begin(), more.terms_.end());
    return *this;
  }
  std::string words(const Words& w) const {
    std::string s;
    for (const Term& t : terms_) switch (t.kind) {
        case Term::Kind::text:
          s += t.text;
          break;
        case Term::Kind::arg:
          s += w.arg(t.arg);
          break;
        case Term::Kind::setting:
          s += w.setting(t.arg, t.text);
          break;
        case Term::Kind::dtype:
          s += w.dtype(t.dtype);
          break;
      }
    return s;
  }

 private:
  void text(std::string s) {
    if (!terms_.empty() && terms_.back().kind == Term::Kind::text)
      terms_.back().text += s;
    else
      terms_.push_back(Term{Term::Kind::text, std::move(s)});
  }
  void add(const std::string& s) { text(s); }
  void add(const char* s) { text(s); }
  void add(char ch) { text(std::string(1, ch)); }
  void add(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    text(buf);
  }
  template <class I>
  requires std::is_integral_v<I> &&(!std::is_same_v<I, char>)&&(!std::is_same_v<I, bool>)void add(I v) {
    text(std::to_string(v));
  }
  void add(Dtype d) { terms_.push_back(Term{Term::Kind::dtype, "", Arg::none, d}); }
  void add(Arg a) { terms_.push_back(Term{Term::Kind::arg, "", a}); }
  void add(const Setting& s) { terms_.push_back(Term{Term::Kind::setting, s.value, s.arg}); }
  void add(const Message& m) { *this += m; }

  std::vector<Term> terms_;
};

// Every failure the caller can cause or handle: what went wrong (problem) and what to do (hint).
class TANDEM_API Error : public std::runtime_error {
 public:
  // A message in plain text (no terms), about no argument in particular.
  explicit Error(const std::string& what, ErrorKind kind = ErrorKind::failure)
      : std::runtime_error(what), data_(std::make_shared<Data>(Data{kind, Arg::none, Message(what), {}})) {}
  explicit Error(const char* what, ErrorKind kind = ErrorKind::failure) : Error(std::string(what), kind) {}
  // What went wrong with `argument` (Arg::none: no one argument) and what the caller can do.
  Error(ErrorKind kind, Arg argument, const Message& problem, const Message& hint = {})
      : std::runtime_error(join(problem, hint, cpp_words())),
        data_(std::make_shared<Data>(Data{kind, argument, problem, hint})) {}

  ErrorKind kind() const noexcept { return data_->kind; }
  Arg argument() const noexcept { return data_->argument; }
  const Message& problem() const noexcept { return data_->problem; }
  const Message& hint() const noexcept { return data_->hint; }
  // The message in a front end's words: the problem, then "; " and the hint (what() is message(cpp_words())).
  std::string message(const Words& words) const { return join(data_->problem, data_->hint, words); }

 private:
  struct Data {
    ErrorKind kind;
    Arg argument;
    Message problem, hint;
  };
  static std::string join(const Message& problem, const Message& hint, const Words& w) {
    std::string s = problem.words(w);
    if (!hint.empty()) s += "; " + hint.words(w);
    return s;
  }
  std::shared_ptr<const Data> data_;  // (shared: copying an Error never throws)
};

// An Error of kind value / type: in plain text, or about an argument with a hint.
inline Error value_error(const std::string& what) { return Error(what, ErrorKind::value); }
inline Error type_error(const std::string& what) { return Error(what, ErrorKind::type); }
inline Error value_error(Arg argument, const Message& problem, const Message& hint = {}) {
  return Error(ErrorKind::value, argument, problem, hint);
}
inline Error type_error(Arg argument, const Message& problem, const Message& hint = {}) {
  return Error(ErrorKind::type, argument, problem, hint);
}

}  // namespace tandem
