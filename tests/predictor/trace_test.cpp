// The trace format: round trip, gzip, malformed input named by file:line, and augur-trace itself.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "augur/predictor/replay.h"
#include "augur/predictor/trace.h"
#include "temp_dir.h"

namespace augur::predictor {
namespace {

namespace fs = std::filesystem;

class TraceFiles : public TempDirTest {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  // Reads the whole trace; the Status of the first failure.
  static Status read_all(const std::string& path, std::vector<RecvCall>* out = nullptr) {
    AUGUR_ASSIGN_OR_RETURN(TraceReader r, TraceReader::open(path));
    RecvCall c;
    while (true) {
      AUGUR_ASSIGN_OR_RETURN(bool more, r.next(c));
      if (!more) return Status::Ok();
      if (out != nullptr) out->push_back(c);
    }
  }
};

const char* const kGood =
    "# augur-trace 1\n"
    "# rank 1 size 4 app=pes host=n1\n"
    "# a comment\n"
    "irecv 0 7 1024 3 0x7ffd0000a000 0 0x401234\n"
    "recv -1 -1 16 1 0xdeadbeef 2 0x401300\n";

TEST(TraceFormat, LineRoundTrips) {
  RecvCall c{CallKind::kIrecv, 3, -1, 4096, 2, 0x7f00deadbeefULL, 1, 0x55555555abcdULL};
  const std::string line = format_call_line(c);
  EXPECT_EQ(line, "irecv 3 -1 4096 2 0x7f00deadbeef 1 0x55555555abcd");
  auto back = parse_call_line(line);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->same_message(c));
  EXPECT_EQ(back->site, c.site);
  EXPECT_EQ(back->kind, c.kind);
}

TEST_F(TraceFiles, ReadsHeaderAndCalls) {
  std::vector<RecvCall> calls;
  const std::string p = write("good.txt", kGood);
  ASSERT_TRUE(read_all(p, &calls).ok());
  ASSERT_EQ(calls.size(), 2U);
  EXPECT_EQ(calls[0].tag, 7);
  EXPECT_EQ(calls[0].buffer, 0x7ffd0000a000ULL);
  EXPECT_EQ(calls[1].source, -1);
  EXPECT_EQ(calls[1].kind, CallKind::kRecv);
  auto r = TraceReader::open(p);
  ASSERT_TRUE(r.ok());
  RecvCall c;
  ASSERT_TRUE(r->next(c).ok());
  EXPECT_EQ(r->rank(), 1);
  EXPECT_EQ(r->size(), 4);
  EXPECT_EQ(r->line(), 4U);
}

TEST_F(TraceFiles, ReadsGzip) {
  const std::string p = (dir_ / "good.txt.gz").string();
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzputs(f, kGood);
  gzclose(f);
  std::vector<RecvCall> calls;
  ASSERT_TRUE(read_all(p, &calls).ok());
  EXPECT_EQ(calls.size(), 2U);
}

struct Bad {
  const char* body;  // after the magic line
  int line;
  const char* what;
};

TEST_F(TraceFiles, MalformedLinesAreNamedByFileAndLine) {
  const std::vector<Bad> cases = {
      {"recv 0 1 2 3 0x10 0\n", 2, "expected 8 fields"},
      {"recv 0 1 2 3 0x10 0 0x1 extra\n", 2, "got 9"},
      {"recv  0 1 2 3 0x10 0 0x1\n", 2, "expected 8 fields"},
      {"# rank 0 size 1\nsend 0 1 2 3 0x10 0 0x1\n", 3, "call 'send'"},
      {"recv -2 1 2 3 0x10 0 0x1\n", 2, "source '-2'"},
      {"recv 0 x 2 3 0x10 0 0x1\n", 2, "tag 'x'"},
      {"recv 0 1 -2 3 0x10 0 0x1\n", 2, "count '-2'"},
      {"recv 0 1 2 -3 0x10 0 0x1\n", 2, "datatype '-3'"},
      {"recv 0 1 2 3 10 0 0x1\n", 2, "buffer '10'"},
      {"recv 0 1 2 3 0xzz 0 0x1\n", 2, "buffer '0xzz'"},
      {"recv 0 1 2 3 0x10 c 0x1\n", 2, "comm 'c'"},
      {"recv 0 1 2 3 0x10 0 0x11111111111111111\n", 2, "site"},
      {"recv 0 1 2 3 0x10 0 0x1\n\nrecv 0 1 2 3 0x10 0 0x1\n", 3, "empty line"},
      {"# rank 4 size 4\n", 2, "bad rank header"},
      {"# rank 0 size 2 novalue\n", 2, "not key=value"},
      {"recv 0 1 2 3 0x10 0 0x1\r\n", 2, "site"},
  };
  int i = 0;
  for (const Bad& b : cases) {
    const std::string p = write("bad" + std::to_string(i++) + ".txt", std::string(kTraceMagic) + "\n" + b.body);
    const Status s = read_all(p);
    ASSERT_FALSE(s.ok()) << b.body;
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    const std::string prefix = p + ":" + std::to_string(b.line) + ": ";
    EXPECT_EQ(s.message().rfind(prefix, 0), 0U) << s.message() << " / want prefix " << prefix;
    EXPECT_NE(s.message().find(b.what), std::string::npos) << s.message() << " / want " << b.what;
  }
}

TEST_F(TraceFiles, BadHeadersEmptyAndMissingFiles) {
  Status s = read_all(write("empty.txt", ""));
  EXPECT_NE(s.message().find("empty.txt: empty file"), std::string::npos) << s.message();
  s = read_all(write("v2.txt", "# augur-trace 2\n"));
  EXPECT_NE(s.message().find("v2.txt:1: unsupported trace version '2'"), std::string::npos) << s.message();
  s = read_all(write("nomagic.txt", "recv 0 1 2 3 0x10 0 0x1\n"));
  EXPECT_NE(s.message().find("nomagic.txt:1: not an augur trace"), std::string::npos) << s.message();
  s = read_all((dir_ / "missing.txt").string());
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("missing.txt: cannot open: No such file"), std::string::npos) << s.message();
  std::string longline = std::string(kTraceMagic) + "\n# " + std::string(5000, 'x') + "\n";
  s = read_all(write("long.txt", longline));
  EXPECT_NE(s.message().find("long.txt:2: line longer than"), std::string::npos) << s.message();
  // A header and no calls is a valid trace of a rank that never received.
  EXPECT_TRUE(read_all(write("nocalls.txt", format_header(0, 2))).ok());
}

