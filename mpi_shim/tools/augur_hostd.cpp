// augur-hostd: runs on every host but the launcher's and starts ranks for augurrun (see
// host/augur/host/launch.h). It runs whatever a connecting launcher asks for, as the user it runs
// as: bind it to the cluster's private network, and set AUGUR_HOSTD_TOKEN where others can reach it.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "augur/host/launch.h"
#include "augur/settings.h"

int main(int argc, char** argv) {
  std::string addr = "0.0.0.0";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--listen" && i + 1 < argc) {
      addr = argv[++i];
    } else if (a == "-h" || a == "--help") {
      std::puts("usage: augur-hostd [--listen IPV4]   (port: AUGUR_HOSTD_PORT; secret: AUGUR_HOSTD_TOKEN)");
      return 0;
    } else {
      std::fprintf(stderr, "augur-hostd: unknown argument %s (try --help)\n", a.c_str());
      return 2;
    }
  }
  auto port = augur::setting_int("AUGUR_HOSTD_PORT");
  auto token = augur::setting_string("AUGUR_HOSTD_TOKEN");
  if (!port.ok() || !token.ok()) {
    std::fprintf(stderr, "augur-hostd: %s\n", (!port.ok() ? port.status() : token.status()).to_string().c_str());
    return 2;
  }
  auto d = augur::host::launch::Daemon::listen(addr, static_cast<std::uint16_t>(port.value()), token.value());
  if (!d.ok()) {
    std::fprintf(stderr, "augur-hostd: %s\n", d.status().to_string().c_str());
    return 1;
  }
  std::fprintf(stderr, "augur-hostd: listening on %s:%u%s\n", addr.c_str(), d.value().port(),
               token.value().empty() ? "" : " (token required)");
  const augur::Status s = d.value().serve();
  std::fprintf(stderr, "augur-hostd: %s\n", s.to_string().c_str());
  return 1;
}
