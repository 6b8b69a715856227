//===- FastCall.cpp - One call of a compiled function, in C++ -------------===//
//
// The runner's call path: the arguments' buffers are checked against the
// function's signature (element type, static sizes, C-contiguous, outs
// writable) and their descriptors written into the argument frame, then
// the entry point runs with the GIL released. On the CPU static results
// are written into out-params; results of dynamic shape (and on the GPU
// targets every result, copied to the host) come back in buffers of their
// own, which the arrays returned take over (freed with the last array over
// them: no copy). In Python that is a few dozen numpy and
// ctypes calls, about 6 microseconds back to back and over 100 when the
// interpreter's caches are cold (a call after a pause); here it is one call.
// An argument that is not exactly what the signature asks for (a list, a
// strided view, another dtype, a value out of range) makes the call return
// false before running anything, and the runner's Python path converts it
// or says what is wrong.
//
//===----------------------------------------------------------------------===//

#include "FastCall.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "nanobind/ndarray.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {
/// One argument of the packed entry point, as the frame lays it out.
struct Slot {
  enum Kind { Index, Input, Output, Result };
  Kind kind;
  /// Where its value (an index) or descriptor (a memref, or a result
  /// returned) starts, in words.
  int64_t at;
  /// The element: a buffer format character ('f', 'e', '?', ...) and its
  /// size in bytes; an integer of either signedness matches any integer
  /// format of that size (the memref's integers are signless).
  char format;
  int64_t itemsize;
  /// Static sizes, -1 where dynamic.
  std::vector<int64_t> shape;
  /// For an element without a buffer format (bf16, which ml_dtypes adds
  /// to numpy): its numpy dtype, and the unsigned integer dtype of its
  /// size that its arrays are viewed as (what `format` then is); else
  /// None.
  nb::object element, bits;
};

bool isIntegerFormat(char c) {
  return std::string_view("bBhHiIlLqQ").find(c) != std::string_view::npos;
}

/// The format character of a buffer of one native element, or 0.
char elementFormat(const char *format) {
  if (!format)
    return 'B';
  if (*format == '@' || *format == '=' || *format == '<')
    ++format;
  if (!format[0] || format[1])
    return 0;
  return format[0];
}

/// The DLPack element of a buffer format character and its size in bytes,
/// or nothing.
std::optional<nb::dlpack::dtype> dlpackElement(char format, int64_t size) {
  using Code = nb::dlpack::dtype_code;
  Code code;
  if (format == 'e' || format == 'f' || format == 'd')
    code = Code::Float;
  else if (format == '?')
    code = Code::Bool;
  else if (std::string_view("bhilq").find(format) != std::string_view::npos)
    code = Code::Int;
  else if (std::string_view("BHILQ").find(format) != std::string_view::npos)
    code = Code::UInt;
  else
    return std::nullopt;
  return nb::dlpack::dtype{static_cast<uint8_t>(code),
                           static_cast<uint8_t>(8 * size), 1};
}

/// The buffers of one call, released when it ends.
class Views {
public:
  ~Views() {
    for (Py_buffer &view : views)
      PyBuffer_Release(&view);
  }
  Py_buffer *get(PyObject *object, int flags) {
    views.emplace_back();
    if (PyObject_GetBuffer(object, &views.back(), flags) == 0)
      return &views.back();
    views.pop_back();
    PyErr_Clear();
    return nullptr;
  }

private:
  std::vector<Py_buffer> views;
};

