#include "monitor/channel.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>

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

// What a child sends first: the magic, its parent's token, its rank, its pid, its host.
std::string hello(std::uint64_t token, int rank, const std::string& host) {
  std::string bytes(sizeof(kHelloMagic) + sizeof(token) + 2 * sizeof(std::int32_t), '\0');
  const std::int32_t rank32 = rank, pid32 = getpid();
  std::memcpy(bytes.data(), &kHelloMagic, sizeof(kHelloMagic));
  std::memcpy(bytes.data() + 8, &token, sizeof(token));
  std::memcpy(bytes.data() + 16, &rank32, sizeof(rank32));
  std::memcpy(bytes.data() + 20, &pid32, sizeof(pid32));
  bytes += static_cast<char>(std::min<std::size_t>(host.size(), 255));
  bytes.append(host, 0, 255);
  return bytes;
}

struct Hello {
  int rank = -1;
  int pid = 0;
  std::string host;
};

// The hello of a connection a parent accepted, if it is one of its children's.
std::optional<Hello> read_hello(int fd, std::uint64_t token, Deadline deadline) {
  std::array<char, 25> fixed{};
  if (!read_exact_by(fd, fixed.data(), fixed.size(), deadline)) return std::nullopt;
  std::uint64_t magic = 0, their_token = 0;
  std::int32_t rank = -1, pid = 0;
  std::memcpy(&magic, fixed.data(), 8);
  std::memcpy(&their_token, fixed.data() + 8, 8);
  std::memcpy(&rank, fixed.data() + 16, 4);
  std::memcpy(&pid, fixed.data() + 20, 4);
  if (magic != kHelloMagic || their_token != token) return std::nullopt;
  Hello hello{rank, pid, std::string(static_cast<unsigned char>(fixed[24]), '\0')};
  if (!read_exact_by(fd, hello.host.data(), hello.host.size(), deadline)) return std::nullopt;
  return hello;
}

void set_no_delay(int fd) {
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

void put_text(std::string& into, const std::string& text) {
  put_u32(into, static_cast<std::uint32_t>(text.size()));
  into += text;
}

// Reads a put_u32 or put_text at `at`, moving past it; throws std::invalid_argument past the end.
std::uint32_t take_u32(const std::string& from, std::size_t& at) {
  if (from.size() - at < sizeof(std::uint32_t) || at > from.size()) throw std::invalid_argument("a lost-rank message cut short");
  const std::uint32_t value = get_u32(from, at);
  at += sizeof(std::uint32_t);
  return value;
}

std::string take_text(const std::string& from, std::size_t& at) {
  const std::uint32_t length = take_u32(from, at);
  if (from.size() - at < length) throw std::invalid_argument("a lost-rank message cut short");
  std::string text = from.substr(at, length);
  at += length;
  return text;
}

std::int64_t epoch_milliseconds() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// How long a frame may take to leave, unless the peer is lost: its silence limit.
Deadline send_deadline(std::chrono::milliseconds silence_limit) {
  const auto now = SteadyClock::now();
  return silence_limit == std::chrono::milliseconds::max() ? Deadline::max() : now + silence_limit;
}

constexpr std::size_t kFrameHeader = 1 + sizeof(std::uint32_t);
// A frame's kind byte may say no more: a larger value is a stream out of step.
constexpr std::uint8_t kLastFrameKind = static_cast<std::uint8_t>(FrameKind::Lost);

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
  std::string text = fmt::format("host {}\nkey {}\nport {}\ntoken {}\npid {}\n", endpoint.host, endpoint.host_key,
                                 endpoint.port, endpoint.token, endpoint.pid);
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
      else if (key == "pid") endpoint.pid = std::stoi(value);
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

std::unique_ptr<Channel> Channel::open(MPI_Comm comm, const config::Settings& settings) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const TreeLinks links = tree_links(rank, size);
  const auto warning = std::chrono::duration_cast<std::chrono::milliseconds>(settings.deadlock_warning);
  // DEADLOCK-WARNING 0 warns of nothing: no neighbour is then lost for its silence.
  std::unique_ptr<Channel> opened(
      new Channel(rank, size, warning.count() > 0 ? warning : std::chrono::milliseconds::max()));
  Channel& channel = *opened;
  std::vector<std::string> problems;

  Endpoint mine;
  mine.host = handshake::host_name();
  mine.host_key = network_stack_key();
  mine.pid = getpid();
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
        channel.parent_.fd = fd;
        channel.parent_.rank = links.parent;
        channel.parent_.host = parent.host;
        channel.parent_.pid = parent.pid;
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
      Link& child = channel.children_.emplace_back();
      child.fd = fd;
      child.rank = said->rank;
      child.host = said->host;
      child.pid = said->pid;
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
  if (!all_ready) return nullptr;

  std::ranges::sort(channel.children_, {}, &Link::rank);
  const auto now = SteadyClock::now();
  for (Link* link : channel.links()) {
    set_no_delay(link->fd);
    link->heard = now;
  }
  return opened;
}

