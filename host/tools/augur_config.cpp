// augur-config: prints every AUGUR_* setting with its current value, default and meaning.
#include <cstdio>
#include <cstring>

#include "augur/settings.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--print-config") != 0) {
    std::fprintf(stderr, "usage: %s [--print-config]\n", argv[0]);
    return 2;
  }
  std::fputs(augur::format_settings().c_str(), stdout);
  return 0;
}
