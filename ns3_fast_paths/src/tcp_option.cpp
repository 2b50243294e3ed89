// SPDX-License-Identifier: GPL-2.0-only
// Reimplements ns-3.37's TcpOption::CreateOption, which is GPL-2.0-only (LICENSE).
// TcpOption::CreateOption, which TcpHeader::Deserialize calls for every option of every header
// read (three times per segment received: TcpL4Protocol and TcpSocketBase::ForwardUp peek at the
// header, DoForwardUp removes it), makes the option through an ObjectFactory: a TypeId lookup and
// a dynamic_cast across shared libraries that compares type names, ~7 % of a file download. Ours
// creates the same class directly, with the same construction (CreateObject: the registered
// constructor, SetTypeId, Construct). Making and freeing objects was still ~8 % of a plain 1 MiB
// download (a timestamp option and its END padding per read), so ours hands out one END and one
// NOP object, which hold nothing (their Deserialize only checks the kind byte), and reuses a
// timestamp option that no header holds any more, set back to zero as a new one is (reading it
// sets both fields, or fails and the header drops it). Headers hold options as
// Ptr<const TcpOption>, and copying a header shares them too, so only the objects' addresses
// differ from ns-3's.
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

std::atomic<std::uint64_t> tcp_options_reused{0};

// END and NOP hold nothing that reading them sets: one object of each per thread serves every
// header (ns-3's Ptr counts are not atomic, so not across threads).
template <typename Option>
ns3::Ptr<Option> shared_option() {
  thread_local const ns3::Ptr<Option> option = ns3::CreateObject<Option>();
  tcp_options_reused.fetch_add(1, std::memory_order_relaxed);
  return option;
}

// A timestamp option that no header holds any more (only this pool counts it), set back to what a
// new one holds; a new one when all are held. A received segment's header is read three times
// while the earlier reads are still alive, and an ACK sent in between reads none.
ns3::Ptr<ns3::TcpOptionTS> recycled_timestamp_option() {
  thread_local std::array<ns3::Ptr<ns3::TcpOptionTS>, 8> pool;
  for (auto& option : pool) {
    if (!option) {
      option = ns3::CreateObject<ns3::TcpOptionTS>();
      return option;
    }
    if (option->GetReferenceCount() == 1) {
      option->SetTimestamp(0);
      option->SetEcho(0);
      tcp_options_reused.fetch_add(1, std::memory_order_relaxed);
      return option;
    }
  }
  return ns3::CreateObject<ns3::TcpOptionTS>();
}

}  // namespace

std::uint64_t tb::ns3_fast_paths::ns3_tcp_options_reused() {
  return tcp_options_reused.load(std::memory_order_relaxed);
}

ns3::Ptr<ns3::TcpOption> ns3::TcpOption::CreateOption(uint8_t kind) {
  if (!tb::ns3_fast_paths::ns3_fast_path_on(tb::ns3_fast_paths::Ns3FastPath::kCreateOption))
    return tb::ns3_fast_paths::library_create_option()(kind);
  switch (kind) {
    case END:
      return shared_option<TcpOptionEnd>();
    case MSS:
      return CreateObject<TcpOptionMSS>();
    case NOP:
      return shared_option<TcpOptionNOP>();
    case TS:
      return recycled_timestamp_option();
    case WINSCALE:
      return CreateObject<TcpOptionWinScale>();
    case SACKPERMITTED:
      return CreateObject<TcpOptionSackPermitted>();
    case SACK:
      return CreateObject<TcpOptionSack>();
    default:
      return CreateObject<TcpOptionUnknown>();
  }
}
