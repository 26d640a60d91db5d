#include "augur/host/spawn.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

namespace augur::host {
namespace {

std::string find_in_path(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t at = 0; at <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', at), dirs.size());
    const std::string dir = end > at ? dirs.substr(at, end - at) : ".";
    if (const std::string full = dir + "/" + name; ::access(full.c_str(), X_OK) == 0) return full;
    at = end + 1;
  }
  return {};  // not found: the child reports ENOENT (never a same-named file in the cwd)
}

std::string_view name_of(std::string_view kv) { return kv.substr(0, kv.find('=')); }

}  // namespace

PreparedExec::PreparedExec(std::vector<std::string> args, const std::vector<std::string>& set_env, std::string fail_prefix)
    : args_(std::move(args)), fail_(std::move(fail_prefix)) {
  path_ = args_.empty() ? std::string() : find_in_path(args_[0]);  // empty: nothing to run
  for (char** v = environ; *v != nullptr; ++v) {
    const std::string_view kv(*v);
    if (std::none_of(set_env.begin(), set_env.end(), [&](const std::string& s) { return name_of(s) == name_of(kv); })) {
      env_.emplace_back(kv);
    }
  }
  env_.insert(env_.end(), set_env.begin(), set_env.end());
  for (auto& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
  for (auto& e : env_) envp_.push_back(e.data());
  envp_.push_back(nullptr);
}

void PreparedExec::exec() const noexcept {
  if (!path_.empty()) ::execve(path_.c_str(), argv_.data(), envp_.data());
  const int err = path_.empty() ? ENOENT : errno;
  const char* why = ::strerrordesc_np(err);
  (void)!::write(STDERR_FILENO, fail_.data(), fail_.size());
  if (why != nullptr) (void)!::write(STDERR_FILENO, why, std::strlen(why));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::_exit(127);
}

}  // namespace augur::host
