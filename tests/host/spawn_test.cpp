// PreparedExec: what the child runs and with which environment is fixed before the fork; a
// program that cannot run is reported with the caller's prefix and exit status 127.
#include "augur/host/spawn.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace augur::host {
namespace {

struct Outcome {
  int status = -1;
  std::string out, err;
};

Outcome run(const PreparedExec& exec) {
  int out[2], err[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    exec.exec();
  }
  close(out[1]);
  close(err[1]);
  Outcome r;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<std::size_t>(n));
  for (ssize_t n; (n = read(err[0], buf, sizeof buf)) > 0;) r.err.append(buf, static_cast<std::size_t>(n));
  close(out[0]);
  close(err[0]);
  waitpid(pid, &r.status, 0);
  return r;
}

TEST(Spawn, LooksUpPathAndSetsTheEnvironment) {
  ASSERT_EQ(setenv("AUGUR_SPAWN_KEPT", "kept", 1), 0);
  ASSERT_EQ(setenv("AUGUR_SPAWN_REPLACED", "old", 1), 0);
  const PreparedExec exec({"sh", "-c", "echo \"$AUGUR_SPAWN_KEPT $AUGUR_SPAWN_REPLACED $AUGUR_SPAWN_NEW\"; env | grep -c '^AUGUR_SPAWN_REPLACED='"},
                          {"AUGUR_SPAWN_REPLACED=new", "AUGUR_SPAWN_NEW=added"}, "spawn_test: ");
  ASSERT_EQ(setenv("AUGUR_SPAWN_KEPT", "changed after", 1), 0);  // the plan was fixed before
  const Outcome r = run(exec);
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  EXPECT_EQ(r.out, "kept new added\n1\n");
  unsetenv("AUGUR_SPAWN_KEPT");
  unsetenv("AUGUR_SPAWN_REPLACED");
}

TEST(Spawn, AProgramThatCannotRunExits127WithTheReason) {
  const Outcome missing = run(PreparedExec({"/nonexistent/program"}, {}, "rank 3: cannot run /nonexistent/program: "));
  EXPECT_TRUE(WIFEXITED(missing.status) && WEXITSTATUS(missing.status) == 127);
  EXPECT_EQ(missing.err, "rank 3: cannot run /nonexistent/program: No such file or directory\n");
  const Outcome not_in_path = run(PreparedExec({"augur-no-such-program-anywhere"}, {}, "x: "));
  EXPECT_TRUE(WIFEXITED(not_in_path.status) && WEXITSTATUS(not_in_path.status) == 127);
  EXPECT_EQ(not_in_path.err, "x: No such file or directory\n");
  // Not in PATH but in the working directory: not run (execvp would not either).
  char dir[] = "/tmp/augur-spawn-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string prog = std::string(dir) + "/augur-spawn-cwd-only";
  const int fd = open(prog.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "#!/bin/sh\necho ran\n", 19), 19);
  close(fd);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(dir), 0);
  const Outcome in_cwd = run(PreparedExec({"augur-spawn-cwd-only"}, {}, "z: "));
  ASSERT_EQ(chdir(cwd), 0);
  unlink(prog.c_str());
  rmdir(dir);
  EXPECT_TRUE(WIFEXITED(in_cwd.status) && WEXITSTATUS(in_cwd.status) == 127);
  EXPECT_EQ(in_cwd.out, "");
  EXPECT_EQ(in_cwd.err, "z: No such file or directory\n");
  const Outcome empty = run(PreparedExec({}, {}, "y: "));
  EXPECT_TRUE(WIFEXITED(empty.status) && WEXITSTATUS(empty.status) == 127);
}

}  // namespace
}  // namespace augur::host
