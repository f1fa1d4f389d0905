#pragma once
// A metric family's children found by their label values. prometheus-cpp's Family::Add builds a
// label map, hashes it, takes the family's lock and constructs a child it then throws away on every
// call; the API client and the push jobs count per request and per order, so each child is looked
// up here by its values instead, in a key buffer that stops allocating once it has grown. An
// instance is used from one thread (the daemon's loop); the family's own lock still guards adding
// a child against a scrape. Children are never removed from these families, so the pointers stay
// valid.
#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <prometheus/family.h>

namespace fulfillsync::api {

template <typename Metric, std::size_t N>
class MetricChildren {
 public:
  MetricChildren(prometheus::Family<Metric>& family, std::array<std::string, N> label_names)
      : family_(family), label_names_(std::move(label_names)) {}

  // The child with these label values (in the order of the names); `args` construct it the first
  // time (a histogram's buckets).
  template <typename... Args>
  Metric& with(const std::array<std::string_view, N>& values, const Args&... args) {
    key_.clear();
    for (const std::string_view value : values) key_.append(value).push_back('\0');
    if (const auto found = children_.find(key_); found != children_.end()) return *found->second;
    prometheus::Labels labels;
    for (std::size_t i = 0; i < N; ++i) labels.emplace(label_names_[i], std::string(values[i]));
    Metric& child = family_.Add(labels, args...);
    children_.emplace(key_, &child);
    return child;
  }

 private:
  prometheus::Family<Metric>& family_;
  std::array<std::string, N> label_names_;
  std::map<std::string, Metric*, std::less<>> children_;
  std::string key_;
};

}  // namespace fulfillsync::api