class FastCall {
public:
  FastCall(uintptr_t entry, uintptr_t words, nb::list slots,
           nb::handle arrayType)
      : entry(reinterpret_cast<void (*)(void *)>(entry)),
        words(reinterpret_cast<int64_t *>(words)),
        arrayType(arrayType.ptr()) {
    for (nb::handle item : slots) {
      auto tuple = nb::cast<nb::tuple>(item);
      Slot slot;
      slot.kind = static_cast<Slot::Kind>(nb::cast<int>(tuple[0]));
      slot.at = nb::cast<int64_t>(tuple[1]);
      std::string format = nb::cast<std::string>(tuple[2]);
      slot.format = format.empty() ? 0 : format[0];
      slot.itemsize = nb::cast<int64_t>(tuple[3]);
      slot.shape = nb::cast<std::vector<int64_t>>(tuple[4]);
      if (tuple.size() > 6 && !tuple[5].is_none()) {
        slot.element = nb::borrow(tuple[5]);
        slot.bits = nb::borrow(tuple[6]);
      }
      if (slot.kind == Slot::Result) {
        std::optional<nb::dlpack::dtype> element =
            dlpackElement(slot.format, slot.itemsize);
        if (!element)
          throw nb::value_error("a result's element has no array type here");
        resultElements.push_back(*element);
      } else {
        ++arguments;
      }
      this->slots.push_back(std::move(slot));
    }
  }

  /// Runs the function on `args` (the inputs, then the out arrays) and
  /// returns the results it returned, as arrays (none for a function with
  /// out-params), or returns None, having run nothing, when an argument is
  /// not exactly what its slot asks for.
  nb::object operator()(nb::args args) {
    if (args.size() != arguments)
      return nb::none();
    Views views;
    size_t next = 0;
    for (const Slot &slot : slots) {
      if (slot.kind == Slot::Result)
        continue;
      PyObject *arg = args[next++].ptr();
      if (slot.kind == Slot::Index) {
        if (!PyLong_CheckExact(arg))
          return nb::none();
        int overflow = 0;
        long long value = PyLong_AsLongLongAndOverflow(arg, &overflow);
        if (overflow || (value == -1 && PyErr_Occurred())) {
          PyErr_Clear();
          return nb::none();
        }
        words[slot.at] = value;
        continue;
      }
      // Out arrays must be numpy arrays the call can write.
      bool isArray = PyObject_TypeCheck(
          arg, reinterpret_cast<PyTypeObject *>(arrayType));
      if (slot.kind == Slot::Output && !isArray)
        return nb::none();
      // An element without a buffer format: an array of exactly it, read
      // through a view as unsigned integers of its size (the view's
      // buffer holds the view, and the view the array, to the call's end).
      nb::object bits;
      if (slot.element.is_valid()) {
        if (!isArray || !nb::handle(arg).attr("dtype").equal(slot.element))
          return nb::none();
        bits = nb::handle(arg).attr("view")(slot.bits);
        arg = bits.ptr();
      }
      int flags = PyBUF_STRIDES | PyBUF_FORMAT |
                  (slot.kind == Slot::Output ? PyBUF_WRITABLE : 0);
      Py_buffer *view = views.get(arg, flags);
      if (!view || !fits(slot, *view))
        return nb::none();
      int64_t rank = static_cast<int64_t>(slot.shape.size());
      auto address = reinterpret_cast<int64_t>(view->buf);
      words[slot.at] = address;
      words[slot.at + 1] = address;
      words[slot.at + 2] = 0;
      int64_t stride = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        words[slot.at + 3 + d] = view->shape[d];
        words[slot.at + 3 + rank + d] = stride;
        stride *= view->shape[d];
      }
    }
    {
      nb::gil_scoped_release release;
      entry(words);
    }
    return results();
  }

