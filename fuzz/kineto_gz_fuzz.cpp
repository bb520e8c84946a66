// The Kineto importer's gzip path with a sound container: the input is JSON (the kineto
// corpus), gzip-compressed here in a few members of fuzz-chosen sizes so that member and
// buffer boundaries fall anywhere, then analyzed as a .json.gz file (fuzz/common.h).
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common.h"

namespace {

// One gzip member of `in`.
void gzip_member(const uint8_t* in, size_t n, int level, std::string& out) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
  z.next_in = const_cast<Bytef*>(in);
  z.avail_in = static_cast<uInt>(n);
  unsigned char buf[1 << 14];
  int rc = Z_OK;
  do {
    z.next_out = buf;
    z.avail_out = sizeof buf;
    rc = deflate(&z, Z_FINISH);
    out.append(reinterpret_cast<const char*>(buf), sizeof buf - z.avail_out);
  } while (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0));
  deflateEnd(&z);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The last byte (when there is one) picks the compression level and where the input is cut
  // into two gzip members (concatenated members are one valid gzip stream).
  const uint8_t knob = size > 0 ? data[size - 1] : 0;
  const int level = knob % 10;
  const size_t cut = size > 0 ? (size * (knob >> 4)) / 16 : 0;
  std::string gz;
  gzip_member(data, cut, level, gz);
  gzip_member(data + cut, size - cut, level, gz);
  const c3::fuzz::TempFile file(gz, ".json.gz");
  c3::fuzz::analyze(file.path(), c3::analyzer::InputFormat::kineto);
  return 0;
}
