#pragma once
// Socket options the scenario sets on real sockets that Asio has no wrapper for.
#include <string>

namespace tb::live {

// setsockopt(TCP_CONGESTION): per socket, so a namespace's restricted default does not matter
// (with CAP_NET_ADMIN any available algorithm may be chosen). False with errno set on failure.
bool set_congestion_control(int fd, const std::string& name);

}  // namespace tb::live
