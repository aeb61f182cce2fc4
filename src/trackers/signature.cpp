#include "trackers/signature.hpp"

#include <atomic>
#include <mutex>
#include <iterator>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "records/handle_slots.hpp"

namespace mpisentry::checks {
namespace {

using Run = TypeInfo::Run;

// Past this many runs a signature's hash covers only its first runs and its
// size: differences further on go unseen, none is ever made up.
constexpr std::int64_t kMaxHashedRuns = 1 << 20;

bool is_untyped(MPI_Datatype type) { return type == MPI_BYTE || type == MPI_PACKED; }

// MPI's pair types (for MINLOC and MAXLOC) are predefined but not basic:
// each is "as if defined by" MPI_Type_create_struct of its two members (MPI
// 4.0, 6.9.4), so its type signature is theirs, and 2 x MPI_2INT matches
// 4 x MPI_INT.
struct Pair {
  MPI_Datatype pair, first, second;
};
const Pair kPairs[] = {
    {MPI_2INT, MPI_INT, MPI_INT},
    {MPI_FLOAT_INT, MPI_FLOAT, MPI_INT},
    {MPI_DOUBLE_INT, MPI_DOUBLE, MPI_INT},
    {MPI_LONG_INT, MPI_LONG, MPI_INT},
    {MPI_SHORT_INT, MPI_SHORT, MPI_INT},
    {MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, MPI_INT},
    {MPI_2REAL, MPI_REAL, MPI_REAL},
    {MPI_2DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION},
    {MPI_2INTEGER, MPI_INTEGER, MPI_INTEGER},
};

// MPI's predefined basic datatypes. A handle may differ between processes
// (Open MPI's are addresses), so a signature hashes a type's place in this
// list, which every process of the job has the same.
const MPI_Datatype kBasicTypes[] = {
    MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG_INT, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR,
    MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
    MPI_LONG_DOUBLE, MPI_WCHAR, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
    MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
    MPI_C_LONG_DOUBLE_COMPLEX, MPI_BYTE, MPI_PACKED, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_CXX_BOOL,
    MPI_CXX_FLOAT_COMPLEX, MPI_CXX_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_INTEGER, MPI_REAL,
    MPI_DOUBLE_PRECISION, MPI_COMPLEX, MPI_LOGICAL, MPI_CHARACTER, MPI_DOUBLE_COMPLEX,
// The optional ones (MPI 4.0, 3.2.2) and one MPI's own (Open MPI's LOGICALs,
// MPICH's MPIX_C_FLOAT16), where the header defines them.
#ifdef MPI_INTEGER1
    MPI_INTEGER1,
#endif
#ifdef MPI_INTEGER2
    MPI_INTEGER2,
#endif
#ifdef MPI_INTEGER4
    MPI_INTEGER4,
#endif
#ifdef MPI_INTEGER8
    MPI_INTEGER8,
#endif
#ifdef MPI_INTEGER16
    MPI_INTEGER16,
#endif
#ifdef MPI_REAL2
    MPI_REAL2,
#endif
#ifdef MPI_REAL4
    MPI_REAL4,
#endif
#ifdef MPI_REAL8
    MPI_REAL8,
#endif
#ifdef MPI_REAL16
    MPI_REAL16,
#endif
#ifdef MPI_COMPLEX4
    MPI_COMPLEX4,
#endif
#ifdef MPI_COMPLEX8
    MPI_COMPLEX8,
#endif
#ifdef MPI_COMPLEX16
    MPI_COMPLEX16,
#endif
#ifdef MPI_COMPLEX32
    MPI_COMPLEX32,
#endif
#ifdef MPI_LOGICAL1
    MPI_LOGICAL1,
#endif
#ifdef MPI_LOGICAL2
    MPI_LOGICAL2,
#endif
#ifdef MPI_LOGICAL4
    MPI_LOGICAL4,
#endif
#ifdef MPI_LOGICAL8
    MPI_LOGICAL8,
#endif
#ifdef MPIX_C_FLOAT16
    MPIX_C_FLOAT16,
#endif
};
// The standard's synonyms (MPI 4.0, 3.2.2), which Open MPI gives handles of
// their own: each hashes as the type it names.
const std::pair<MPI_Datatype, MPI_Datatype> kSynonyms[] = {
    {MPI_LONG_LONG, MPI_LONG_LONG_INT},
    {MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX},
};

// 1 + the place of `type` among kBasicTypes; 0 for a type not there (an
// MPI's own extension), whose signatures are then not compared.
std::uint64_t basic_type_code(MPI_Datatype type) {
  for (const auto& [synonym, named] : kSynonyms)
    if (type == synonym) type = named;
  // An MPI that lacks an optional type defines it as MPI_DATATYPE_NULL.
  if (type == MPI_DATATYPE_NULL) return 0;
  for (std::size_t i = 0; i < std::size(kBasicTypes); ++i)
    if (kBasicTypes[i] == type) return i + 1;
  return 0;
}

std::int64_t size_of(MPI_Datatype type) {
  MPI_Count size = 0;
  return PMPI_Type_size_x(type, &size) == MPI_SUCCESS ? static_cast<std::int64_t>(size) : 0;
}

// False for a basic type the checker does not know (basic_type_code).
bool append(std::vector<Run>& out, MPI_Datatype type) {
  if (!out.empty() && out.back().type == type) {
    ++out.back().count;
    return true;
  }
  const std::uint64_t code = basic_type_code(type);
  if (code == 0) return false;
  out.push_back({type, 1, size_of(type), code});
  return true;
}

// The runs of one element of `type`, appended to `out`; false when the type
// cannot be read.
bool flatten(MPI_Datatype type, std::vector<Run>& out, int depth = 0) {
  if (depth > 32) return false;
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0;
  if (PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner) != MPI_SUCCESS) return false;
  if (combiner == MPI_COMBINER_NAMED) {
    for (const Pair& pair : kPairs)
      if (type == pair.pair) return append(out, pair.first) && append(out, pair.second);
    return append(out, type);
  }
  std::vector<int> ints(static_cast<std::size_t>(integers));
  std::vector<MPI_Aint> aints(static_cast<std::size_t>(addresses));
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(datatypes));
  if (PMPI_Type_get_contents(type, integers, addresses, datatypes, ints.data(), aints.data(), types.data()) !=
      MPI_SUCCESS)
    return false;
  // Repeats the runs of `inner` `times` times.
  const auto repeat = [&](MPI_Datatype inner, std::int64_t times) {
    std::vector<Run> one;
    if (!flatten(inner, one, depth + 1)) return false;
    if (one.size() == 1) {
      if (!out.empty() && out.back().type == one[0].type)
        out.back().count += one[0].count * times;
      else
        out.push_back({one[0].type, one[0].count * times, one[0].type_size, one[0].code});
      return true;
    }
    if (static_cast<std::int64_t>(out.size() + one.size()) * times > kMaxHashedRuns) return false;
    for (std::int64_t i = 0; i < times; ++i)
      for (const Run& run : one) {
        if (!out.empty() && out.back().type == run.type)
          out.back().count += run.count;
        else
          out.push_back(run);
      }
    return true;
  };
  bool ok = true;
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: ok = repeat(types[0], 1); break;
    case MPI_COMBINER_CONTIGUOUS: ok = repeat(types[0], ints[0]); break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: ok = repeat(types[0], static_cast<std::int64_t>(ints[0]) * ints[1]); break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: ok = repeat(types[0], static_cast<std::int64_t>(ints[0]) * ints[1]); break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      std::int64_t total = 0;
      for (int i = 0; i < ints[0]; ++i) total += ints[1 + i];
      ok = repeat(types[0], total);
      break;
    }
    case MPI_COMBINER_STRUCT:
      for (int i = 0; i < ints[0] && ok; ++i) ok = repeat(types[static_cast<std::size_t>(i)], ints[1 + i]);
      break;
    case MPI_COMBINER_SUBARRAY: {
      const int dims = ints[0];
      std::int64_t total = 1;
      for (int i = 0; i < dims; ++i) total *= ints[1 + dims + i];
      ok = repeat(types[0], total);
      break;
    }
    case MPI_COMBINER_DARRAY: {
      int whole = 0, element = 0;
      ok = PMPI_Type_size(type, &whole) == MPI_SUCCESS && PMPI_Type_size(types[0], &element) == MPI_SUCCESS &&
           element > 0 && repeat(types[0], whole / element);
      break;
    }
    default: ok = false;  // Fortran-parameterized types and anything newer
  }
  for (MPI_Datatype& inner : types) {
    int i = 0, a = 0, d = 0, c = 0;
    if (PMPI_Type_get_envelope(inner, &i, &a, &d, &c) == MPI_SUCCESS && c != MPI_COMBINER_NAMED)
      PMPI_Type_free(&inner);
  }
  return ok;
}

