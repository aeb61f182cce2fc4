#include "monitor/channel.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "log/log.hpp"
#include "monitor/handshake.hpp"

namespace mpisentry::monitor {
namespace {

using SteadyClock = std::chrono::steady_clock;
using Deadline = SteadyClock::time_point;

constexpr int kEndpointTag = 1;
constexpr std::uint64_t kHelloMagic = 0x6d7073656e747231;  // "mpsentr1"
constexpr char kWelcome = 'Y';
// A connection that says nothing within this is not one of ours.
constexpr auto kHelloBound = std::chrono::seconds(2);

// Hosts of one job share a byte order: Summary goes as it is in memory.
static_assert(sizeof(Summary) == Summary::kFields * sizeof(std::int64_t));

// Ranks in one network namespace of one host can reach each other's loopback.
std::string network_stack_key() {
  std::array<char, 64> netns{};
  const ssize_t length = readlink("/proc/self/ns/net", netns.data(), netns.size() - 1);
  return handshake::host_name() + '|' + (length > 0 ? std::string(netns.data(), static_cast<std::size_t>(length)) : "");
}

bool is_loopback(std::uint32_t address) { return (address >> 24) == 127; }

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

int milliseconds_left(Deadline deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
}

// False at the deadline; errno says why otherwise.
bool wait_for(int fd, short events, Deadline deadline) {
  while (true) {
    pollfd ready{fd, events, 0};
    const int result = poll(&ready, 1, milliseconds_left(deadline));
    if (result > 0) return true;
    if (result == 0) {
      errno = ETIMEDOUT;
      return false;
    }
    if (errno != EINTR) return false;
  }
}

// On a nonblocking socket, by `deadline`. False with errno set (0 at the peer's close).
bool read_exact_by(int fd, void* into, std::size_t size, Deadline deadline) {
  auto* bytes = static_cast<char*>(into);
  while (size > 0) {
    const ssize_t got = recv(fd, bytes, size, 0);
    if (got > 0) {
      bytes += got;
      size -= static_cast<std::size_t>(got);
    } else if (got == 0) {
      errno = 0;
      return false;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (!wait_for(fd, POLLIN, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool write_all_by(int fd, const void* from, std::size_t size, Deadline deadline) {
  const auto* bytes = static_cast<const char*>(from);
  while (size > 0) {
    // MSG_NOSIGNAL: a closed peer must not raise SIGPIPE in the program.
    const ssize_t sent = ::send(fd, bytes, size, MSG_NOSIGNAL);
    if (sent > 0) {
      bytes += sent;
      size -= static_cast<std::size_t>(sent);
    } else if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!wait_for(fd, POLLOUT, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}

std::string error_text(int error) { return error == 0 ? "the connection closed" : std::strerror(error); }

// Every interface that is up with an IPv4 address (only those named in
// `wanted`, when any), loopback last.
std::vector<std::uint32_t> local_addresses(const config::InterfaceList& wanted) {
  std::vector<std::uint32_t> addresses;
  ifaddrs* interfaces = nullptr;
  if (getifaddrs(&interfaces) != 0) return addresses;
  for (const ifaddrs* each = interfaces; each; each = each->ifa_next) {
    if (!each->ifa_addr || each->ifa_addr->sa_family != AF_INET || !(each->ifa_flags & IFF_UP)) continue;
    if (!wanted.names.empty() && std::ranges::find(wanted.names, each->ifa_name) == wanted.names.end()) continue;
    addresses.push_back(ntohl(reinterpret_cast<const sockaddr_in*>(each->ifa_addr)->sin_addr.s_addr));
  }
  freeifaddrs(interfaces);
  std::ranges::stable_partition(addresses, [](std::uint32_t address) { return !is_loopback(address); });
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  return addresses;
}

// A listening socket on a port of `ports`; -1 with `error` set.
int listen_on(const config::PortRange& ports, int& port, std::string& error) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = fmt::format("cannot make a TCP socket: {}", std::strerror(errno));
    return -1;
  }
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  int bind_error = 0;
  for (int candidate = ports.first; candidate <= ports.last; ++candidate) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<std::uint16_t>(candidate));
    if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      bind_error = errno;
      continue;
    }
    socklen_t length = sizeof(address);
    if (listen(fd, SOMAXCONN) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      bind_error = errno;
      break;
    }
    port = ntohs(address.sin_port);
    return fd;
  }
  error = ports.first == 0 ? fmt::format("cannot listen on a TCP port: {}", std::strerror(bind_error))
                           : fmt::format("cannot listen on any port of MONITOR-PORTS {}: {}",
                                         config::format_port_range(ports), std::strerror(bind_error));
  close(fd);
  return -1;
}

// A nonblocking connected socket, or -1 with errno set.
int connect_by(std::uint32_t address, int port, Deadline deadline) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(address);
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  int error = 0;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      socklen_t length = sizeof(error);
      error = wait_for(fd, POLLOUT, deadline) ? 0 : errno;
      if (error == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
    }
  }
  if (error == 0) return fd;
  close(fd);
  errno = error;
  return -1;
}

// What a child sends first: the magic, its parent's token, its rank, its host.
std::string hello(std::uint64_t token, int rank, const std::string& host) {
  std::string bytes(sizeof(kHelloMagic) + sizeof(token) + sizeof(std::int32_t), '\0');
  const std::int32_t rank32 = rank;
  std::memcpy(bytes.data(), &kHelloMagic, sizeof(kHelloMagic));
  std::memcpy(bytes.data() + 8, &token, sizeof(token));
  std::memcpy(bytes.data() + 16, &rank32, sizeof(rank32));
  bytes += static_cast<char>(std::min<std::size_t>(host.size(), 255));
  bytes.append(host, 0, 255);
  return bytes;
}

struct Hello {
  int rank = -1;
  std::string host;
};

// The hello of a connection a parent accepted, if it is one of its children's.
std::optional<Hello> read_hello(int fd, std::uint64_t token, Deadline deadline) {
  std::array<char, 21> fixed{};
  if (!read_exact_by(fd, fixed.data(), fixed.size(), deadline)) return std::nullopt;
  std::uint64_t magic = 0, their_token = 0;
  std::int32_t rank = -1;
  std::memcpy(&magic, fixed.data(), 8);
  std::memcpy(&their_token, fixed.data() + 8, 8);
  std::memcpy(&rank, fixed.data() + 16, 4);
  if (magic != kHelloMagic || their_token != token) return std::nullopt;
  Hello hello{rank, std::string(static_cast<unsigned char>(fixed[20]), '\0')};
  if (!read_exact_by(fd, hello.host.data(), hello.host.size(), deadline)) return std::nullopt;
  return hello;
}

void make_blocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

std::string place(int rank, const std::string& host) { return handshake::str({rank, host}); }

void put_u32(std::string& into, std::uint32_t value) {
  value = htonl(value);
  into.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

std::uint32_t get_u32(const std::string& from, std::size_t at) {
  std::uint32_t value = 0;
  std::memcpy(&value, from.data() + at, sizeof(value));
  return ntohl(value);
}

}  // namespace

TreeLinks tree_links(int rank, int ranks) {
  TreeLinks links;
  if (rank > 0) links.parent = rank & (rank - 1);
  // The children add each lower bit than rank's lowest set one (any bit for rank 0).
  const long lowest = rank == 0 ? LONG_MAX : static_cast<long>(rank & -rank);
  for (long bit = 1; bit < lowest && rank + bit < ranks; bit <<= 1) links.children.push_back(static_cast<int>(rank + bit));
  return links;
}

// Lines of "key value": the values hold no newline (host names cannot).
std::string encode(const Endpoint& endpoint) {
  if (!endpoint.error.empty()) return "error " + endpoint.error + '\n';
  std::string text = fmt::format("host {}\nkey {}\nport {}\ntoken {}\n", endpoint.host, endpoint.host_key,
                                 endpoint.port, endpoint.token);
  for (std::uint32_t address : endpoint.addresses) text += fmt::format("address {}\n", address);
  return text;
}

Endpoint decode_endpoint(const std::string& text) {
  Endpoint endpoint;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    if (end == std::string::npos) throw std::invalid_argument("an endpoint line without its end");
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    const std::size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? std::string() : line.substr(space + 1);
    try {
      if (key == "error") endpoint.error = value;
      else if (key == "host") endpoint.host = value;
      else if (key == "key") endpoint.host_key = value;
      else if (key == "port") endpoint.port = std::stoi(value);
      else if (key == "token") endpoint.token = std::stoull(value);
      else if (key == "address") endpoint.addresses.push_back(static_cast<std::uint32_t>(std::stoul(value)));
      else throw std::invalid_argument("unknown endpoint field \"" + key + "\"");
    } catch (const std::logic_error&) {
      throw std::invalid_argument("bad endpoint line \"" + line + "\"");
    }
  }
  return endpoint;
}

std::vector<std::uint32_t> connect_order(const Endpoint& parent, bool same_stack) {
  std::vector<std::uint32_t> order = parent.addresses;
  if (same_stack) std::ranges::stable_partition(order, is_loopback);
  return order;
}

std::string address_text(std::uint32_t address, int port) {
  return fmt::format("{}.{}.{}.{}:{}", address >> 24, (address >> 16) & 0xff, (address >> 8) & 0xff, address & 0xff,
                     port);
}

std::optional<Channel> Channel::open(MPI_Comm comm, const config::Settings& settings) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const TreeLinks links = tree_links(rank, size);
  Channel channel(rank, size);
  std::vector<std::string> problems;