// A cyclic trace per rank: `prefix` distinct calls, then `reps` loops over `len` calls.
std::string cyclic_trace(int rank, int prefix, int len, int reps) {
  std::string t = format_header(rank, 2);
  RecvCall c;
  for (int i = 0; i < prefix; ++i) {
    c.buffer = 0x9000U + static_cast<unsigned>(i);
    c.site = 0x1;
    t += format_call_line(c) + "\n";
  }
  for (int r = 0; r < reps; ++r) {
    for (int i = 0; i < len; ++i) {
      c.kind = CallKind::kIrecv;
      c.source = i % 3;
      c.buffer = 0x1000U + 0x100U * static_cast<unsigned>(i);
      c.site = 0x400000U + static_cast<unsigned>(i % 2) * 0x10U;
      t += format_call_line(c) + "\n";
    }
  }
  return t;
}

TEST_F(TraceFiles, ReplayReportsPerPredictorOverRanks) {
  const std::vector<std::string> files = {write("r0.txt", cyclic_trace(0, 3, 10, 20)),
                                          write("r1.txt", cyclic_trace(1, 0, 10, 20)),
                                          write("r2.txt", format_header(1, 3))};
  ReplayOptions o;
  o.predictors = {"single-cycle", "lru", "tagging", "adaptive"};
  o.predictor_options.window = 9;  // below the cycle length 10
  o.start_sweep = 5;
  auto r = replay(files, o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->ranks, 2U);
  EXPECT_EQ(r->empty_ranks, 1U);
  EXPECT_EQ(r->calls, 403U);
  // By position, so each is checked to be the one asked for (an absent one must not go unread).
  ASSERT_EQ(r->predictors.size(), 4U);
  for (std::size_t i = 0; i < o.predictors.size(); ++i) ASSERT_EQ(r->predictors[i].name, o.predictors[i]);
  const PredictorReport& sc = r->predictors[0];
  ASSERT_EQ(sc.per_rank.size(), 2U);
  // rank 0: init pattern 3 + first cycle found after 10 + 1 more calls: 203 - 14 hits.
  EXPECT_DOUBLE_EQ(sc.per_rank[0], 189.0 / 203.0);
  EXPECT_DOUBLE_EQ(sc.per_rank[1], 189.0 / 200.0);
  EXPECT_DOUBLE_EQ(sc.hit_ratio.min, 189.0 / 203.0);
  EXPECT_EQ(sc.memory_tuples, 10U);
  ASSERT_TRUE(sc.start_sweep.has_value());
  ASSERT_TRUE(sc.start_sweep_no_init.has_value());
  EXPECT_GT(sc.start_sweep->min, 0.9);
  // Without the initialization phase, rank 0 starting at calls 0-2 waits for ever for a head of
  // the initialization pattern (0 hits): the average over starts drops (Figure 13).
  EXPECT_LT(sc.start_sweep_no_init->min, sc.start_sweep->min);
  // Worst start is 2: rank 0 gets 0, rank 1 misses 11 of its 198 calls.
  EXPECT_NEAR(sc.start_sweep_no_init->min, (0.0 + 187.0 / 198.0) / 2, 1e-12);
  EXPECT_EQ(r->predictors[1].hit_ratio.max, 0.0);  // LRU below the cycle length
  EXPECT_FALSE(r->predictors[1].abstains);
  const PredictorReport& ad = r->predictors[3];
  EXPECT_TRUE(ad.abstains);
  EXPECT_GT(ad.precision, 0.99);
  EXPECT_GT(ad.coverage, 0.8);
  const std::string json = format_json(*r);
  EXPECT_NE(json.find("\"single-cycle\": {\"hit_ratio\": {\"avg\": "), std::string::npos) << json;
  EXPECT_NE(json.find("\"memory_tuples\": 10, \"calls\": 403"), std::string::npos) << json;
  EXPECT_NE(json.find("\"coverage\": "), std::string::npos);
  const std::string table = format_table(*r);
  EXPECT_NE(table.find("single-cycle"), std::string::npos);
}

