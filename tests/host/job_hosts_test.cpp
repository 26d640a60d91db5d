// The job's hosts as every rank computes them from the bootstrap's entries: ranks per host,
// oversubscription here and anywhere, and malformed entries rejected.
#include "augur/host/job_hosts.h"

#include <vector>

#include <gtest/gtest.h>

namespace augur::host {
namespace {

TEST(JobHosts, CountsTheRanksOnThisRanksHost) {
  const std::vector<HostShare> s = {{"a", 4}, {"b", 4}, {"a", 4}, {"b", 4}, {"a", 4}};
  EXPECT_EQ(job_hosts(s, 0).local_ranks, 3);
  EXPECT_EQ(job_hosts(s, 1).local_ranks, 2);
  EXPECT_FALSE(job_hosts(s, 0).any_oversubscribed);
}

TEST(JobHosts, OneOversubscribedHostIsSeenByEveryRank) {
  // b runs 3 ranks on 2 cores; a has room. All ranks must agree on the job-wide answer.
  const std::vector<HostShare> s = {{"a", 8}, {"b", 2}, {"b", 2}, {"b", 2}};
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(job_hosts(s, r).any_oversubscribed) << r;
  EXPECT_FALSE(job_hosts(s, 0).here_oversubscribed);
  EXPECT_TRUE(job_hosts(s, 2).here_oversubscribed);
}

TEST(JobHosts, RanksPerCoreExactlyIsNotOversubscribed) {
  const std::vector<HostShare> s = {{"a", 2}, {"a", 2}};
  EXPECT_FALSE(job_hosts(s, 1).here_oversubscribed);
  EXPECT_FALSE(job_hosts(s, 1).any_oversubscribed);
}

TEST(JobHosts, AHostsFewestReportedCoresCount) {
  // Ranks confined to different CPU sets may see different counts: the smaller one decides.
  const std::vector<HostShare> s = {{"a", 4}, {"a", 1}};
  EXPECT_TRUE(job_hosts(s, 0).here_oversubscribed);
}

TEST(JobHosts, EntriesRoundTripAndMalformedOnesAreRejected) {
  Result<HostShare> ok = parse_host_share(encode_host_share({"node-7.cluster", 64}), 3);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->host, "node-7.cluster");
  EXPECT_EQ(ok->cores, 64u);
  for (const char* bad : {"", "node", " 4", "node 0", "node -1", "node 4x", "node ", "node 99999999999"}) {
    const Result<HostShare> r = parse_host_share(bad, 3);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kProtocol) << bad;
    EXPECT_NE(r.status().message().find("rank 3"), std::string::npos) << r.status().to_string();
  }
}

TEST(JobHosts, AHostWithoutANameIsNamedByItsBootId) {
  EXPECT_EQ(host_name_from("node7", "ignored"), "node7");
  EXPECT_EQ(host_name_from("", "1b0c3f2e-5a6d-4e1f-9c2b-7d8e9f0a1b2c\n"), "boot-1b0c3f2e-5a6d-4e1f-9c2b-7d8e9f0a1b2c");
  EXPECT_EQ(host_name_from(" \t", ""), "localhost");
  EXPECT_EQ(host_name_from("a b", ""), "ab");  // the entry's separator never appears in a name
  const std::string here = this_host_name();
  ASSERT_FALSE(here.empty());
  // What this machine publishes parses back as itself.
  Result<HostShare> back = parse_host_share(encode_host_share({here, 3}), 0);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->host, here);
  EXPECT_EQ(back->cores, 3u);
}

TEST(JobHosts, TheLaunchersNodeNameFollowsTheSameRule) {
  EXPECT_EQ(node_name_from("augur-h2"), "augur-h2");
  EXPECT_EQ(node_name_from("node 7\n"), "node7");
  EXPECT_EQ(node_name_from(" \t"), this_host_name());  // blanks are no name
  EXPECT_EQ(node_name_from(""), this_host_name());
}

TEST(JobHosts, ALauncherCountThatDisagreesIsReported) {
  EXPECT_EQ(placement_mismatch(1, "n1", 0, 3), "");  // the launcher gave no count
  EXPECT_EQ(placement_mismatch(1, "n1", 3, 3), "");
  EXPECT_EQ(placement_mismatch(1, "n1", 4, 2),
            "augur: rank 1: the launcher put 4 ranks on node n1, the exchange found 2 there; using 2");
}

}  // namespace
}  // namespace augur::host
