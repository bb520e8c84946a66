// The Kineto importer's last stage: one file's Parsed (kineto_parse.h) as rows, through the
// ImportWriter, in the order the analyzer reads them (analyzer/lib/src/open/build.h).
#pragma once

#include <string>

#include "c3/importer/importer.h"
#include "import_writer.h"
#include "kineto_parse.h"

namespace c3::importer::kineto {

// The process row (with meta kineto_<id>_*), its devices and streams, collectives with their
// external correlations before the kernels they link, then kernels, copies, sets, API calls
// (Options::api_calls) and ranges. Kernel names are interned first, in kernel order, as the
// string table had them. Counts the collectives in `st`.
void write(Parsed& p, const std::string& path, const Options& options, Stats& st,
           ImportWriter& out);

}  // namespace c3::importer::kineto
