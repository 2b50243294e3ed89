// The simulated TCP: Connection teardown: TIME_WAIT on the side that closes first.
#include <gtest/gtest.h>

#include <ns3/inet-socket-address.h>
#include <ns3/ipv4-address.h>
#include <ns3/ipv4-header.h>
#include <ns3/point-to-point-net-device.h>
#include <ns3/ppp-header.h>
#include <ns3/tcp-header.h>

#include <chrono>
#include <optional>
#include <string>

#include "tcp_fixture.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/sim/linux_tcp_socket.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

// ---- connection teardown ----

TEST(SimTimeWait, TheSideThatClosesFirstHoldsTimeWaitForSixtySeconds) {
  // Linux's TCP_TIMEWAIT_LEN (ns-3's default would be 2 x 120 s). The client closes an idle
  // connection, the server closes on its EOF, the client waits in TIME_WAIT, then frees its port.
  SimulationScope scope(1);
  NsScheduler scheduler;
  SimNetwork net(path(), 1);
  auto socket = create_tcp_socket(net.client_node(), scenario::resolve(twinbench::Tcp{}),
                                  net.link().mtu_bytes, 1);
  using State = ns3::TcpSocket::TcpStates_t;
  std::optional<Time> time_wait;
  std::optional<Time> closed;
  State state = ns3::TcpSocket::CLOSED;
  socket->TraceConnectWithoutContext("State",
                                     ns3::Callback<void, State, State>([&](State, State to) {
                                       state = to;
                                       if (to == ns3::TcpSocket::TIME_WAIT)
                                         time_wait = scheduler.now();
                                       if (to == ns3::TcpSocket::CLOSED) closed = scheduler.now();
                                     }));
  socket->Bind();
  socket->Connect(ns3::InetSocketAddress(ns3::Ipv4Address(SimNetwork::kServerAddress),
                                         SimNetwork::kServerPort));
  ASSERT_TRUE(scheduler.run_until([&] { return state == ns3::TcpSocket::ESTABLISHED; }, 5s));
  socket->Close();
  ASSERT_TRUE(scheduler.run_until([&] { return closed.has_value(); }, 300s));
  ASSERT_TRUE(time_wait.has_value());
  EXPECT_EQ(*closed - *time_wait, Duration(60s));
}

}  // namespace
}  // namespace tb::sim
