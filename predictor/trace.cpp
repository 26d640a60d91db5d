#include "augur/predictor/trace.h"

#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include <zlib.h>

namespace augur::predictor {

namespace {

constexpr std::size_t kMaxLine = 4096;

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t sp = s.find(' ', start);
    out.push_back(s.substr(start, sp == std::string_view::npos ? sp : sp - start));
    if (sp == std::string_view::npos) return out;
    start = sp + 1;
  }
}

template <typename T>
bool parse_int(std::string_view s, T& out, int base = 10) {
  if (s.empty() || s.front() == '+') return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

Status bad(std::string_view field, std::string_view value, std::string_view want) {
  return Status(Code::kInvalidArgument,
                std::string(field) + " '" + std::string(value) + "' is not " + std::string(want));
}

Status parse_hex(std::string_view field, std::string_view s, std::uint64_t& out) {
  if (s.size() < 3 || s.size() > 18 || s.substr(0, 2) != "0x" || s[2] == '-' ||
      !parse_int(s.substr(2), out, 16)) {
    return bad(field, s, "hexadecimal with 0x (at most 16 digits)");
  }
  return Status::Ok();
}

Status parse_wild(std::string_view field, std::string_view s, std::int32_t& out) {
  if (!parse_int(s, out) || out < -1) return bad(field, s, "a decimal integer >= -1");
  return Status::Ok();
}

}  // namespace

Result<RecvCall> parse_call_line(std::string_view line) {
  const auto f = split_spaces(line);
  if (f.size() != 8) {
    return Status(Code::kInvalidArgument,
                  "expected 8 fields separated by one space (call source tag count datatype "
                  "buffer comm site), got " + std::to_string(f.size()));
  }
  RecvCall c;
  if (f[0] == "recv") c.kind = CallKind::kRecv;
  else if (f[0] == "irecv") c.kind = CallKind::kIrecv;
  else return bad("call", f[0], "'recv' or 'irecv'");
  AUGUR_RETURN_IF_ERROR(parse_wild("source", f[1], c.source));
  AUGUR_RETURN_IF_ERROR(parse_wild("tag", f[2], c.tag));
  if (!parse_int(f[3], c.count) || f[3].front() == '-') return bad("count", f[3], "a decimal count");
  if (!parse_int(f[4], c.datatype) || f[4].front() == '-') {
    return bad("datatype", f[4], "a small non-negative integer");
  }
  AUGUR_RETURN_IF_ERROR(parse_hex("buffer", f[5], c.buffer));
  if (!parse_int(f[6], c.comm) || f[6].front() == '-') {
    return bad("comm", f[6], "a small non-negative integer");
  }
  AUGUR_RETURN_IF_ERROR(parse_hex("site", f[7], c.site));
  return c;
}

std::string format_call_line(const RecvCall& c) {
  char buf[160];
  const int n = std::snprintf(buf, sizeof buf, "%s %" PRId32 " %" PRId32 " %" PRIu64 " %" PRIu32
                              " 0x%" PRIx64 " %" PRIu32 " 0x%" PRIx64,
                              c.kind == CallKind::kRecv ? "recv" : "irecv", c.source, c.tag,
                              c.count, c.datatype, c.buffer, c.comm, c.site);
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string format_header(int rank, int size) {
  return std::string(kTraceMagic) + "\n# rank " + std::to_string(rank) + " size " +
         std::to_string(size) + "\n";
}

// ---------------------------------------------------------------------------- TraceReader

struct TraceReader::Source {
  gzFile f = nullptr;  // reads plain text too
  ~Source() {
    if (f != nullptr) gzclose(f);
  }
  char* gets(char* buf, int n) { return gzgets(f, buf, n); }
};

TraceReader::TraceReader(std::string path, std::unique_ptr<Source> src)
    : path_(std::move(path)), src_(std::move(src)) {}
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;
TraceReader::~TraceReader() = default;

Result<TraceReader> TraceReader::open(const std::string& path) {
  auto src = std::make_unique<Source>();
  errno = 0;
  src->f = gzopen(path.c_str(), "rb");
  if (src->f == nullptr) {
    return Status(Code::kNotFound, path + ": cannot open: " +
                                       (errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  TraceReader r(path, std::move(src));
  AUGUR_RETURN_IF_ERROR(r.read_header());
  return r;
}

Status TraceReader::error(std::string_view what) const {
  return Status(Code::kInvalidArgument, path_ + ":" + std::to_string(line_) + ": " + std::string(what));
}

Result<bool> TraceReader::read_line(std::string& out) {
  out.clear();
  bool got = false;
  char chunk[kMaxLine + 2];
  while (src_->gets(chunk, sizeof chunk) != nullptr) {
    got = true;
    out.append(chunk);
    if (!out.empty() && out.back() == '\n') {
      out.pop_back();
      break;
    }
    if (out.size() > kMaxLine) break;
  }
  if (!got) {
    int err = Z_OK;
    const char* msg = gzerror(src_->f, &err);
    if (err != Z_OK) return Status(Code::kIo, path_ + ": read error: " + msg);
    return false;
  }
  ++line_;
  if (out.size() > kMaxLine) return error("line longer than " + std::to_string(kMaxLine) + " bytes");
  return true;
}

Status TraceReader::read_header() {
  AUGUR_ASSIGN_OR_RETURN(bool any, read_line(buf_));
  if (!any) return Status(Code::kInvalidArgument, path_ + ": empty file (no '# augur-trace 1' header)");
  if (buf_ != kTraceMagic) {
    if (buf_.starts_with("# augur-trace ")) {
      return error("unsupported trace version '" + buf_.substr(14) + "' (this reader knows 1)");
    }
    return error("not an augur trace: first line must be '# augur-trace 1'");
  }
  return Status::Ok();
}

Result<bool> TraceReader::next(RecvCall& out) {
  while (true) {
    AUGUR_ASSIGN_OR_RETURN(bool any, read_line(buf_));
    if (!any) return false;
    if (buf_.empty()) return error("empty line");
    if (buf_.front() != '#') {
      auto c = parse_call_line(buf_);
      if (!c.ok()) return error(c.status().message());
      out = c.value();
      return true;
    }
    if (!buf_.starts_with("# rank ")) continue;  // a comment
    const auto f = split_spaces(buf_);
    int r = -1;
    int n = -1;
    if (f.size() < 5 || f[3] != "size" || !parse_int(f[2], r) || !parse_int(f[4], n) || n <= 0 ||
        r < 0 || r >= n) {
      return error("bad rank header: expected '# rank <r> size <n> [key=value ...]' with 0 <= r < n");
    }
    for (std::size_t i = 5; i < f.size(); ++i) {
      const std::size_t eq = f[i].find('=');
      if (eq == std::string_view::npos || eq == 0) {
        return error("bad rank header: '" + std::string(f[i]) + "' is not key=value");
      }
    }
    rank_ = r;
    size_ = n;
  }
}

}  // namespace augur::predictor
