#include "openmpi_baseline.h"

#include <cstdio>
#include <cstdlib>

#ifdef AUGUR_BENCH_HAVE_MPI
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wcast-function-type"
#define OMPI_SKIP_MPICXX 1  // the C API only: no C++ bindings to link
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#ifdef AUGUR_BENCH_HAVE_MPI
// Open MPI keeps allocations (many in dlopen'ed, already unloaded components) past
// MPI_Finalize; LeakSanitizer would fail every sanitized run of this benchmark on them.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
#endif

namespace augur::bench {

#ifdef AUGUR_BENCH_HAVE_MPI
namespace {

bool g_init = false;

class Packer final : public MpiPacker {
 public:
  explicit Packer(const Strided2& l) {
    MPI_Type_vector(static_cast<int>(l.inner_n), 1, static_cast<int>(l.inner_stride), MPI_DOUBLE,
                    &inner_);
    if (l.outer_n > 1) {
      MPI_Type_create_hvector(static_cast<int>(l.outer_n), 1,
                              static_cast<MPI_Aint>(l.outer_stride * sizeof(double)), inner_, &type_);
      MPI_Type_commit(&type_);
    } else {
      MPI_Type_commit(&inner_);
      type_ = inner_;
    }
  }
  ~Packer() override {
    if (type_ != inner_) MPI_Type_free(&type_);
    MPI_Type_free(&inner_);
  }
  Packer(const Packer&) = delete;
  Packer& operator=(const Packer&) = delete;

  void Pack(const double* src, void* out, int out_bytes) override {
    int pos = 0;
    MPI_Pack(src, 1, type_, out, out_bytes, &pos, MPI_COMM_WORLD);
  }
  void Unpack(const void* in, int in_bytes, double* dst) override {
    int pos = 0;
    MPI_Unpack(in, in_bytes, &pos, dst, 1, type_, MPI_COMM_WORLD);
  }

 private:
  MPI_Datatype inner_ = MPI_DATATYPE_NULL;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

}  // namespace

bool MpiAvailable() {
  if (!g_init) {
    // A singleton MPI_Init under root refuses to start without these.
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) return false;
    g_init = true;
  }
  return true;
}
std::unique_ptr<MpiPacker> MakeMpiPacker(const Strided2& layout) {
  if (!MpiAvailable()) return nullptr;
  return std::make_unique<Packer>(layout);
}
void MpiFinalize() {
  if (g_init) MPI_Finalize();
  g_init = false;
}
#else
bool MpiAvailable() { return false; }
std::unique_ptr<MpiPacker> MakeMpiPacker(const Strided2&) { return nullptr; }
void MpiFinalize() {}
#endif

}  // namespace augur::bench

#ifdef AUGUR_BENCH_HAVE_MPI
#pragma GCC diagnostic pop
#endif
