// Columns handed to Python as NumPy arrays that own their C++ memory (no copy, no Python object
// per value), and the typed result columns of an SQL query (sql.cpp).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace c3::py {

namespace nb = nanobind;

// A 1-D NumPy array over `v`'s memory; the array owns the vector from now on.
template <class T>
nb::object to_numpy(std::vector<T>&& v) {
  // An empty vector has no data pointer; NumPy arrays are given one all the same.
  if (v.capacity() == 0) v.reserve(1);
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const size_t n = owned->size();
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), {n}, owner));
}

// A Python list of str; bytes that are not UTF-8 are replaced (U+FFFD), never an exception.
nb::list to_str_list(const std::vector<std::string>& v);

// One column of a query result: integers (with a null mask), reals (NaN for null), or text
// (None for null); a column of mixed types is text, as SQLite would print it.
struct ResultColumn {
  std::string name;
  enum class Type { integer, real, text, null } type = Type::null;
  std::vector<int64_t> ints;
  std::vector<uint8_t> nulls;  // integer columns: 1 where NULL
  std::vector<double> reals;
  std::vector<std::string> texts;
  std::vector<uint8_t> text_nulls;
};

// {"names": [...], "types": [...], "values": [...], "nulls": [...]} for c3scope._frames.
nb::dict columns_to_python(std::vector<ResultColumn>&& cols);

}  // namespace c3::py
