#include "mpi_libraries/loaded.hpp"

#include "mpi_libraries/mpi_libraries.hpp"

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <utility>

namespace mpisentry::mpi_libraries {
namespace {

// The object that the DT_NEEDED name `needed` was matched with by the loader.
std::optional<std::size_t> needed_object(const std::vector<LoadedObject>& objects, std::string_view needed) {
  const bool path = needed.find('/') != std::string_view::npos;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const LoadedObject& object = objects[i];
    if (path ? object.name == needed
             : object.soname == needed || (!object.name.empty() && file_name(object.name) == needed))
      return i;
  }
  return std::nullopt;
}

using Graph = std::vector<std::vector<std::size_t>>;  // per object: the objects it needs

// What `from` reaches in `graph`, `from` included; an object `stop` marks is
// neither reached nor followed.
std::vector<bool> reach(const Graph& graph, std::vector<std::size_t> from, const std::vector<bool>& stop) {
  std::vector<bool> reached(graph.size(), false);
  while (!from.empty()) {
    const std::size_t object = from.back();
    from.pop_back();
    if (reached[object] || stop[object]) continue;
    reached[object] = true;
    from.insert(from.end(), graph[object].begin(), graph[object].end());
  }
  return reached;
}

struct Segment {
  std::uintptr_t begin, end;
};

struct Loaded {
  LoadedObject object;
  std::uintptr_t bias = 0;
  std::vector<Segment> segments;  // PT_LOAD, as mapped

  bool holds(const void* address) const {
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    return std::ranges::any_of(segments, [at](const Segment& s) { return s.begin <= at && at < s.end; });
  }
};

int read_object(dl_phdr_info* info, std::size_t, void* data) {
  auto& all = *static_cast<std::vector<Loaded>*>(data);
  Loaded loaded;
  // The first object is the executable, whatever name it is given.
  loaded.object.name = all.empty() || info->dlpi_name == nullptr ? "" : info->dlpi_name;
  loaded.bias = info->dlpi_addr;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + header.p_vaddr;
    if (header.p_type == PT_LOAD) loaded.segments.push_back({start, start + header.p_memsz});
    if (header.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(start);
  }
  const char* strings = nullptr;
  for (const ElfW(Dyn)* entry = dynamic; entry != nullptr && entry->d_tag != DT_NULL; ++entry)
    if (entry->d_tag == DT_STRTAB) strings = dynamic_address<char>(*info, entry->d_un.d_ptr);
  for (const ElfW(Dyn)* entry = dynamic; strings != nullptr && entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag == DT_NEEDED) loaded.object.needed.emplace_back(strings + entry->d_un.d_val);
    if (entry->d_tag == DT_SONAME) loaded.object.soname = strings + entry->d_un.d_val;
  }
  all.push_back(std::move(loaded));
  return 0;
}

// The objects loaded now, with what the classification reads of each. Takes
// the loader's lock: never in a signal handler.
std::vector<Loaded> loaded_now() {
  std::vector<Loaded> all;
  dl_iterate_phdr(read_object, &all);
  // As the dynamic linker resolves them (dlsym of a handle would run the
  // constructors of objects not initialized yet when called at load).
  const void* pmpi_init = dlsym(RTLD_DEFAULT, "PMPI_Init");
  // mpif.h's and `use mpi`'s name (gfortran's and most compilers'), `use mpi_f08`'s.
  const void* fortran[] = {dlsym(RTLD_DEFAULT, "pmpi_init_"), dlsym(RTLD_DEFAULT, "pmpi_init_f08_")};
  for (Loaded& loaded : all) {
    loaded.object.holds_pmpi_init = pmpi_init != nullptr && loaded.holds(pmpi_init);
    loaded.object.holds_fortran_pmpi_init = std::ranges::any_of(
        fortran, [&loaded](const void* definition) { return definition != nullptr && loaded.holds(definition); });
  }
  return all;
}

// MPI's objects, as the answers read them; never changed once published.
struct Identity {
  std::vector<std::string> mpi_names;
  std::vector<std::string> fortran_names;
  std::vector<Segment> mpi_segments;  // sorted by their start

  void add(const Loaded& loaded, bool fortran_bindings) {
    mpi_names.push_back(loaded.object.name);
    if (fortran_bindings) fortran_names.push_back(loaded.object.name);
    mpi_segments.insert(mpi_segments.end(), loaded.segments.begin(), loaded.segments.end());
  }
};

Identity identify(const std::vector<Loaded>& all) {
  std::vector<LoadedObject> objects;
  for (const Loaded& loaded : all) objects.push_back(loaded.object);
  const Classified classified = classify(objects);
  Identity identity;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (classified.mpi[i]) identity.add(all[i], classified.fortran_bindings[i]);
  return identity;
}