private:
  /// The results the call returned, as numpy arrays over their buffers,
  /// each buffer freed when the last array over it goes. The buffers are
  /// the caller's (the pipeline's buffer deallocation returns a result that
  /// would alias an argument in a copy), but a value returned twice comes
  /// back twice in one buffer: every array after the first over a buffer
  /// is a copy, so that no two results share memory.
  nb::tuple results() {
    // Every buffer is owned before any array is made: an error on the way
    // leaves none behind.
    std::vector<std::pair<void *, nb::object>> owners;
    for (const Slot &slot : slots) {
      if (slot.kind != Slot::Result)
        continue;
      void *allocated = reinterpret_cast<void *>(words[slot.at]);
      bool known = false;
      for (auto &owner : owners)
        known |= owner.first == allocated;
      if (allocated && !known)
        owners.emplace_back(allocated,
                            nb::capsule(allocated, [](void *buffer) noexcept {
                              std::free(buffer);
                            }));
    }
    std::vector<void *> viewed;
    nb::list arrays;
    size_t j = 0;
    for (const Slot &slot : slots) {
      if (slot.kind != Slot::Result)
        continue;
      const int64_t *descriptor = words + slot.at;
      auto *allocated = reinterpret_cast<void *>(descriptor[0]);
      size_t rank = slot.shape.size();
      nb::handle owner;
      for (auto &[buffer, capsule] : owners)
        if (buffer == allocated)
          owner = capsule;
      std::vector<size_t> shape(descriptor + 3, descriptor + 3 + rank);
      auto *data = reinterpret_cast<char *>(descriptor[1]) +
                   descriptor[2] * slot.itemsize;
      nb::ndarray<nb::numpy> array(data, rank, shape.data(), owner,
                                   descriptor + 3 + rank, resultElements[j++]);
      bool shared = std::find(viewed.begin(), viewed.end(), allocated) !=
                    viewed.end();
      viewed.push_back(allocated);
      nb::object result = array.cast(shared ? nb::rv_policy::copy
                                            : nb::rv_policy::reference);
      if (slot.element.is_valid())
        result = result.attr("view")(slot.element);
      arrays.append(result);
    }
    return nb::tuple(arrays);
  }

  /// Whether `view` has the slot's element, rank and static sizes, and is
  /// C-contiguous (a dim of size 1 may have any stride).
  static bool fits(const Slot &slot, const Py_buffer &view) {
    if (view.itemsize != slot.itemsize ||
        view.ndim != static_cast<int>(slot.shape.size()))
      return false;
    char format = elementFormat(view.format);
    if (format != slot.format &&
        !(isIntegerFormat(slot.format) && isIntegerFormat(format)))
      return false;
    Py_ssize_t expected = view.itemsize;
    for (int d = view.ndim - 1; d >= 0; --d) {
      if (slot.shape[d] >= 0 && view.shape[d] != slot.shape[d])
        return false;
      if (view.shape[d] != 1 && view.strides &&
          view.strides[d] != expected)
        return false;
      expected *= view.shape[d];
    }
    return true;
  }

  void (*entry)(void *);
  int64_t *words;
  PyObject *arrayType;
  std::vector<Slot> slots;
  /// How many arguments a call takes (the slots but the results).
  size_t arguments = 0;
  /// The elements of the results returned, in order.
  std::vector<nb::dlpack::dtype> resultElements;
};
} // namespace

void fuel::bindFastCall(nb::module_ &m) {
  nb::class_<FastCall>(m, "FastCall",
                       "The call path of a compiled function: checks "
                       "the arguments' buffers, writes their descriptors into "
                       "the argument frame, runs the entry point without the "
                       "GIL and returns the results it returns as arrays "
                       "that own their buffers.")
      .def(nb::init<uintptr_t, uintptr_t, nb::list, nb::handle>(),
           nb::arg("entry"), nb::arg("words"), nb::arg("slots"),
           nb::arg("array_type"),
           "`entry`: the packed entry point's address; `words`: the frame's "
           "int64 buffer (kept alive by the caller); `slots`: per argument, "
           "(kind: 0 index, 1 input, 2 out array, 3 a result returned "
           "(through the frame's first argument); the word its value or "
           "descriptor starts at; the element's buffer format character; "
           "its size in bytes; the static sizes, -1 where dynamic; and for "
           "an element without a buffer format, its numpy dtype and the "
           "unsigned integer dtype its arrays are viewed as); "
           "`array_type`: numpy.ndarray, the type out arrays must have.")
      .def("__call__", &FastCall::operator(),
           "Runs the function on (inputs..., outs...) and returns the tuple "
           "of the results it returns (empty with out-params), or returns "
           "None without running it when an argument is not exactly what "
           "its slot asks for.");
}