  Endpoint mine;
  mine.host = handshake::host_name();
  mine.host_key = network_stack_key();
  int listener = -1;
  if (!links.children.empty()) {
    mine.addresses = local_addresses(settings.monitor_interfaces);
    if (mine.addresses.empty())
      mine.error = settings.monitor_interfaces.names.empty()
                       ? "no network interface with an IPv4 address is up"
                       : fmt::format("no interface of MONITOR-INTERFACES {} is up with an IPv4 address",
                                     config::format_interface_list(settings.monitor_interfaces));
    else
      listener = listen_on(settings.monitor_ports, mine.port, mine.error);
    std::random_device entropy;
    mine.token = std::uniform_int_distribution<std::uint64_t>()(entropy);
    if (!mine.error.empty())
      problems.push_back(fmt::format("{}: {}: its children in the monitors' tree (ranks {}) cannot connect to it",
                                     place(rank, mine.host), mine.error, fmt::join(links.children, ",")));
  }

  // The endpoints go down the tree over MPI, once: the monitors' own
  // connections carry everything after.
  const std::string text = encode(mine);
  std::vector<MPI_Request> sends(links.children.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < links.children.size(); ++i)
    PMPI_Isend(text.data(), static_cast<int>(text.size()), MPI_CHAR, links.children[i], kEndpointTag, comm, &sends[i]);
  Endpoint parent;
  if (links.parent >= 0) {
    MPI_Status status;
    int length = 0;
    PMPI_Probe(links.parent, kEndpointTag, comm, &status);
    PMPI_Get_count(&status, MPI_CHAR, &length);
    std::string received(static_cast<std::size_t>(length), '\0');
    PMPI_Recv(received.data(), length, MPI_CHAR, links.parent, kEndpointTag, comm, MPI_STATUS_IGNORE);
    try {
      parent = decode_endpoint(received);
    } catch (const std::invalid_argument& bad) {
      parent.error = bad.what();
      problems.push_back(fmt::format("{} cannot read what its parent in the monitors' tree, rank {}, sent: {}",
                                     place(rank, mine.host), links.parent, parent.error));
    }
  }
  PMPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);

  const Deadline deadline = SteadyClock::now() + kSetupBound;
  // To the parent: each address in turn, until the parent's monitor welcomes us.
  if (links.parent >= 0 && parent.error.empty()) {
    std::vector<std::string> tried;
    const std::string said = hello(parent.token, rank, mine.host);
    for (std::uint32_t address : connect_order(parent, parent.host_key == mine.host_key)) {
      int fd = connect_by(address, parent.port, deadline);
      char answer = 0;
      if (fd >= 0 && write_all_by(fd, said.data(), said.size(), deadline) &&
          read_exact_by(fd, &answer, 1, deadline) && answer == kWelcome) {
        channel.parent_ = Link{fd, links.parent, parent.host};
        break;
      }
      tried.push_back(fmt::format("{} ({})", address_text(address, parent.port),
                                  fd < 0 ? error_text(errno)
                                         : errno == 0 ? "closed without a welcome: not this job's rank " +
                                                            std::to_string(links.parent)
                                                      : error_text(errno)));
      close_fd(fd);
    }
    if (channel.parent_.fd < 0)
      problems.push_back(fmt::format("{} cannot reach its parent in the monitors' tree, {}, within {} s: tried {}",
                                     place(rank, mine.host), place(links.parent, parent.host), kSetupBound.count(),
                                     tried.empty() ? std::string("no address") : fmt::format("{}", fmt::join(tried, ", "))));
  }

  // From the children, each once, until all are here or the deadline.
  while (listener >= 0 && channel.children_.size() < links.children.size() && wait_for(listener, POLLIN, deadline)) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    const std::optional<Hello> said = read_hello(fd, mine.token, std::min(deadline, SteadyClock::now() + kHelloBound));
    const bool child = said && std::ranges::find(links.children, said->rank) != links.children.end() &&
                       std::ranges::none_of(channel.children_, [&](const Link& link) { return link.rank == said->rank; });
    if (child && write_all_by(fd, &kWelcome, 1, deadline)) {
      channel.children_.push_back(Link{fd, said->rank, said->host});
      continue;
    }
    close_fd(fd);
  }
  close_fd(listener);
  if (!links.children.empty() && mine.error.empty() && channel.children_.size() < links.children.size())
    log::debug("{}: {} of its {} children in the monitors' tree connected", place(rank, mine.host),
               channel.children_.size(), links.children.size());

  for (const std::string& problem : problems) log::error("{}", problem);
  const int ready = problems.empty() && parent.error.empty() ? 1 : 0;
  int all_ready = 0;
  PMPI_Allreduce(&ready, &all_ready, 1, MPI_INT, MPI_MIN, comm);
  if (!all_ready) return std::nullopt;

  std::ranges::sort(channel.children_, {}, &Link::rank);
  if (channel.parent_.fd >= 0) make_blocking(channel.parent_.fd);
  for (const Link& child : channel.children_) make_blocking(child.fd);
  return channel;
}