std::mutex publishing;
std::atomic<const Identity*> published{nullptr};

// A table replaced is kept, as an answer may still be reading it: three at
// most (at load, before PMPI_Init, after it).
void publish(Identity identity) {
  std::ranges::sort(identity.mpi_names);
  std::ranges::sort(identity.fortran_names);
  std::ranges::sort(identity.mpi_segments, {}, &Segment::begin);
  published.store(new Identity(std::move(identity)), std::memory_order_release);
}

const Identity& identity() {
  const Identity* now = published.load(std::memory_order_acquire);
  if (now != nullptr) return *now;
  const std::lock_guard lock(publishing);
  if (published.load(std::memory_order_acquire) == nullptr) publish(identify(loaded_now()));
  return *published.load(std::memory_order_acquire);
}

// What note_before_init saw, for note_after_init (the same thread, under `publishing`).
struct BeforeInit {
  std::vector<std::pair<std::string, std::uintptr_t>> objects;  // name and bias
  Identity identity;
  bool alone = false;
};
BeforeInit before_init;

bool only_task() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("Threads:")) return std::strtol(line.c_str() + 8, nullptr, 10) == 1;
  return false;
}

}  // namespace

Classified classify(const std::vector<LoadedObject>& objects) {
  const std::size_t count = objects.size();
  Classified classified{std::vector<bool>(count, false), std::vector<bool>(count, false)};
  const auto core = std::ranges::find_if(objects, &LoadedObject::holds_pmpi_init);
  if (core == objects.end()) return classified;
  Graph graph(count);
  for (std::size_t i = 0; i < count; ++i)
    for (const std::string& name : objects[i].needed)
      if (const auto needed = needed_object(objects, name)) graph[i].push_back(*needed);
  const std::vector<bool> nothing(count, false);
  // MPI's library, and its Fortran bindings: the other objects that hold
  // PMPI_Init's Fortran binding and need it.
  std::vector<bool> libraries(count, false);
  const auto core_index = static_cast<std::size_t>(core - objects.begin());
  libraries[core_index] = true;
  for (std::size_t i = 0; i < count; ++i)
    if (i != core_index && objects[i].holds_fortran_pmpi_init && reach(graph, {i}, nothing)[core_index])
      libraries[i] = classified.fortran_bindings[i] = true;
  std::vector<std::size_t> from_libraries, from_program;
  for (std::size_t i = 0; i < count; ++i)
    if (libraries[i]) from_libraries.push_back(i);
  const std::vector<bool> mpi_side = reach(graph, from_libraries, nothing);
  // The program's roots: everything else that was loaded (the executable,
  // preloaded and dlopened objects, the vDSO); what they reach without
  // passing through MPI's libraries is the program's.
  for (std::size_t i = 0; i < count; ++i)
    if (!mpi_side[i]) from_program.push_back(i);
  const std::vector<bool> program_side = reach(graph, from_program, libraries);
  for (std::size_t i = 0; i < count; ++i) classified.mpi[i] = mpi_side[i] && !program_side[i];
  return classified;
}

void note_before_init() {
  const std::vector<Loaded> all = loaded_now();
  Identity identity = identify(all);
  const std::lock_guard lock(publishing);
  before_init.objects.clear();
  for (const Loaded& loaded : all) before_init.objects.emplace_back(loaded.object.name, loaded.bias);
  before_init.alone = only_task();
  before_init.identity = identity;
  publish(std::move(identity));
}

void note_after_init() {
  const std::lock_guard lock(publishing);
  // Another thread could have loaded objects of its own meanwhile.
  if (!before_init.alone) return;
  Identity identity = before_init.identity;
  for (const Loaded& loaded : loaded_now())
    if (std::ranges::find(before_init.objects, std::pair(loaded.object.name, loaded.bias)) == before_init.objects.end())
      identity.add(loaded, /*fortran_bindings=*/false);
  publish(std::move(identity));
}

bool is_mpi_code(const void* address) {
  const std::vector<Segment>& segments = identity().mpi_segments;
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  const auto after = std::ranges::upper_bound(segments, at, {}, &Segment::begin);
  return after != segments.begin() && at < std::prev(after)->end;
}

bool is_mpi_object(std::string_view loaded_name) {
  return std::ranges::binary_search(identity().mpi_names, loaded_name, std::less<>{});
}

bool is_fortran_bindings(std::string_view loaded_name) {
  return std::ranges::binary_search(identity().fortran_names, loaded_name, std::less<>{});
}

}  // namespace mpisentry::mpi_libraries
