// MPI's own objects among those loaded in this process, known by what they
// are, never by their file names (a program's libmpihelpers.so is the
// program's): the object that holds the PMPI_Init the dynamic linker
// resolves (the MPI library); MPI's Fortran bindings, the other objects that
// hold the PMPI_Init's Fortran binding it resolves (pmpi_init_,
// pmpi_init_f08_) and need the MPI library; the objects these need (DT_NEEDED, transitively) that the
// program does not reach by itself; and the objects that appeared while
// MPI_Init ran, when nothing but MPI could load them.
//
// The program reaches an object when the executable, a preloaded or
// dlopened object, or any object it reaches that is not MPI's library or
// Fortran bindings needs it: libc, and whatever the program links, are the
// program's even when MPI needs them too.
//
// Found once at load, again at MPI_Init before and after PMPI_Init; each
// answer after that reads an immutable table (no lock, no allocation). Not
// for signal handlers: the first answer may have to read the loaded objects.
#pragma once

#include <link.h>

#include <string>
#include <string_view>
#include <vector>

namespace mpisentry::mpi_libraries {

// One loaded object, as the classification reads it.
struct LoadedObject {
  std::string name;                // as loaded (link_map's l_name); empty for the executable
  std::string soname;              // DT_SONAME, or empty
  std::vector<std::string> needed;  // DT_NEEDED
  // The PMPI_Init that the dynamic linker resolves is here.
  bool holds_pmpi_init = false;
  // So is the pmpi_init_ or pmpi_init_f08_ (PMPI_Init's Fortran binding) that it resolves.
  bool holds_fortran_pmpi_init = false;
};

struct Classified {
  std::vector<bool> mpi;               // per object: MPI's
  std::vector<bool> fortran_bindings;  // per object: MPI's Fortran bindings (MPI's too)
};

// Which of `objects` (as loaded, the executable first) are MPI's, by the
// rules above; none when no object holds PMPI_Init. A DT_NEEDED name matches
// an object by its DT_SONAME or its file name (with a '/': its whole name).
Classified classify(const std::vector<LoadedObject>& objects);

// From MPI_Init: just before PMPI_Init (MPI's objects as loaded then), and
// just after it (the objects loaded meanwhile are MPI's when the calling
// thread was the process's only task, so that no program code ran).
void note_before_init();
void note_after_init();

// `address` lies in one of MPI's objects (a signal handler's, a return address).
bool is_mpi_code(const void* address);

// The object loaded as `loaded_name` (dladdr's dli_fname, dlpi_name) is MPI's.
bool is_mpi_object(std::string_view loaded_name);

// The object loaded as `loaded_name` is one of MPI's Fortran bindings
// libraries, whose PMPI_<name> calls bypass the preloaded MPI_<name> wrappers.
bool is_fortran_bindings(std::string_view loaded_name);

// An address of a loaded object's dynamic section: glibc relocates most
// entries of it, some other loaders do not.
template <typename T>
const T* dynamic_address(const dl_phdr_info& object, ElfW(Addr) address) {
  return reinterpret_cast<const T*>(address < object.dlpi_addr ? object.dlpi_addr + address : address);
}

}  // namespace mpisentry::mpi_libraries