std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
  hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  return hash * 0xff51afd7ed558ccdULL;
}

bool is_named(MPI_Datatype type) {
  int integers = 0, addresses = 0, datatypes = 0, combiner = 0;
  return PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner) == MPI_SUCCESS &&
         combiner == MPI_COMBINER_NAMED;
}

std::string text_of(MPI_Datatype type, const TypeInfo& info, bool named) {
  if (type == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  if (named) {
    char name[MPI_MAX_OBJECT_NAME] = {};
    int length = 0;
    if (PMPI_Type_get_name(type, name, &length) == MPI_SUCCESS && length > 0)
      return std::string(name, static_cast<std::size_t>(length));
  }
  if (info.known && info.element.size() <= 3) {
    std::vector<std::string> parts;
    for (const Run& run : info.element)
      parts.push_back(fmt::format("{} x {}", run.count, type_info(run.type)->text));
    return fmt::format("a derived datatype ({})", fmt::join(parts, ", "));
  }
  return fmt::format("a derived datatype ({} B)", info.size);
}

// Reads `type` from MPI. `named`: a predefined type, never freed.
TypeInfo* read_type(MPI_Datatype type, bool& named) {
  auto* info = new TypeInfo;
  named = type != MPI_DATATYPE_NULL && is_named(type);
  info->named = named;
  if (type != MPI_DATATYPE_NULL) {
    info->known = flatten(type, info->element);
    info->size = size_of(type);
    MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_get_extent_x(type, &lb, &extent);
    PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
    info->extent = static_cast<std::int64_t>(extent);
    info->true_extent = static_cast<std::int64_t>(true_extent);
    info->true_lb = static_cast<std::int64_t>(true_lb);
  }
  info->text = text_of(type, *info, named);
  return info;
}

// The cache: lock-free lookups by handle, changes under the mutex.
struct Slot {
  std::atomic<std::uint64_t> key{handle_slots::kEmptyKey};
  TypeRef info;  // written before `key` is published, reset after it is removed
};
constexpr std::size_t kSlots = 4096;

struct Cache {
  std::mutex mutex;
  Slot slots[kSlots];
};

Cache& cache() {
  static Cache* const instance = new Cache;  // never destroyed: wrappers may run during exit
  return *instance;
}

}  // namespace

