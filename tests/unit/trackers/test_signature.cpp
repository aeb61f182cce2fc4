// Type signatures as the GLOBAL:COLLECTIVE and GLOBAL:MSG datatype checks
// compare them. signature_of asks MPI about types, so this process
// initializes MPI (a singleton, without mpiexec) once.
#include <catch2/catch.hpp>

#include <mpi.h>

#include <cstdlib>
#include <string>

#include "trackers/signature.hpp"

using mpisentry::checks::Signature;
using mpisentry::checks::signature_of;

namespace {

void with_mpi() {
  static const bool initialized = [] {
    MPI_Init(nullptr, nullptr);
    std::atexit([] { MPI_Finalize(); });
    return true;
  }();
  (void)initialized;
}

// The struct {first; second} that MPI 4.0, 6.9.4 defines a pair type as.
MPI_Datatype struct_of(MPI_Datatype first, MPI_Datatype second) {
  int first_size = 0;
  MPI_Type_size(first, &first_size);
  const int blocks[2] = {1, 1};
  const MPI_Aint displacements[2] = {0, first_size};
  const MPI_Datatype types[2] = {first, second};
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_create_struct(2, blocks, displacements, types, &type);
  MPI_Type_commit(&type);
  return type;
}

// As the MPI_Type_free wrapper does: the checks' cache forgets the type,
// whose handle MPI hands out again (the next struct_of here gets it).
void free_type(MPI_Datatype& type) {
  mpisentry::checks::type_freed(type);
  MPI_Type_free(&type);
}

bool same(const Signature& a, const Signature& b) { return a.bytes == b.bytes && !a.differs_from(b); }

}  // namespace

TEST_CASE("signature: every pair type has the signature of its two members", "[signature]") {
  with_mpi();
  const auto [name, pair, first, second] = GENERATE(table<std::string, MPI_Datatype, MPI_Datatype, MPI_Datatype>({
      {"MPI_2INT", MPI_2INT, MPI_INT, MPI_INT},
      {"MPI_FLOAT_INT", MPI_FLOAT_INT, MPI_FLOAT, MPI_INT},
      {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, MPI_DOUBLE, MPI_INT},
      {"MPI_LONG_INT", MPI_LONG_INT, MPI_LONG, MPI_INT},
      {"MPI_SHORT_INT", MPI_SHORT_INT, MPI_SHORT, MPI_INT},
      {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, MPI_INT},
      {"MPI_2REAL", MPI_2REAL, MPI_REAL, MPI_REAL},
      {"MPI_2DOUBLE_PRECISION", MPI_2DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION},
      {"MPI_2INTEGER", MPI_2INTEGER, MPI_INTEGER, MPI_INTEGER},
  }));
  INFO(name);
  MPI_Datatype members = struct_of(first, second);
  MPI_Datatype swapped = struct_of(second, first);
  const Signature three_pairs = signature_of(pair, 3);
  CHECK(three_pairs.known);
  CHECK(three_pairs.elements == 6);
  CHECK(same(three_pairs, signature_of(members, 3)));
  if (first == second) {
    CHECK(same(three_pairs, signature_of(first, 6)));
  } else {
    // {double, int} x 3 is not {int, double} x 3 (MPI_DOUBLE_INT against
    // MPI_INT and MPI_DOUBLE the other way round), nor 3 of one and 3 of
    // the other.
    CHECK(signature_of(swapped, 3).differs_from(three_pairs));
    MPI_Datatype firsts_then_seconds = struct_of(first, first);
    CHECK(signature_of(firsts_then_seconds, 3).differs_from(three_pairs));
    free_type(firsts_then_seconds);
  }
  // Only the first 1.5 pairs of a receive cut short: whole basic elements.
  int pair_size = 0, first_size = 0;
  MPI_Type_size(pair, &pair_size);
  MPI_Type_size(first, &first_size);
  CHECK(same(signature_of(pair, 3, pair_size + first_size), signature_of(members, 3, pair_size + first_size)));
  free_type(members);
  free_type(swapped);
}

TEST_CASE("signature: 2 x MPI_2INT is 4 x MPI_INT, not 4 x MPI_FLOAT nor 2 x MPI_DOUBLE", "[signature]") {
  with_mpi();
  const Signature two_pairs = signature_of(MPI_2INT, 2);
  CHECK(same(two_pairs, signature_of(MPI_INT, 4)));
  CHECK(signature_of(MPI_FLOAT, 4).differs_from(two_pairs));
  CHECK(signature_of(MPI_DOUBLE, 2).differs_from(two_pairs));
  // MPI_FLOAT_INT is {float, int}, not two of one type.
  CHECK(signature_of(MPI_INT, 2).differs_from(signature_of(MPI_FLOAT_INT, 1)));
  CHECK(signature_of(MPI_FLOAT, 2).differs_from(signature_of(MPI_FLOAT_INT, 1)));
  // A pair type inside a derived type: contiguous(2, MPI_2INT) is 4 x MPI_INT.
  MPI_Datatype contiguous = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_2INT, &contiguous);
  MPI_Type_commit(&contiguous);
  CHECK(same(signature_of(contiguous, 1), signature_of(MPI_INT, 4)));
  free_type(contiguous);
}

TEST_CASE("signature: a freed datatype's handle, handed out again, is read again", "[signature]") {
  with_mpi();
  // MPICH hands a freed handle to the next type made: the cache must not
  // answer with the old type's signature.
  MPI_Datatype four_ints = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(4, MPI_INT, &four_ints);
  MPI_Type_commit(&four_ints);
  const MPI_Datatype old_handle = four_ints;
  CHECK(same(signature_of(four_ints, 1), signature_of(MPI_INT, 4)));
  free_type(four_ints);
  MPI_Datatype two_doubles = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_DOUBLE, &two_doubles);
  MPI_Type_commit(&two_doubles);
  INFO("the same handle again: " << (two_doubles == old_handle));
  CHECK(same(signature_of(two_doubles, 1), signature_of(MPI_DOUBLE, 2)));
  CHECK(signature_of(two_doubles, 1).differs_from(signature_of(MPI_INT, 4)));
  CHECK(mpisentry::checks::datatype_text(two_doubles) == "a derived datatype (2 x MPI_DOUBLE)");
  free_type(two_doubles);
}

TEST_CASE("signature: a basic type hashes as the same type in every process, its synonyms alike", "[signature]") {
  with_mpi();
  // Open MPI gives the standard's synonyms handles of their own.
  CHECK(same(signature_of(MPI_LONG_LONG, 2), signature_of(MPI_LONG_LONG_INT, 2)));
  CHECK(same(signature_of(MPI_C_COMPLEX, 2), signature_of(MPI_C_FLOAT_COMPLEX, 2)));
  // Types of one size still differ by what they are.
  CHECK(signature_of(MPI_INT, 1).differs_from(signature_of(MPI_FLOAT, 1)));
  CHECK(signature_of(MPI_INT32_T, 1).differs_from(signature_of(MPI_UINT32_T, 1)));
  CHECK(signature_of(MPI_DOUBLE, 1).differs_from(signature_of(MPI_INT64_T, 1)));
  for (MPI_Datatype type : {MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_C_BOOL, MPI_CXX_BOOL, MPI_AINT, MPI_COUNT, MPI_INTEGER,
                            MPI_DOUBLE_PRECISION, MPI_LOGICAL, MPI_CHARACTER})
    CHECK(signature_of(type, 1).known);
}