Channel::~Channel() { close(); }

void Channel::close() {
  {
    std::lock_guard lock(pulse_mutex_);
    stopping_ = true;
  }
  pulse_stop_.notify_all();
  if (pulses_.joinable()) pulses_.join();
  for (Link* link : every_link()) {
    std::lock_guard writing(*link->writing);
    close_fd(link->fd);
  }
}

std::vector<Channel::Link*> Channel::every_link() {
  std::vector<Link*> all{&parent_};
  for (Link& child : children_) all.push_back(&child);
  return all;
}

std::vector<Channel::Link*> Channel::links() {
  std::vector<Link*> all;
  if (parent_.fd >= 0) all.push_back(&parent_);
  for (Link& child : children_)
    if (child.fd >= 0) all.push_back(&child);
  return all;
}

RankLost::RankLost(LostRank lost)
    : ChannelBroken(fmt::format("{} {}", place(lost.rank, lost.host),
                                lost.how == LostRank::How::Ended    ? "ended: its monitor's connection closed"
                                : lost.how == LostRank::How::Silent ? "fell silent"
                                                                    : "ends")),
      lost_(std::move(lost)) {}

std::string encode(const LostRank& lost) {
  std::string bytes;
  put_u32(bytes, static_cast<std::uint32_t>(lost.rank));
  put_text(bytes, lost.host);
  put_u32(bytes, static_cast<std::uint32_t>(lost.pid));
  put_u32(bytes, static_cast<std::uint32_t>(lost.how));
  put_u32(bytes, static_cast<std::uint32_t>(lost.signal_number));
  put_u32(bytes, static_cast<std::uint32_t>(static_cast<std::uint64_t>(lost.at_ms) >> 32));
  put_u32(bytes, static_cast<std::uint32_t>(lost.at_ms));
  put_text(bytes, lost.last_state);
  put_u32(bytes, static_cast<std::uint32_t>(std::max(0.0, lost.state_age_seconds) * 1000.0));
  put_u32(bytes, static_cast<std::uint32_t>(lost.noticed_by));
  return bytes;
}

LostRank decode_lost_rank(const std::string& bytes) {
  LostRank lost;
  std::size_t at = 0;
  lost.rank = static_cast<std::int32_t>(take_u32(bytes, at));
  lost.host = take_text(bytes, at);
  lost.pid = static_cast<std::int32_t>(take_u32(bytes, at));
  const std::uint32_t how = take_u32(bytes, at);
  if (how > static_cast<std::uint32_t>(LostRank::How::Ending)) throw std::invalid_argument("a lost-rank message of an unknown kind");
  lost.how = static_cast<LostRank::How>(how);
  lost.signal_number = static_cast<std::int32_t>(take_u32(bytes, at));
  const std::uint64_t high = take_u32(bytes, at);
  lost.at_ms = static_cast<std::int64_t>((high << 32) | take_u32(bytes, at));
  lost.last_state = take_text(bytes, at);
  lost.state_age_seconds = take_u32(bytes, at) / 1000.0;
  lost.noticed_by = static_cast<std::int32_t>(take_u32(bytes, at));
  if (at != bytes.size()) throw std::invalid_argument("a lost-rank message with bytes past its end");
  return lost;
}

std::string frame(FrameKind kind, const std::string& bytes) {
  std::string framed;
  framed.reserve(kFrameHeader + bytes.size());
  framed += static_cast<char>(kind);
  put_u32(framed, static_cast<std::uint32_t>(bytes.size()));
  framed += bytes;
  return framed;
}

std::vector<Frame> take_frames(std::string& inbox) {
  std::vector<Frame> frames;
  std::size_t at = 0;
  while (inbox.size() - at >= kFrameHeader) {
    const auto kind = static_cast<std::uint8_t>(inbox[at]);
    if (kind > kLastFrameKind) throw std::invalid_argument(fmt::format("a frame of unknown kind {}", kind));
    const std::uint32_t length = get_u32(inbox, at + 1);
    if (inbox.size() - at - kFrameHeader < length) break;
    frames.push_back(Frame{static_cast<FrameKind>(kind), inbox.substr(at + kFrameHeader, length)});
    at += kFrameHeader + length;
  }
  inbox.erase(0, at);
  return frames;
}

void Channel::alive() { alive_at_.store(SteadyClock::now().time_since_epoch().count(), std::memory_order_relaxed); }

Channel::BoundedWork::BoundedWork(Channel* channel) : channel_(channel) {
  if (channel_) channel_->bounded_work_.fetch_add(1, std::memory_order_relaxed);
}

