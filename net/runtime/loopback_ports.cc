#include "net/runtime/loopback_ports.h"

#include <memory>

#include "net/runtime/asio.h"

namespace distlab::net {

// Ports the kernel says are free now. Another process may take one before
// the task binds it; the task then fails with "cannot listen", and the
// launcher says so.
std::vector<uint16_t> free_loopback_ports(int count) {
  boost::asio::io_context io;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> held;
  std::vector<uint16_t> ports;
  for (int i = 0; i < count; ++i) {
    auto acceptor = std::make_unique<boost::asio::ip::tcp::acceptor>(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    ports.push_back(acceptor->local_endpoint().port());
    held.push_back(std::move(acceptor));  // held until all are chosen: no duplicates
  }
  return ports;
}

}  // namespace distlab::net