namespace detail {

thread_local MPI_Datatype last_type __attribute__((tls_model("initial-exec"))) = MPI_DATATYPE_NULL;
thread_local const TypeInfo* last_info __attribute__((tls_model("initial-exec"))) = nullptr;

TypeRef cached_type_info(MPI_Datatype type) {
  Cache& c = cache();
  const std::uint64_t key = handle_slots::key_of(type);
  if (const Slot* slot = handle_slots::find(c.slots, key)) {
    if (slot->info.use_count() == 0) {  // predefined: owns nothing
      last_type = type;
      last_info = slot->info.get();
    }
    return slot->info;
  }
  bool named = false;
  TypeInfo* read = read_type(type, named);
  // A predefined type's reference owns nothing: copies count nothing.
  TypeRef info = named ? TypeRef(TypeRef(), read) : TypeRef(read);
  const std::lock_guard lock(c.mutex);
  if (const Slot* slot = handle_slots::find(c.slots, key)) return slot->info;  // another thread read it first
  if (Slot* slot = handle_slots::claim(c.slots, key)) {
    slot->info = info;
    slot->key.store(key, std::memory_order_release);
  }
  return info;  // with no room near its home, not kept: read again next time
}

}  // namespace detail

void type_freed(MPI_Datatype type) {
  Cache& c = cache();
  const std::uint64_t key = handle_slots::key_of(type);
  const std::lock_guard lock(c.mutex);
  if (Slot* slot = handle_slots::find(c.slots, key)) {
    slot->key.store(handle_slots::kRemovedKey, std::memory_order_release);
    slot->info.reset();
  }
}

