// Frequent kernel sequences (HTA's frequent CUDA kernel patterns, docs/analyze.md "Frequent
// kernel sequences"): the runs of `length` consecutive kernels of one stream that recur most, by
// normalized name, with how often each recurs and the time it spans: the loops of a step (a
// layer's kernels, an optimizer's) and what one pass of them costs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

struct SequenceOptions {
  int length = 3;  // kernels per sequence (2 to kMaxSequenceLength)
};
inline constexpr int kMaxSequenceLength = 8;
// Sequences a rank summary keeps (the most frequent); the report shows the first 10 of the job.
inline constexpr size_t kSequencesKept = 50;
// Distinct sequences counted per rank; past it new ones are not counted (uncounted says how
// many occurrences), so a trace of endless distinct names cannot grow the table without bound.
inline constexpr size_t kMaxDistinctSequences = size_t{1} << 20;

struct KernelSequence {
  std::vector<std::string> names;  // normalized kernel names, in launch order
  int64_t count = 0;               // occurrences (overlapping: each kernel starts one)
  int64_t span_ns = 0;             // sum over occurrences of last end - first start
  int64_t gpu_ns = 0;              // sum over occurrences of the kernels' own time
  void merge(const KernelSequence& o);
  bool operator==(const KernelSequence&) const = default;
};

struct Sequences {
  std::vector<KernelSequence> top;  // most frequent first (ties: more GPU time, then names)
  int64_t occurrences = 0;          // all counted occurrences
  int64_t uncounted = 0;            // past kMaxDistinctSequences
};

// Process `process`'s sequences over all its streams (kernels starting inside `window`, when
// given), the `keep` most frequent.
Sequences kernel_sequences(const Trace& t, int process, const SequenceOptions& o,
                           const Intervals* window = nullptr, size_t keep = kSequencesKept);

// The kernels that belong to an occurrence of the sequence `names` (normalized names, 2 to
// kMaxSequenceLength of them; others give none): one flag per activity row, 1 for each kernel of
// a run of names.size() consecutive kernels of one stream whose normalized names are `names`, in
// order (the GUI's search selects a frequent sequence this way). `process` -1: every process.
std::vector<uint8_t> sequence_members(const Trace& t, const std::vector<std::string>& names,
                                      int process = -1);

// Orders sequences most frequent first (ties: more GPU time, then names).
void sort_sequences(std::vector<KernelSequence>& v);

}  // namespace c3::analyzer
