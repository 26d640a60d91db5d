// The augur trace format (docs/trace-format.md): one text file per rank, gzip accepted on read.
//   # augur-trace 1
//   # rank <r> size <n> [key=value ...]
//   <call> <source> <tag> <count> <datatype> <buffer> <comm> <site>
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "augur/predictor/call.h"
#include "augur/status.h"

namespace augur::predictor {

inline constexpr std::string_view kTraceMagic = "# augur-trace 1";

// Parses one receive-call line (no newline). The Status message says what is wrong, without the
// file:line prefix that TraceReader adds.
Result<RecvCall> parse_call_line(std::string_view line);
// Formats one receive-call line, without newline.
std::string format_call_line(const RecvCall& c);
std::string format_header(int rank, int size);

// Streams a trace: constant memory whatever its length. Errors read "file:line: what".
class TraceReader {
 public:
  static Result<TraceReader> open(const std::string& path);
  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;
  ~TraceReader();

  // The next call into `out`; false at the end of the file.
  Result<bool> next(RecvCall& out);
  [[nodiscard]] int rank() const noexcept { return rank_; }  // -1 if the header has none
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::uint64_t line() const noexcept { return line_; }

 private:
  struct Source;
  TraceReader(std::string path, std::unique_ptr<Source> src);
  Status error(std::string_view what) const;
  Result<bool> read_line(std::string& out);
  Status read_header();

  std::string path_;
  std::unique_ptr<Source> src_;
  std::string buf_;
  std::uint64_t line_ = 0;
  int rank_ = -1;
  int size_ = -1;
};

}  // namespace augur::predictor