Signature signature_of(const TypeInfo& type, std::int64_t count, std::int64_t max_bytes) {
  Signature s;
  if (count < 0) {
    s.known = false;
    return s;
  }
  if (!type.known) {
    s.known = false;
    s.bytes = type.size * count;
    return s;
  }
  if (type.element.size() == 1 && max_bytes < 0) {
    // One run of one basic type, as the general path below would hash it:
    // every message of a basic type takes this way.
    const Run& only = type.element.front();
    s.elements = only.count * count;
    s.bytes = only.type_size * s.elements;
    if (s.elements > 0) {
      s.untyped = is_untyped(only.type);
      s.hash = mix(mix(0, only.code), static_cast<std::uint64_t>(s.elements));
    }
    return s;
  }
  const std::int64_t limit = max_bytes >= 0 ? max_bytes : INT64_MAX;
  // The runs of `count` elements, merged across element boundaries, fed to the hash.
  Run pending{MPI_DATATYPE_NULL, 0, 0, 0};
  std::int64_t runs = 0;
  const auto emit = [&](const Run& run) {
    if (run.count == 0) return;
    s.untyped = s.untyped || is_untyped(run.type);
    if (pending.type == run.type) {
      pending.count += run.count;
      return;
    }
    if (pending.count > 0 && runs++ < kMaxHashedRuns)
      s.hash = mix(mix(s.hash, pending.code), static_cast<std::uint64_t>(pending.count));
    pending = run;
  };
  const auto add = [&](const Run& whole) {
    // Whole basic elements only: a receive cut short ends on an element.
    Run run = whole;
    if (run.type_size > 0 && s.bytes + run.type_size * run.count > limit) run.count = (limit - s.bytes) / run.type_size;
    if (run.count <= 0) return false;
    emit(run);
    s.bytes += run.type_size * run.count;
    s.elements += run.count;
    return s.bytes < limit;
  };
  if (type.element.size() == 1) {
    const Run& only = type.element.front();
    add({only.type, only.count * count, only.type_size, only.code});
  } else {
    for (std::int64_t i = 0; i < count && runs < kMaxHashedRuns; ++i) {
      bool more = true;
      for (const Run& run : type.element)
        if (!(more = add(run))) break;
      if (!more) break;
    }
    if (runs >= kMaxHashedRuns && max_bytes < 0) s.bytes = type.size * count;
  }
  emit({MPI_DATATYPE_NULL, 1, 0, 0});  // flushes the last run
  return s;
}

Signature signature_of(MPI_Datatype type, std::int64_t count, std::int64_t max_bytes) {
  if (type == MPI_DATATYPE_NULL || count < 0) {
    Signature s;
    s.known = false;
    return s;
  }
  return signature_of(*type_info(type), count, max_bytes);
}

std::string datatype_text(MPI_Datatype type) { return type_info(type)->text; }

std::string amount_text(const TypeInfo& type, std::int64_t count) {
  return fmt::format("{} x {} ({} B)", count, type.text, type.size * count);
}

std::string amount_text(MPI_Datatype type, std::int64_t count) { return amount_text(*type_info(type), count); }

}  // namespace mpisentry::checks
