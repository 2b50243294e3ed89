// SPDX-License-Identifier: GPL-2.0-only
// Reimplements ns-3.37's Mac48Address constructor, which is GPL-2.0-only (LICENSE).
// Mac48Address's constructor from text: PointToPointNetDevice::GetBroadcast, which Ipv4Interface
// asks for every packet sent, returns Mac48Address("ff:ff:ff:ff:ff:ff"), parsed digit by digit
// each time. Ours sets the six 0xff bytes for that text and lets ns-3 parse any other.
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

ns3::Mac48Address::Mac48Address(const char* str) {
  if (tb::ns3_fast_paths::ns3_fast_path_on(tb::ns3_fast_paths::Ns3FastPath::kMac48Broadcast) &&
      std::strcmp(str, "ff:ff:ff:ff:ff:ff") == 0) {
    std::fill(std::begin(m_address), std::end(m_address), 0xff);
    return;
  }
  tb::ns3_fast_paths::library_mac48_address_from_text()(this, str);
}
