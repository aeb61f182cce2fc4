// MPICH's Fortran 2008 bindings (`use mpi_f08`) call PMPI_<name> directly for
// every routine without a choice buffer (mpi_init_f08_, mpi_barrier_f08_,
// mpi_wait_f08_, mpi_comm_dup_f08_, ...); Open MPI's mpif.h and `use mpi`
// bindings (libmpi_mpifh) call PMPI_<name> for every routine, and its f08
// bindings call those (and PMPI_Buffer_detach). Without help a program's calls
// there never enter this library's MPI_<name> wrappers, and MPI_Init is never
// seen. When the library loads, before the program's MPI_Init, the
// PMPI_<name> slots (PLT and GOT relocations) of MPI's Fortran bindings, known
// by what they are (mpi_libraries/loaded.hpp), that name a function this
// library wraps are pointed at the wrapper. The wrappers reach PMPI_<name>
// through this library's own slots, so nothing recurses. MPICH's mpif.h and
// `use mpi` bindings, and its f08 routines that take buffers, call
// MPI_<name>: each call is recorded once, whichever binding made it.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "log/log.hpp"
#include "mpi_libraries/loaded.hpp"

namespace mpisentry {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr std::uint32_t kGlobalData = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr std::uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr std::uint32_t kGlobalData = R_AARCH64_GLOB_DAT;
#else
#error "name this architecture's PLT and GOT relocation types"
#endif

// This library: the functions it defines are the ones it wraps (it exports
// nothing else), so no second list of them is kept here.
struct Self {
  void* handle;      // for dlsym
  const void* base;  // where it is loaded
};

// This library's definition of `name`, or null when it wraps no such function
// (dlsym also searches the libraries this one depends on, MPICH's among them).
void* own_definition(const Self& self, const std::string& name) {
  void* definition = dlsym(self.handle, name.c_str());
  Dl_info found{};
  if (definition == nullptr || dladdr(definition, &found) == 0 || found.dli_fbase != self.base) return nullptr;
  return definition;
}

// Points every PMPI_<name> slot of `object` at this library's MPI_<name>;
// slots in the read-only-after-relocation segment are made writable for the
// writes.
void redirect_slots(const dl_phdr_info& object, const Self& self) {
  const ElfW(Dyn)* dynamic = nullptr;
  // The loader makes the whole pages of PT_GNU_RELRO read-only after
  // relocation; its last, partial page stays writable.
  const auto page_mask = ~static_cast<ElfW(Addr)>(sysconf(_SC_PAGESIZE) - 1);
  ElfW(Addr) relro_start = 0, relro_end = 0;
  for (int i = 0; i < object.dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = object.dlpi_phdr[i];
    if (header.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(object.dlpi_addr + header.p_vaddr);
    if (header.p_type == PT_GNU_RELRO) {
      relro_start = (object.dlpi_addr + header.p_vaddr) & page_mask;
      relro_end = (object.dlpi_addr + header.p_vaddr + header.p_memsz) & page_mask;
    }
  }
  if (dynamic == nullptr) return;

  const ElfW(Sym)* symbols = nullptr;
  const char* names = nullptr;
  const ElfW(Rela)* tables[2] = {nullptr, nullptr};  // DT_JMPREL, DT_RELA
  std::size_t table_sizes[2] = {0, 0};
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    switch (entry->d_tag) {
      case DT_SYMTAB: symbols = mpi_libraries::dynamic_address<ElfW(Sym)>(object, entry->d_un.d_ptr); break;
      case DT_STRTAB: names = mpi_libraries::dynamic_address<char>(object, entry->d_un.d_ptr); break;
      case DT_JMPREL: tables[0] = mpi_libraries::dynamic_address<ElfW(Rela)>(object, entry->d_un.d_ptr); break;
      case DT_PLTRELSZ: table_sizes[0] = entry->d_un.d_val; break;
      case DT_RELA: tables[1] = mpi_libraries::dynamic_address<ElfW(Rela)>(object, entry->d_un.d_ptr); break;
      case DT_RELASZ: table_sizes[1] = entry->d_un.d_val; break;
      default: break;
    }
  }
  if (symbols == nullptr || names == nullptr) return;

  void* const relro_pages = reinterpret_cast<void*>(relro_start);
  const std::size_t relro_length = relro_end - relro_start;
  enum class Relro { ReadOnly, Writable, Locked } relro = Relro::ReadOnly;
  for (int t = 0; t < 2; ++t) {
    if (tables[t] == nullptr) continue;
    for (std::size_t i = 0; i < table_sizes[t] / sizeof(ElfW(Rela)); ++i) {
      const ElfW(Rela)& relocation = tables[t][i];
      const auto type = static_cast<std::uint32_t>(ELF64_R_TYPE(relocation.r_info));
      if (type != kJumpSlot && type != kGlobalData) continue;
      const std::string_view name = names + symbols[ELF64_R_SYM(relocation.r_info)].st_name;
      if (!name.starts_with("PMPI_")) continue;
      void* wrapper = own_definition(self, std::string(name.substr(1)));
      if (wrapper == nullptr) continue;
      const ElfW(Addr) slot = object.dlpi_addr + relocation.r_offset;
      if (slot >= relro_start && slot < relro_end) {
        if (relro == Relro::ReadOnly) {
          const bool unlocked =
              mprotect(relro_pages, relro_length, PROT_READ | PROT_WRITE) == 0;
          if (!unlocked)
            log::error("cannot redirect the PMPI_* calls of {} to the checker (mprotect: {}): calls "
                       "through `use mpi_f08` are not all checked",
                       object.dlpi_name, std::strerror(errno));
          relro = unlocked ? Relro::Writable : Relro::Locked;
        }
        if (relro == Relro::Locked) continue;
      }
      *reinterpret_cast<void**>(slot) = wrapper;
    }
  }
  if (relro == Relro::Writable) mprotect(relro_pages, relro_length, PROT_READ);
}

// Runs before the program's main, hence before its MPI_Init; the program is
// single-threaded then, so no call can be passing through a slot being written.
__attribute__((constructor)) void redirect_fortran_bindings() {
  Dl_info own{};
  if (dladdr(reinterpret_cast<const void*>(&redirect_fortran_bindings), &own) == 0) return;
  Self self{dlopen(own.dli_fname, RTLD_LAZY | RTLD_NOLOAD), own.dli_fbase};
  if (self.handle == nullptr) return;
  // Which objects are MPI's Fortran bindings is found outside the loader's
  // lock, which dl_iterate_phdr holds.
  std::vector<dl_phdr_info> loaded;
  dl_iterate_phdr(
      [](dl_phdr_info* object, std::size_t, void* loaded) {
        static_cast<std::vector<dl_phdr_info>*>(loaded)->push_back(*object);
        return 0;
      },
      &loaded);
  for (const dl_phdr_info& object : loaded)
    if (object.dlpi_name != nullptr && mpi_libraries::is_fortran_bindings(object.dlpi_name))
      redirect_slots(object, self);
  dlclose(self.handle);
}

}  // namespace
}  // namespace mpisentry
