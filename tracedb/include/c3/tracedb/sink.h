// Where an importer's rows go: a trace file (Writer), or straight into memory (the analyzer's
// map reads a PyTorch or Nsight file once and needs no file in between, analyzer/open.h).
//
// The default for every table keeps nothing and returns 0, so a sink overrides only what it
// reads. Rows refer to one another only through the ids insert(ProcessRow) and intern() return,
// so a sink may number them its own way.
#pragma once

#include <cstdint>
#include <string_view>

#include "c3/tracedb/schema.h"

namespace c3::tracedb {

class RowSink {
 public:
  virtual ~RowSink() = default;
  RowSink() = default;
  RowSink(const RowSink&) = delete;
  RowSink& operator=(const RowSink&) = delete;

  // Inserts one row; returns its id (the Writer's rowid).
#define C3_DECLARE_SINK_INSERT(sqlname, Row, COLS, doc) \
  virtual int64_t insert(const Row& /*row*/) {          \
    return 0;                                           \
  }
  C3_TABLES(C3_DECLARE_SINK_INSERT)
#undef C3_DECLARE_SINK_INSERT

  // The id of a string (the string table's), the same for the same string.
  virtual int64_t intern(std::string_view value) = 0;
  virtual void set_meta(std::string_view /*key*/, std::string_view /*value*/) {}
  // A hint, before the rows: the lowest correlation id of the GPU rows to come (their launches'
  // ids; API calls may have lower ones). A sink may index the rows from it; a row below it must
  // still work.
  virtual void correlations_from(int64_t /*lowest*/) {}
  // A hint, before the rows: about how many GPU rows (kernels, copies, sets) and collectives are
  // to come. A sink may reserve room for them; more or fewer may still come.
  virtual void rows_ahead(int64_t /*gpu_rows*/, int64_t /*collectives*/) {}
};

}  // namespace c3::tracedb
