// The loopback device (AUGUR_DEVICE=loopback): a software RC transport inside one process, so
// that protocol code above nic/ runs and is tested without an RDMA device (ranks are threads).
//
// It keeps the verbs rules the layers above rely on, and checks what a NIC checks:
//  - local SGEs must lie in a registered region (else a LOC_PROT_ERR completion), remote ranges
//    in one registered with the right access under the given rkey (else REM_ACCESS_ERR);
//  - a SEND or WRITE-with-immediate consumes the peer's oldest posted receive, and waits (as
//    rnr_retry=7 does) while none is posted; a message longer than the receive is LOC_LEN_ERR at
//    the receiver and REM_INV_REQ_ERR at the sender, and both QPs go to the error state;
//  - a QP's work executes in posting order; completions of a CQ come out in order; an error
//    state flushes every outstanding request (WR_FLUSH_ERR); a peer QP that is gone or broken
//    fails the sender with RETRY_EXC_ERR;
//  - send and receive queue depths and the CQ's size are enforced (a full CQ is an overrun);
//  - CQ events follow request_notify: one event on the channel for the first completion after.
// Work executes synchronously, under one process-wide lock, in the thread that posts it (or in
// the thread whose post_recv unblocks it). Data is copied at execution, not at post (inline
// sends excepted), so a buffer reused before its completion shows up as wrong data.
//  - a QP attached to an SRQ takes its receives from it (oldest first, whichever QP posted the
//    SEND), an SRQ's depth is enforced, and a QP's error flushes none of the SRQ's receives.
// Not modelled: atomics, unsignaled-send queue accounting, partial failures mid-message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "augur/compiler.h"
#include "augur/nic/verbs.h"
#include "augur/nic/wire.h"
#include "augur/status.h"

namespace augur::nic::loop {

inline constexpr std::string_view kDeviceName = "loopback";

struct Mr;
struct Channel;
struct Cq;
struct Qp;
struct Srq;

Result<Mr*> register_memory(void* addr, std::size_t length, std::uint32_t access);
void deregister(Mr* mr) noexcept;
void* mr_addr(const Mr& mr) noexcept;
std::size_t mr_length(const Mr& mr) noexcept;
std::uint32_t mr_key(const Mr& mr) noexcept;

Result<Channel*> create_channel();
void destroy(Channel* ch) noexcept;
int channel_fd(const Channel& ch) noexcept;

Result<Cq*> create_cq(int min_entries, Channel* ch);
void destroy(Cq* cq) noexcept;
Status resize(Cq& cq, int min_entries);
// The operations on the per-message path stay out of line: verbs.cpp calls them from the
// functions that AUGUR_HOT_PATH flattens into the eager send and the completion handler, and
// inlined there they made the device path 70 instructions a send and 23 a completion longer
// (callgrind of augur-perf-lat in the guest, 276c68b against 4ef67b0, the build before it that
// was measured).
AUGUR_COLD_PATH Result<std::size_t> poll(Cq& cq, std::span<Completion> out);
AUGUR_COLD_PATH Status request_notify(Cq& cq);
AUGUR_COLD_PATH Status consume_event(Channel& ch);

Result<Srq*> create_srq(std::uint32_t max_wr);
void destroy(Srq* srq) noexcept;
AUGUR_COLD_PATH Status post_srq_recv(Srq& srq, std::uint64_t wr_id, std::span<const Sge> sges);

Result<Qp*> create_qp(Cq& send_cq, Cq& recv_cq, const QpCaps& caps, Srq* srq = nullptr);
void destroy(Qp* qp) noexcept;
std::uint32_t qp_num(const Qp& qp) noexcept;
Status connect(Qp& qp, const QpAddress& remote);
AUGUR_COLD_PATH Status post_send(Qp& qp, const SendRequest& wr);
AUGUR_COLD_PATH Status post_recv(Qp& qp, std::uint64_t wr_id, std::span<const Sge> sges);
AUGUR_COLD_PATH Status to_error(Qp& qp);
bool in_error(const Qp& qp);

// The device's fixed attributes.
PortAttr port_attr(std::uint8_t port);
DeviceLimits limits();
Gid gid();

}  // namespace augur::nic::loop
