#pragma once
// One doubling back-off for every wait that grows with failures: the client's retries, a job's
// back-off and pause, a refused tracking mark, the service's first contact with the provider.
#include <algorithm>
#include <chrono>

namespace fulfillsync {

struct Doubling {
  std::chrono::milliseconds first;
  std::chrono::milliseconds longest;

  // The wait after `failures` failures in a row: nothing before the first, then `first` doubling
  // each time, never beyond `longest`.
  constexpr std::chrono::milliseconds after(int failures) const {
    if (failures <= 0) return std::chrono::milliseconds(0);
    std::chrono::milliseconds wait = first;
    for (int i = 1; i < failures && wait < longest; ++i) wait *= 2;
    return std::min(wait, longest);
  }

  // The wait that follows `current` (0 when nothing failed yet).
  constexpr std::chrono::milliseconds next(std::chrono::milliseconds current) const {
    return current <= std::chrono::milliseconds(0) ? std::min(first, longest) : std::min(current * 2, longest);
  }
};

}  // namespace fulfillsync
