#include "columns.h"

#include <Python.h>

namespace c3::py {

nb::list to_str_list(const std::vector<std::string>& v) {
  nb::list out;
  for (const std::string& s : v) {
    PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
    if (o == nullptr) throw nb::python_error();
    out.append(nb::steal(o));
  }
  return out;
}

nb::dict columns_to_python(std::vector<ResultColumn>&& cols) {
  nb::list names, types, values, nulls;
  for (ResultColumn& c : cols) {
    PyObject* name =
        PyUnicode_DecodeUTF8(c.name.data(), static_cast<Py_ssize_t>(c.name.size()), "replace");
    if (name == nullptr) throw nb::python_error();
    names.append(nb::steal(name));
    switch (c.type) {
      case ResultColumn::Type::integer:
        types.append("int");
        values.append(to_numpy(std::move(c.ints)));
        nulls.append(to_numpy(std::move(c.nulls)));
        break;
      case ResultColumn::Type::real:
        types.append("real");
        values.append(to_numpy(std::move(c.reals)));
        nulls.append(nb::none());
        break;
      case ResultColumn::Type::text: {
        types.append("text");
        nb::list l = to_str_list(c.texts);
        for (size_t i = 0; i < c.text_nulls.size(); ++i) {
          if (c.text_nulls[i] != 0) l[i] = nb::none();
        }
        values.append(l);
        nulls.append(nb::none());
        break;
      }
      case ResultColumn::Type::null:
        types.append("null");
        values.append(nb::int_(static_cast<int64_t>(c.nulls.size())));
        nulls.append(nb::none());
        break;
    }
  }
  nb::dict d;
  d["names"] = names;
  d["types"] = types;
  d["values"] = values;
  d["nulls"] = nulls;
  return d;
}

}  // namespace c3::py
