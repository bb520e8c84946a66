// What-if changes for the critical path (path.h, path_join.h), as `analyze --what-if` takes them
// (docs/analyze.md "What-if"):
//   compute=-30%            a part of the path shorter: compute, communication (or comm),
//   host=-50%               memory, other_gpu, host, idle; -100% removes it
//   comm=hidden             communication fully hidden: collectives take no time and wait for
//                           no one
//   kernel:REGEX=-50%       compute kernels whose normalized name matches (RE2, anywhere)
//   nccl:AllReduce=-50%     the communication of collectives of one op (NCCL's op names)
//   rank:5=on-time          rank 5 never arrives last at a collective
#pragma once

#include <string>

#include "c3/analyzer/why/path.h"

namespace c3::analyzer {

// Throws std::invalid_argument "--what-if 'TEXT': ..." saying what is wrong and what is
// accepted.
WhatIf parse_what_if(const std::string& text);

}  // namespace c3::analyzer
