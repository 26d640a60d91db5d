// A whole trace file as `augur-trace replay` reads it (predictor::TraceReader: header, rank
// headers, comments, call lines, gzip or plain): reading ends in a value or an error, never a
// crash; the rank header's values are a rank of the job; every call round-trips through its
// line; a plain file yields no more lines than it has.
// Input: the file's bytes.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "fuzz_util.h"
#include "augur/predictor/trace.h"

namespace predictor = augur::predictor;

namespace {

// One in-memory file for the whole run; TraceReader opens it by path, like a trace on disk.
const std::string& file_path() {
  static const std::string path = [] {
    const int fd = ::memfd_create("augur-trace-fuzz", 0);
    if (fd < 0) augur::fuzz::fail("memfd_create", __FILE__, __LINE__);
    return "/proc/self/fd/" + std::to_string(fd);
  }();
  return path;
}

void write_file(const std::uint8_t* data, std::size_t size) {
  const int fd = std::stoi(file_path().substr(file_path().rfind('/') + 1));
  AUGUR_FUZZ_CHECK(::ftruncate(fd, 0) == 0);
  for (std::size_t off = 0; off < size;) {
    const ssize_t n = ::pwrite(fd, data + off, size - off, static_cast<off_t>(off));
    AUGUR_FUZZ_CHECK(n > 0);
    off += static_cast<std::size_t>(n);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  write_file(data, size);
  augur::Result<predictor::TraceReader> r = predictor::TraceReader::open(file_path());
  if (!r.ok()) {
    AUGUR_FUZZ_CHECK(r.status().code() == augur::Code::kInvalidArgument || r.status().code() == augur::Code::kIo);
    return 0;
  }
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const auto lines = static_cast<std::uint64_t>(std::count(data, data + size, '\n')) + 1;
  std::uint64_t calls = 0;
  for (;;) {
    predictor::RecvCall c;
    augur::Result<bool> more = r->next(c);
    if (!more.ok()) {
      const augur::Code code = more.status().code();
      AUGUR_FUZZ_CHECK(code == augur::Code::kInvalidArgument || code == augur::Code::kIo);
      break;
    }
    if (!more.value()) break;
    ++calls;
    augur::Result<predictor::RecvCall> again = predictor::parse_call_line(predictor::format_call_line(c));
    AUGUR_FUZZ_CHECK(again.ok() && again->same_message(c) && again->site == c.site);
    if (r->rank() >= 0 || r->size() >= 0) AUGUR_FUZZ_CHECK(r->rank() >= 0 && r->rank() < r->size());
  }
  AUGUR_FUZZ_CHECK(calls < r->line());  // the header line is not a call
  if (!gzip) AUGUR_FUZZ_CHECK(r->line() <= lines);
  return 0;
}
