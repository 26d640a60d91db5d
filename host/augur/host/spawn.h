// Starting a program in a forked child of a process that has threads. Between fork() and exec
// such a child may only make async-signal-safe calls: a malloc (setenv, std::string) can block
// forever on a lock another thread held at the fork. So everything the child needs (argv, the
// PATH lookup, the environment, the failure message) is built before the fork, and the child
// only calls PreparedExec::exec.
#pragma once

#include <string>
#include <vector>

namespace augur::host {

class PreparedExec {
 public:
  // args[0] is looked up in PATH as execvp would; `set_env` entries ("NAME=value") replace or
  // extend this process's environment; `fail_prefix` starts the message printed if exec fails.
  PreparedExec(std::vector<std::string> args, const std::vector<std::string>& set_env, std::string fail_prefix);
  PreparedExec(const PreparedExec&) = delete;
  PreparedExec& operator=(const PreparedExec&) = delete;

  // In the child: execve, or on failure "<fail_prefix><reason>\n" on stderr and _exit(127).
  // Async-signal-safe.
  [[noreturn]] void exec() const noexcept;

 private:
  std::string path_;
  std::vector<std::string> args_, env_;
  std::vector<char*> argv_, envp_;
  std::string fail_;
};

}  // namespace augur::host
