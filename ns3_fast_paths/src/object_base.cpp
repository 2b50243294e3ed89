// SPDX-License-Identifier: GPL-2.0-only
// Reimplements ns-3.37's ObjectBase::ConstructSelf, which is GPL-2.0-only (LICENSE).
// ObjectBase::ConstructSelf, which every CreateObject runs, walks the new object's type and each
// parent looking for attributes to set, through the TypeId registry (~9 % of a plain download:
// each segment sent and each header read makes TCP options, which have none). Ours remembers, per
// type (found on its first construction), whether its chain has any attribute; when it has none
// and no attribute was given, setting nothing is all ns-3's walk would do, so only
// NotifyConstructionCompleted runs. Otherwise ours walks as ns-3's does, setting each attribute
// from the construction list or the type's current initial value, but without ns-3's logging,
// which formats every value to a string even when nothing is logged (~2.5 % of a plain 1 MiB
// download's instructions: a simulation builds ~80 objects with attributes), and without looking
// each name up in NS_ATTRIBUTE_DEFAULT (with that set, ns-3's own function runs). Two differences,
// neither seen by twinbench: NS_LOG=ObjectBase prints no "construct" lines, and a type that gained
// an attribute after its first construction (ns-3 adds them in GetTypeId) would not get it.
#include "twinbench/ns3_fast_paths/fast_paths.hpp"

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

// Per TypeId uid (a uint16_t): 0 not seen yet, 1 no attribute in its chain, 2 some. Written by
// whichever thread sees the type first; every writer writes the same value.
std::array<std::atomic<std::uint8_t>, 1 << 16> chain_attributes{};

bool chain_has_attributes(ns3::TypeId tid) {
  std::atomic<std::uint8_t>& known = chain_attributes[tid.GetUid()];
  if (const std::uint8_t k = known.load(std::memory_order_relaxed); k != 0) return k == 2;
  bool some = false;
  // ns-3's walk: the type and its parents, up to but not including ObjectBase.
  for (ns3::TypeId t = tid; t != ns3::ObjectBase::GetTypeId(); t = t.GetParent())
    some = some || t.GetAttributeN() > 0;
  known.store(some ? 2 : 1, std::memory_order_relaxed);
  return some;
}

std::atomic<std::uint64_t> constructions_skipped{0};

// NS_ATTRIBUTE_DEFAULT gives attributes values by name: ns-3's own walk looks each one up there.
bool attribute_defaults_in_environment() {
  static const bool present = [] {
    const char* defaults = std::getenv("NS_ATTRIBUTE_DEFAULT");
    return defaults != nullptr && *defaults != '\0';
  }();
  return present;
}

std::atomic<std::uint64_t> constructions_set_quietly{0};

}  // namespace

std::uint64_t tb::ns3_fast_paths::ns3_constructions_skipped() {
  return constructions_skipped.load(std::memory_order_relaxed);
}

std::uint64_t tb::ns3_fast_paths::ns3_constructions_set_quietly() {
  return constructions_set_quietly.load(std::memory_order_relaxed);
}

void ns3::ObjectBase::ConstructSelf(const AttributeConstructionList& attributes) {
  const auto library = tb::ns3_fast_paths::library_construct_self();
  if (!tb::ns3_fast_paths::ns3_fast_path_on(tb::ns3_fast_paths::Ns3FastPath::kConstructSelf)) return library(this, attributes);
  const TypeId instance = GetInstanceTypeId();
  if (attributes.Begin() == attributes.End() && !chain_has_attributes(instance)) {
    constructions_skipped.fetch_add(1, std::memory_order_relaxed);
    NotifyConstructionCompleted();
    return;
  }
  if (attribute_defaults_in_environment()) return library(this, attributes);
  // ns-3's walk without its logging, which formats every value (SerializeToString) even when
  // nothing is logged, and without the environment lookup, which has nothing to find.
  TypeId tid = instance;
  do {
    for (std::size_t i = 0; i < tid.GetAttributeN(); ++i) {
      const TypeId::AttributeInformation info = tid.GetAttribute(i);
      Ptr<const AttributeValue> value = attributes.Find(info.checker);
      if (!(info.flags & TypeId::ATTR_CONSTRUCT)) {
        if (!value) continue;
        return library(this, attributes);  // ns-3's fatal error: not settable at construction
      }
      DoSet(info.accessor, info.checker, value ? *value : *info.initialValue);
    }
    tid = tid.GetParent();
  } while (tid != ObjectBase::GetTypeId());
  constructions_set_quietly.fetch_add(1, std::memory_order_relaxed);
  NotifyConstructionCompleted();
}