Channel::BoundedWork::~BoundedWork() {
  if (!channel_) return;
  channel_->alive();
  channel_->bounded_work_.fetch_sub(1, std::memory_order_relaxed);
}

void Channel::start_pulses() {
  alive();
  if (!links().empty()) pulses_ = std::thread([this] { run_pulses(); });
}

void Channel::run_pulses() {
  const auto gap = std::min<std::chrono::milliseconds>(kLongestPulseGap, silence_limit_ / 4);
  const std::string pulse = frame(FrameKind::Pulse, {});
  std::unique_lock lock(pulse_mutex_);
  while (!pulse_stop_.wait_for(lock, gap, [this] { return stopping_; })) {
    // A monitor that showed no sign of life for the silence limit, outside
    // work known to end, is as good as stopped: its neighbours may lose it.
    const auto since = SteadyClock::now().time_since_epoch() -
                       SteadyClock::duration(alive_at_.load(std::memory_order_relaxed));
    if (since >= silence_limit_ && bounded_work_.load(std::memory_order_relaxed) == 0) continue;
    for (Link* link : every_link()) {
      std::unique_lock writing(*link->writing, std::try_to_lock);
      // Held by the monitor's thread, which is sending on it: that says as much.
      if (!writing.owns_lock() || link->fd < 0 || link->told_lost) continue;
      // Briefly: a neighbour that takes no pulse for that long has a full buffer and will be lost anyway.
      write_all_by(link->fd, pulse.data(), pulse.size(), SteadyClock::now() + std::chrono::milliseconds(100));
    }
  }
}

void Channel::send(Link& link, const std::string& bytes, FrameKind kind) {
  const std::string framed = frame(kind, bytes);
  bool sent = false;
  int error = 0;
  {
    std::lock_guard writing(*link.writing);
    sent = link.fd >= 0 && write_all_by(link.fd, framed.data(), framed.size(), send_deadline(silence_limit_));
    error = errno;
  }
  if (!sent)
    lose(link, error == ETIMEDOUT ? LostRank::How::Silent : LostRank::How::Ended,
         fmt::format("sending to it failed: {}", error_text(error)));
}

