// Reading a c3bench case label back into bench_result's typed configuration columns
// (C3_BENCH_CONFIG_COLUMNS, schema v3). Files of schema v2 hold a case's configuration only as
// text; the reader's migration (migrate.h) calls this once per row when such a file is opened.
// Nothing else parses labels: c3bench writes the typed columns itself since v3.
//
// The label as c3bench writes it (microbench/core/src/descriptors.cpp, Case::label):
//   "<compute> + <comm>[ [<knobs>]]"
//   compute: "gemm:MxNxK:dtype" | "triad:SIZE" | "fma:<N>us" | "-" (none)
//   comm:    "allreduce|allgather|reducescatter|alltoall|sendrecv|dma_d2d|dma_p2p|sm_copy:SIZE"
//            (sm_copy may add ":peer") | "-" (none); SIZE as "64M", "1G", "4096" (powers of 1024)
//   knobs:   space-separated, defaults left out: "prio=comm_high|comm_low", "order=comm_first",
//            "nch=N", "ctas=MIN:MAX", "smpart=P%", "chunks=K"
// e.g. "gemm:8192x8192x8192:bf16 + allreduce:64M [prio=comm_high nch=4 chunks=2]".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "c3/tracedb/schema.h"

namespace c3::tracedb {

// Fills the typed configuration columns of `row` from `row.label`, and its compute, comm and
// comm_bytes where they are NULL; never throws. Returns false, leaving the typed columns NULL,
// when the label has no "<compute> + <comm>" shape. Pieces it does not understand (a knob of a
// later c3bench, a size it cannot read) are added to `unknown`, when given, and otherwise
// ignored: the columns keep their defaults (knobs) or stay NULL (sizes, shapes).
bool config_from_label(BenchResultRow& row, std::vector<std::string>* unknown = nullptr);

}  // namespace c3::tracedb
