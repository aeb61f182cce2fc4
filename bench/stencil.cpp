// A halo-exchange mini-app: 2-D Jacobi on 4 ranks in a periodic 2x2 grid.
// Each iteration exchanges the four edges of the rank's 512x512 block with
// MPI_Isend/MPI_Irecv/MPI_Waitall and relaxes the interior; every
// kResidualEvery iterations an MPI_Allreduce sums the squared change. Prints
// the median time per iteration in seconds (rank 0, blocks of
// kResidualEvery iterations, each ending with that Allreduce).
#include <mpi.h>

#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "measure.hpp"

namespace {

constexpr int kSide = 512;              // interior points per dimension
constexpr int kRow = kSide + 2;         // with one halo cell on each side
constexpr int kResidualEvery = 10;

double& at(std::vector<double>& grid, int row, int column) {
  return grid[static_cast<std::size_t>(row) * kRow + static_cast<std::size_t>(column)];
}

class Jacobi {
 public:
  Jacobi() : now_(kRow * kRow), next_(kRow * kRow) {
    const std::array<int, 2> dims{2, 2}, periodic{1, 1};
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims.data(), periodic.data(), 0, &grid_comm_);
    MPI_Cart_shift(grid_comm_, 0, 1, &up_, &down_);
    MPI_Cart_shift(grid_comm_, 1, 1, &left_, &right_);
    MPI_Type_vector(kSide, 1, kRow, MPI_DOUBLE, &column_);
    MPI_Type_commit(&column_);
    int rank = 0;
    MPI_Comm_rank(grid_comm_, &rank);
    for (int i = 1; i <= kSide; ++i)
      for (int j = 1; j <= kSide; ++j) at(now_, i, j) = std::sin(0.01 * (i + 3 * j + 1000 * rank));
  }
  ~Jacobi() {
    MPI_Type_free(&column_);
    MPI_Comm_free(&grid_comm_);
  }

  // One iteration; with `residual`, also the global sum of squared changes.
  double iterate(bool residual) {
    exchange_halo();
    double local = 0;
    for (int i = 1; i <= kSide; ++i)
      for (int j = 1; j <= kSide; ++j) {
        const double value = 0.25 * (at(now_, i - 1, j) + at(now_, i + 1, j) + at(now_, i, j - 1) + at(now_, i, j + 1));
        const double change = value - at(now_, i, j);
        local += change * change;
        at(next_, i, j) = value;
      }
    std::swap(now_, next_);
    double global = 0;
    if (residual) MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, grid_comm_);
    return global;
  }

 private:
  void exchange_halo() {
    std::array<MPI_Request, 8> requests{};
    // Tags name the direction of travel, so that the two messages between
    // the same pair of ranks in a 2-wide periodic grid cannot be confused.
    enum { kDown, kUp, kRight, kLeft };
    MPI_Irecv(&at(now_, 0, 1), kSide, MPI_DOUBLE, up_, kDown, grid_comm_, &requests[0]);
    MPI_Irecv(&at(now_, kSide + 1, 1), kSide, MPI_DOUBLE, down_, kUp, grid_comm_, &requests[1]);
    MPI_Irecv(&at(now_, 1, 0), 1, column_, left_, kRight, grid_comm_, &requests[2]);
    MPI_Irecv(&at(now_, 1, kSide + 1), 1, column_, right_, kLeft, grid_comm_, &requests[3]);
    MPI_Isend(&at(now_, kSide, 1), kSide, MPI_DOUBLE, down_, kDown, grid_comm_, &requests[4]);
    MPI_Isend(&at(now_, 1, 1), kSide, MPI_DOUBLE, up_, kUp, grid_comm_, &requests[5]);
    MPI_Isend(&at(now_, 1, kSide), 1, column_, right_, kRight, grid_comm_, &requests[6]);
    MPI_Isend(&at(now_, 1, 1), 1, column_, left_, kLeft, grid_comm_, &requests[7]);
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }

  std::vector<double> now_, next_;
  MPI_Comm grid_comm_ = MPI_COMM_NULL;
  MPI_Datatype column_ = MPI_DATATYPE_NULL;
  int up_ = 0, down_ = 0, left_ = 0, right_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = bench::rank_checked("stencil", 4);
  double residual = 0;
  {
    Jacobi jacobi;
    const double per_block = bench::median_seconds_per_operation({.warmup = 2, .per_block = 1, .seconds = 2.5}, [&] {
      for (int i = 1; i <= kResidualEvery; ++i) residual = jacobi.iterate(i == kResidualEvery);
    });
    if (rank == 0) bench::print_result("stencil_iteration", per_block / kResidualEvery);
  }
  // Printed so that the work cannot be optimized away and runs can be compared.
  if (rank == 0) bench::print_result("stencil_residual", residual);
  MPI_Finalize();
  return 0;
}