bool Channel::read_some(Link& link) {
  bool open = true, heard = false;
  std::array<char, 4096> chunk{};
  while (true) {
    const ssize_t got = recv(link.fd, chunk.data(), chunk.size(), 0);
    if (got > 0) {
      link.inbox.append(chunk.data(), static_cast<std::size_t>(got));
      heard = true;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    open = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    break;
  }
  if (heard) link.heard = SteadyClock::now();
  std::vector<Frame> frames;
  try {
    frames = take_frames(link.inbox);
  } catch (const std::invalid_argument& bad) {
    throw ChannelBroken(fmt::format("{}'s monitor sent {}", place(link.rank, link.host), bad.what()));
  }
  for (Frame& each : frames) {
    if (each.kind == FrameKind::Data) {
      link.frames.push_back(std::move(each.bytes));
    } else if (each.kind == FrameKind::Lost) {
      try {
        pass_on(link, decode_lost_rank(each.bytes));
      } catch (const std::invalid_argument& bad) {
        throw ChannelBroken(fmt::format("{}'s monitor sent {}", place(link.rank, link.host), bad.what()));
      }
    }
  }
  return open;
}

void Channel::pump(Link* wanted, Clock::time_point until, int wake_fd) {
  while (true) {
    alive();
    std::vector<Link*> all = links();
    std::vector<pollfd> watched;
    for (Link* link : all) watched.push_back(pollfd{link->fd, POLLIN | POLLRDHUP, 0});
    if (wake_fd >= 0) watched.push_back(pollfd{wake_fd, POLLIN, 0});
    auto next = until;
    if (silence_limit_ != std::chrono::milliseconds::max())
      for (Link* link : all) next = std::min(next, link->heard + silence_limit_);
    const int result = poll(watched.data(), watched.size(), milliseconds_left(next));
    if (result < 0 && errno != EINTR) throw ChannelBroken(fmt::format("cannot watch the monitors' links: {}", error_text(errno)));
    for (std::size_t i = 0; result > 0 && i < all.size(); ++i)
      if (watched[i].revents != 0 && !read_some(*all[i])) all[i]->at_end = true;
    // A link may close right after the last frame it owes: a rank that
    // leaves after the round that stopped every monitor.
    for (Link* link : all)
      if (link->at_end && (link != wanted || link->frames.empty()))
        lose(*link, LostRank::How::Ended, "its monitor's connection closed");
    const auto now = SteadyClock::now();
    if (silence_limit_ != std::chrono::milliseconds::max())
      for (Link* link : all)
        if (now - link->heard >= silence_limit_)
          lose(*link, LostRank::How::Silent,
               fmt::format("its monitor said nothing for {:.1f} s",
                           std::chrono::duration<double>(now - link->heard).count()));
    if (wanted && !wanted->frames.empty()) return;
    if (wake_fd >= 0 && result > 0 && watched.back().revents != 0) return;
    if (now >= until) return;
  }
}

void Channel::watch_until(Clock::time_point when, int wake_fd) { pump(nullptr, when, wake_fd); }

std::string Channel::receive(Link& link) {
  if (link.frames.empty() && link.fd < 0)
    throw ChannelBroken(fmt::format("the connection to {}'s monitor is closed", place(link.rank, link.host)));
  if (link.frames.empty()) pump(&link, Deadline::max(), -1);
  std::string bytes = std::move(link.frames.front());
  link.frames.pop_front();
  return bytes;
}

void Channel::lose(Link& link, LostRank::How how, const std::string& why) {
  // This rank ends and said so: its neighbours close their links on that news.
  if (ending_.load(std::memory_order_acquire))
    throw ChannelBroken(fmt::format("this rank ends, and {} closed its link", place(link.rank, link.host)));
  LostRank lost;
  lost.rank = link.rank;
  lost.host = link.host;
  lost.pid = link.pid;
  lost.how = how;
  lost.at_ms = epoch_milliseconds();
  lost.last_state = link.state;
  if (!link.state.empty()) lost.state_age_seconds = std::chrono::duration<double>(SteadyClock::now() - link.state_at).count();
  lost.noticed_by = rank_;
  log::debug("{} lost {}: {}", place(rank_, handshake::host_name()), place(link.rank, link.host), why);
  {
    std::lock_guard writing(*link.writing);
    close_fd(link.fd);
  }
  pass_on(link, lost);
}

void Channel::pass_on(const Link& from, const LostRank& lost) {
  const std::string framed = frame(FrameKind::Lost, encode(lost));
  for (Link* link : links()) {
    if (link == &from) continue;
    std::lock_guard writing(*link->writing);
    if (link->told_lost) continue;
    // Best effort, briefly: a neighbour that cannot take it is lost too, and learns nothing more.
    write_all_by(link->fd, framed.data(), framed.size(), SteadyClock::now() + std::chrono::milliseconds(200));
    link->told_lost = true;
  }
  if (ending_.load(std::memory_order_acquire)) throw ChannelBroken("this rank ends");
  throw RankLost(lost);
}

void Channel::tell_ending(int signal_number) {
  ending_.store(true, std::memory_order_release);
  LostRank ending;
  ending.rank = rank_;
  ending.host = handshake::host_name();
  ending.pid = getpid();
  ending.how = LostRank::How::Ending;
  ending.signal_number = signal_number;
  ending.at_ms = epoch_milliseconds();
  ending.noticed_by = rank_;
  const std::string framed = frame(FrameKind::Lost, encode(ending));
  for (Link* link : every_link()) {
    // The monitor's thread may be in the middle of a frame on it: never
    // cut into one, never wait long for it.
    std::unique_lock writing(*link->writing, std::defer_lock);
    for (int tries = 0; tries < 100 && !writing.try_lock(); ++tries) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!writing.owns_lock() || link->fd < 0 || link->told_lost) continue;
    write_all_by(link->fd, framed.data(), framed.size(), SteadyClock::now() + std::chrono::milliseconds(100));
    link->told_lost = true;
  }
}

Summary Channel::allreduce(const Summary& mine, const std::string& my_state) {
  const auto message = [&my_state](const Summary& summary) {
    return std::string(reinterpret_cast<const char*>(&summary), sizeof(summary)) + my_state;
  };
  const auto read = [this](Link& link, Summary& into) {
    const std::string bytes = receive(link);
    if (bytes.size() < sizeof(Summary))
      throw ChannelBroken("a summary of the wrong size from " + place(link.rank, link.host));
    std::memcpy(&into, bytes.data(), sizeof(into));
    link.state = bytes.substr(sizeof(Summary));
    link.state_at = SteadyClock::now();
  };
  Summary total = mine;
  for (Link& child : children_) {
    Summary theirs;
    read(child, theirs);
    combine(theirs, total);
  }
  if (parent_.fd >= 0) {
    send(parent_, message(total));
    read(parent_, total);
  }
  for (Link& child : children_) send(child, message(total));
  return total;
}

// Up the tree, each subtree's pieces as (rank, length, bytes).
std::vector<std::string> Channel::gather(const std::string& mine) {
  std::string pieces;
  put_u32(pieces, static_cast<std::uint32_t>(rank_));
  put_u32(pieces, static_cast<std::uint32_t>(mine.size()));
  pieces += mine;
  for (Link& child : children_) pieces += receive(child);
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
  for (Link& child : children_) send(child, value);
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