TEST_F(TraceFiles, ReplayRejectsUnknownPredictorAndBadFile) {
  ReplayOptions o;
  o.predictors = {"nope"};
  std::vector<std::string> files = {write("r0.txt", cyclic_trace(0, 0, 4, 4))};
  EXPECT_EQ(replay(files, o).status().code(), Code::kInvalidArgument);
  o.predictors = {};
  files.push_back(write("bad.txt", std::string(kTraceMagic) + "\nrecv 1\n"));
  const auto r = replay(files, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.txt:2: expected 8 fields"), std::string::npos);
}

// ------------------------------------------------------------------------ augur-trace binary

struct ToolRun {
  int status = -1;
  std::string out;
};

ToolRun run_tool(const std::string& args, const fs::path& dir) {
  const std::string out = (dir / "tool.out").string();
  const std::string cmd = std::string(AUGUR_TRACE_BIN) + " " + args + " >" + out + " 2>&1";
  const int raw = std::system(cmd.c_str());
  ToolRun r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(out);
  r.out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return r;
}

TEST_F(TraceFiles, ToolExitsTwoOnMalformedInputWithFileAndLine) {
  const std::string bad = write("bad.txt", std::string(kTraceMagic) + "\n# rank 0 size 1\nrecv 0 1 2 3 0x10 0\n");
  ToolRun r = run_tool("replay " + bad, dir_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(bad + ":3: expected 8 fields"), std::string::npos) << r.out;
  r = run_tool("replay " + (dir_ / "missing.txt").string(), dir_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("missing.txt: cannot open"), std::string::npos) << r.out;
  r = run_tool("replay " + write("empty.txt", ""), dir_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("empty.txt: empty file"), std::string::npos) << r.out;
  r = run_tool("replay --window x " + bad, dir_);
  EXPECT_EQ(r.status, 2);
  r = run_tool("frobnicate", dir_);
  EXPECT_EQ(r.status, 2);
}

TEST_F(TraceFiles, ToolPrintsJsonAndTable) {
  const std::string t = write("r0.txt", cyclic_trace(0, 0, 8, 30));
  ToolRun r = run_tool("replay --json --predictor single-cycle,lru --window 8 " + t, dir_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("{\n  \"single-cycle\": {\"hit_ratio\": {\"avg\": 0.9", 0), 0U) << r.out;
  EXPECT_NE(r.out.find("\"lru\": {\"hit_ratio\": {\"avg\": 0.96"), std::string::npos) << r.out;
  r = run_tool("replay --predictor all --start-sweep 3 " + t, dir_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("tag-bettercycle"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep_avg"), std::string::npos) << r.out;
}


TEST_F(TraceFiles, ToolPlotsHitRatioAgainstWindowSize) {
  const std::string t = write("r0.txt", cyclic_trace(0, 0, 4, 50));
  const std::string png = (dir_ / "windows.png").string();
  ToolRun r = run_tool("replay --predictor lru --plot " + png + " --max-window 5 " + t, dir_);
  ASSERT_EQ(r.status, 0) << r.out;
  std::ifstream dat(png + ".dat");
  std::string header, line;
  std::getline(dat, header);
  std::vector<std::string> rows;
  while (std::getline(dat, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 5U);
  EXPECT_EQ(rows[2].rfind("3 0.000000 0.000000 ", 0), 0U) << rows[2];  // k = 3 < cycle length 4
  EXPECT_EQ(rows[3].rfind("4 0.980000 0.980000 0.980000", 0), 0U) << rows[3];
  std::ifstream img(png, std::ios::binary);
  char magic[4] = {};
  img.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

TEST_F(TraceFiles, TruncatedGzipIsAnErrorNamingTheFile) {
  std::string body = format_header(0, 1);
  for (int i = 0; i < 2000; ++i) body += "recv 0 1 2 3 0x" + std::to_string(1000 + i) + " 0 0x1\n";
  const std::string full = (dir_ / "full.gz").string();
  gzFile f = gzopen(full.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzputs(f, body.c_str());
  gzclose(f);
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = write("cut.gz", bytes.substr(0, bytes.size() / 2));
  std::vector<RecvCall> calls;
  const Status s = read_all(cut, &calls);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cut.gz"), std::string::npos) << s.message();
  EXPECT_GT(calls.size(), 0U);
  EXPECT_LT(calls.size(), 2000U);
  EXPECT_EQ(run_tool("replay " + cut, dir_).status, 2);
}

TEST_F(TraceFiles, ReplayReportsProgressWhileStreaming) {
  const std::vector<std::string> files = {write("r0.txt", cyclic_trace(0, 0, 10, 10))};
  ReplayOptions o;
  o.predictors = {"single-cycle"};
  o.progress_every = 25;
  std::vector<std::uint64_t> seen;
  o.progress = [&](const std::string& path, std::uint64_t calls) {
    EXPECT_EQ(path, files[0]);
    seen.push_back(calls);
  };
  ASSERT_TRUE(replay(files, o).ok());
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{25, 50, 75, 100}));
}

}  // namespace
}  // namespace augur::predictor
