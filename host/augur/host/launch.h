// Remote launch: how augurrun starts ranks on other hosts. Each host runs augur-hostd; augurrun
// opens one TCP connection per remote rank, sends the rank's argv, environment and working
// directory, and gets back its output and, at the end, its wait status. The connection is the
// rank's lifeline: when it breaks (the launcher died), the daemon kills the rank and its process
// group, so a job never outlives its launcher on any host.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "augur/status.h"
#include "augur/unique_fd.h"

namespace augur::host::launch {

inline constexpr std::uint16_t kDefaultPort = 7117;

// Framing: a 12-byte header, big-endian, then `length` payload bytes.
enum class FrameType : std::uint8_t {
  kLaunch = 1,  // launcher -> daemon: a Request
  kSignal = 2,  // launcher -> daemon: u32 signal number for the rank's process group
  kStdout = 3,  // daemon -> launcher: bytes the rank wrote
  kStderr = 4,
  kExit = 5,    // daemon -> launcher: u32 wait status (as waitpid reports it); the last frame
  kError = 6,   // daemon -> launcher: why the launch was refused; the last frame
};
struct FrameHeader {
  static constexpr std::uint32_t kMagic = 0x41554c4e;  // "AULN"
  std::uint32_t magic;
  std::uint8_t type;
  std::uint8_t reserved[3];
  std::uint32_t length;
};
static_assert(sizeof(FrameHeader) == 12);
static_assert(offsetof(FrameHeader, type) == 4);
static_assert(offsetof(FrameHeader, length) == 8);

// Bounds on what a peer can make the other side hold.
inline constexpr std::uint32_t kMaxRequestBytes = 1u << 20;
inline constexpr std::uint32_t kMaxDataBytes = 64u << 10;
inline constexpr std::size_t kMaxStrings = 8192;

struct Frame {
  FrameType type;
  std::vector<unsigned char> payload;
};
// A frame's bytes: header and payload.
std::vector<unsigned char> encode_frame(FrameType type, std::span<const unsigned char> payload);
// Takes one complete frame off the front of `in` if there is one (nullopt: not yet); a bad magic,
// type or oversized length is kProtocol.
Result<std::optional<Frame>> take_frame(std::vector<unsigned char>& in);

struct Request {
  std::string token;              // must equal the daemon's AUGUR_HOSTD_TOKEN when it has one
  std::string cwd;                // the rank starts here (the launcher's directory)
  std::vector<std::string> argv;  // argv[0] is looked up in PATH like execvp does
  std::vector<std::string> env;   // NAME=value entries set on top of the daemon's environment
};

// Payload: token, cwd, u32 argc, argv..., u32 envc, env...; each string a u32 length and bytes.
std::vector<unsigned char> encode(const Request& r);
// Rejects truncated or oversized payloads, empty argv, NUL bytes inside strings and env entries
// without '=' (kProtocol, naming what is wrong).
Result<Request> decode(std::span<const unsigned char> payload);

// Runs `req` through the augur-hostd at host:port, copies the rank's output to out_fd and err_fd,
// and returns its wait status. A non-zero `*forward_signal` (set by a signal handler) is sent to
// the rank's process group and cleared. Fails if the daemon cannot be reached within
// `connect_timeout`, refuses the request, or the connection breaks before the rank's status.
Result<int> run_remote(const std::string& host, std::uint16_t port, const Request& req, int out_fd, int err_fd,
                       volatile sig_atomic_t* forward_signal, std::chrono::milliseconds connect_timeout);

// For placing ranks: is `host` this machine (localhost, 127.x, its hostname, an address of one of
// its interfaces)? And which local address would reach `host` (what remote ranks connect back to)?
bool is_local_host(const std::string& host);
Result<std::string> local_address_toward(const std::string& host);

// The daemon side. serve() accepts connections forever, each handled in its own child process
// that runs one rank (fork + exec, own process group, output over the connection).
class Daemon {
 public:
  static Result<Daemon> listen(const std::string& addr, std::uint16_t port, std::string token);
  Daemon(Daemon&&) noexcept = default;
  Daemon& operator=(Daemon&&) = delete;
  Daemon(const Daemon&) = delete;
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  // Returns only on a failure of the listening socket. Logs one line per launch on stderr.
  Status serve();

 private:
  Daemon(UniqueFd fd, std::uint16_t port, std::string token) : fd_(std::move(fd)), port_(port), token_(std::move(token)) {}
  UniqueFd fd_;
  std::uint16_t port_;
  std::string token_;
};

}  // namespace augur::host::launch