Channel::Channel(Channel&& other) noexcept
    : rank_(other.rank_), size_(other.size_), parent_(std::move(other.parent_)), children_(std::move(other.children_)) {
  other.parent_.fd = -1;
  other.children_.clear();
}

Channel::~Channel() {
  close_fd(parent_.fd);
  for (Link& child : children_) close_fd(child.fd);
}

void Channel::send(const Link& link, const std::string& bytes) {
  std::string frame;
  frame.reserve(sizeof(std::uint32_t) + bytes.size());
  put_u32(frame, static_cast<std::uint32_t>(bytes.size()));
  frame += bytes;
  if (!write_all_by(link.fd, frame.data(), frame.size(), Deadline::max()))
    throw ChannelBroken(fmt::format("the connection to {}'s monitor failed: {}", place(link.rank, link.host),
                                    error_text(errno)));
}

std::string Channel::receive(const Link& link) {
  const auto fail = [&link] {
    return ChannelBroken(fmt::format("the connection to {}'s monitor {}", place(link.rank, link.host),
                                     errno == 0 ? std::string("closed") : "failed: " + error_text(errno)));
  };
  std::string header(sizeof(std::uint32_t), '\0');
  if (!read_exact_by(link.fd, header.data(), header.size(), Deadline::max())) throw fail();
  std::string bytes(get_u32(header, 0), '\0');
  if (!read_exact_by(link.fd, bytes.data(), bytes.size(), Deadline::max())) throw fail();
  return bytes;
}

