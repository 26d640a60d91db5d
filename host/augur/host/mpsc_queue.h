// A lock-free multi-producer single-consumer queue (Vyukov's intrusive design): application
// threads push commands, the assist thread pops them. push is wait-free (one exchange); pop may
// briefly see a push in progress and report empty, and the consumer simply polls again.
#pragma once

#include <atomic>

namespace augur::host {

template <typename T>  // T has `std::atomic<T*> next`
class MpscQueue {
 public:
  MpscQueue() : head_(&stub_), tail_(&stub_) {}
  MpscQueue(const MpscQueue&) = delete;
  MpscQueue& operator=(const MpscQueue&) = delete;

  void push(T* n) noexcept {
    n->next.store(nullptr, std::memory_order_relaxed);
    T* prev = head_.exchange(n, std::memory_order_seq_cst);  // seq_cst: the engine's wake-up protocol
    prev->next.store(n, std::memory_order_release);
  }

  // Consumer only. nullptr when empty (or when a push has not finished linking yet).
  T* pop() noexcept {
    T* tail = tail_;
    T* next = tail->next.load(std::memory_order_acquire);
    if (tail == &stub_) {
      if (next == nullptr) return nullptr;
      tail_ = next;
      tail = next;
      next = next->next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
      tail_ = next;
      return tail;
    }
    if (tail != head_.load(std::memory_order_acquire)) return nullptr;  // a push is mid-way
    push(&stub_);
    next = tail->next.load(std::memory_order_acquire);
    if (next != nullptr) {
      tail_ = next;
      return tail;
    }
    return nullptr;
  }

  // Consumer only: false also while a push is in progress (the consumer then polls again).
  [[nodiscard]] bool empty() const noexcept {
    return tail_ == &stub_ && stub_.next.load(std::memory_order_acquire) == nullptr &&
           head_.load(std::memory_order_seq_cst) == &stub_;
  }

 private:
  std::atomic<T*> head_;  // producers
  T* tail_;               // consumer
  T stub_{};
};

}  // namespace augur::host
