// SPDX-License-Identifier: GPL-2.0-only
// Reimplements ns-3.37's Node::ChecksumEnabled and GlobalValue setters, GPL-2.0-only (LICENSE).
// Node::ChecksumEnabled, which the IP and TCP layers ask about five times per segment, copies the
// "ChecksumEnabled" global value through its checker each time (~2.5 % of a plain 1 MiB
// download). Ours remembers the answer until a global value is next set: it counts the calls that
// set one (GlobalValue's Bind, BindFailSafe, SetValue and ResetInitialValue, which ns-3 and its
// users reach through the PLT, so these definitions see every one; the calls between them inside
// global-value.cc start from one of them) and asks ns-3 again when the count moved.
#include "twinbench/ns3_fast_paths/fast_paths.hpp"

#include "resolved.hpp"

#include <ns3/data-rate.h>
#include <ns3/global-value.h>
#include <ns3/nstime.h>
#include <ns3/mac48-address.h>
#include <ns3/node.h>
#include <ns3/object.h>
#include <ns3/rng-stream.h>
#include <ns3/tcp-option-rfc793.h>
#include <ns3/tcp-option-sack-permitted.h>
#include <ns3/tcp-option-sack.h>
#include <ns3/tcp-option-ts.h>
#include <ns3/tcp-option-winscale.h>
#include <ns3/tcp-option.h>
#include <ns3/version-defines.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

std::atomic<std::uint64_t> global_value_changes{0};

}  // namespace

std::uint64_t tb::ns3_fast_paths::ns3_global_value_changes() {
  return global_value_changes.load(std::memory_order_acquire);
}

// Each counts before and after: a reader that saw the count before a change began asks again.
void ns3::GlobalValue::Bind(std::string name, const AttributeValue& value) {
  const auto library = tb::ns3_fast_paths::resolved<tb::ns3_fast_paths::GlobalBindFunction, tb::ns3_fast_paths::kGlobalBindSymbol>();
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  library(std::move(name), value);
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
}

bool ns3::GlobalValue::BindFailSafe(std::string name, const AttributeValue& value) {
  const auto library =
      tb::ns3_fast_paths::resolved<tb::ns3_fast_paths::GlobalBindFailSafeFunction, tb::ns3_fast_paths::kGlobalBindFailSafeSymbol>();
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  const bool bound = library(std::move(name), value);
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  return bound;
}

bool ns3::GlobalValue::SetValue(const AttributeValue& value) {
  const auto library =
      tb::ns3_fast_paths::resolved<tb::ns3_fast_paths::GlobalSetValueFunction, tb::ns3_fast_paths::kGlobalSetValueSymbol>();
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  const bool set = library(this, value);
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  return set;
}

void ns3::GlobalValue::ResetInitialValue() {
  const auto library = tb::ns3_fast_paths::resolved<tb::ns3_fast_paths::GlobalResetInitialValueFunction,
                                         tb::ns3_fast_paths::kGlobalResetInitialValueSymbol>();
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  library(this);
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
}

bool ns3::Node::ChecksumEnabled() {
  if (!tb::ns3_fast_paths::ns3_fast_path_on(tb::ns3_fast_paths::Ns3FastPath::kChecksumEnabled))
    return tb::ns3_fast_paths::library_checksum_enabled()();
  struct Remembered {
    std::uint64_t changes = ~std::uint64_t{0};
    bool enabled = false;
  };
  thread_local Remembered remembered;
  const std::uint64_t changes = global_value_changes.load(std::memory_order_acquire);
  if (remembered.changes == changes && changes % 2 == 0) return remembered.enabled;
  const bool enabled = tb::ns3_fast_paths::library_checksum_enabled()();
  if (global_value_changes.load(std::memory_order_acquire) == changes)
    remembered = {changes, enabled};
  return enabled;
}