Summary Channel::allreduce(const Summary& mine) {
  const auto as_bytes = [](const Summary& summary) {
    return std::string(reinterpret_cast<const char*>(&summary), sizeof(summary));
  };
  Summary total = mine;
  for (const Link& child : children_) {
    const std::string bytes = receive(child);
    if (bytes.size() != sizeof(Summary)) throw ChannelBroken("a summary of the wrong size from " + place(child.rank, child.host));
    Summary theirs;
    std::memcpy(&theirs, bytes.data(), sizeof(theirs));
    combine(theirs, total);
  }
  if (parent_.fd >= 0) {
    send(parent_, as_bytes(total));
    const std::string bytes = receive(parent_);
    if (bytes.size() != sizeof(Summary)) throw ChannelBroken("a summary of the wrong size from " + place(parent_.rank, parent_.host));
    std::memcpy(&total, bytes.data(), sizeof(total));
  }
  for (const Link& child : children_) send(child, as_bytes(total));
  return total;
}

// Up the tree, each subtree's pieces as (rank, length, bytes).
std::vector<std::string> Channel::gather(const std::string& mine) {
  std::string pieces;
  put_u32(pieces, static_cast<std::uint32_t>(rank_));
  put_u32(pieces, static_cast<std::uint32_t>(mine.size()));
  pieces += mine;
  for (const Link& child : children_) pieces += receive(child);
  if (parent_.fd >= 0) {
    send(parent_, pieces);
    return {};
  }
  std::vector<std::string> parts(static_cast<std::size_t>(size_));
  std::vector<bool> seen(parts.size());
  std::size_t at = 0;
  while (at + 2 * sizeof(std::uint32_t) <= pieces.size()) {
    const std::uint32_t rank = get_u32(pieces, at), length = get_u32(pieces, at + 4);
    at += 2 * sizeof(std::uint32_t);
    if (rank >= parts.size() || seen[rank] || length > pieces.size() - at) break;
    parts[rank] = pieces.substr(at, length);
    seen[rank] = true;
    at += length;
  }
  if (at != pieces.size() || std::ranges::count(seen, false) != 0)
    throw ChannelBroken("the ranks' states arrived incomplete");
  return parts;
}

std::string Channel::broadcast(const std::string& value_at_root) {
  const std::string value = parent_.fd >= 0 ? receive(parent_) : value_at_root;
  for (const Link& child : children_) send(child, value);
  return value;
}

std::int32_t Channel::broadcast(std::int32_t value_at_root) {
  std::string bytes;
  put_u32(bytes, static_cast<std::uint32_t>(value_at_root));
  bytes = broadcast(bytes);
  if (bytes.size() != sizeof(std::uint32_t)) throw ChannelBroken("a number of the wrong size from the monitors' tree");
  return static_cast<std::int32_t>(get_u32(bytes, 0));
}

}  // namespace mpisentry::monitor
