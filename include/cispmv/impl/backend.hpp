#pragma once
// What cispmv needs to know about a Kokkos execution space, in one trait.

#include <Kokkos_Core.hpp>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace cispmv::impl {

/// True for execution spaces that run on a GPU (CUDA, HIP, SYCL, OpenMPTarget): those whose
/// default memory space the host cannot access. CUDA is named too, for builds that make CUDA's
/// default memory UVM (host-accessible).
template <class Exec>
inline constexpr bool is_gpu_space_v =
#if defined(KOKKOS_ENABLE_CUDA)
    std::is_same_v<Exec, Kokkos::Cuda> ||
#endif
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;

/// The L1 / shared-memory preference of the CUDA kernel that Kokkos launches for
/// `parallel_for(Policy, F)` (TeamCache). Kokkos 3.x sets cudaFuncCachePreferShared on a team
/// kernel's first launch and never again; so the preference is set after that first launch and
/// before any later one whose wish differs (each kernel is one instantiation: one state each).
/// Elsewhere (other backends, Kokkos 4, whose launches size the carve-out themselves) nothing.
template <class Policy, class F>
struct TeamCachePreference {
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION < 40000
  static constexpr bool applies = std::is_same_v<typename Policy::execution_space, Kokkos::Cuda>;
#else
  static constexpr bool applies = false;
#endif
  static void before_launch(bool l1) {
    if constexpr (applies) {
      std::lock_guard<std::mutex> lock(state().mutex);
      if (state().launched && state().l1 != l1) set(l1);
    }
  }
  static void after_launch(bool l1) {
    if constexpr (applies) {
      std::lock_guard<std::mutex> lock(state().mutex);
      if (!state().launched || state().l1 != l1) set(l1);  // the first launch: over Kokkos' choice
      state().launched = true;
    }
  }

 private:
  struct State {
    std::mutex mutex;
    bool launched = false;
    bool l1 = false;
  };
  static State& state() {
    static State s;
    return s;
  }
  static void set(bool l1) {
#if defined(KOKKOS_ENABLE_CUDA) && KOKKOS_VERSION < 40000
    using Driver = Kokkos::Impl::ParallelFor<F, Policy, Kokkos::Cuda>;
    using Kernel =
        Kokkos::Impl::CudaParallelLaunchKernelFunc<Driver, typename Policy::launch_bounds,
                                                   Kokkos::Impl::DeduceCudaLaunchMechanism<Driver>::launch_mechanism>;
    const cudaError_t e =
        cudaFuncSetCacheConfig(Kernel::get_kernel_func(), l1 ? cudaFuncCachePreferL1 : cudaFuncCachePreferShared);
    if (e != cudaSuccess)
      throw std::runtime_error(std::string("cispmv: cudaFuncSetCacheConfig failed: ") + cudaGetErrorString(e));
#endif
    state().l1 = l1;
  }
};

/// Host memory that `Exec` copies to and from asynchronously, beside its kernels: CUDA's pinned
/// host memory for Kokkos::Cuda, plain host memory elsewhere.
template <class Exec>
struct StagingSpace {
  using type = Kokkos::HostSpace;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct StagingSpace<Kokkos::Cuda> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif

/// A second instance of `Exec` whose work may run beside the first's (copies while kernels run, or two
/// kernels at once): on CUDA an instance on a CUDA stream of its own, created and destroyed here; elsewhere
/// `exec` itself (a host space's work runs on the calling thread, in order, anyway). Copies share the stream.
/// follow(main): the side instance's later work waits for main's work so far; join(main): main's later work
/// waits for the side instance's so far. Neither waits on the host (CUDA events; nothing to do elsewhere).
template <class Exec>
class SideInstance {
 public:
  explicit SideInstance(const Exec& exec) : exec_(exec) {}
  const Exec& get() const { return exec_; }
  void follow(const Exec&) const {}
  void join(const Exec&) const {}

 private:
  Exec exec_;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
class SideInstance<Kokkos::Cuda> {
 public:
  explicit SideInstance(const Kokkos::Cuda&) : owned_(std::make_shared<Owned>()) {}
  const Kokkos::Cuda& get() const { return *owned_->exec; }
  void follow(const Kokkos::Cuda& main) const { order(main.cuda_stream(), owned_->stream, owned_->followed); }
  void join(const Kokkos::Cuda& main) const { order(owned_->stream, main.cuda_stream(), owned_->joined); }

 private:
  // `to`'s later work waits for `from`'s so far
  static void order(cudaStream_t from, cudaStream_t to, cudaEvent_t mark) {
    cudaError_t e = cudaEventRecord(mark, from);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(to, mark, 0);
    if (e != cudaSuccess)
      throw std::runtime_error(std::string("cispmv: ordering two CUDA streams: ") + cudaGetErrorString(e));
  }
  struct Owned {
    cudaStream_t stream = nullptr;
    cudaEvent_t followed = nullptr, joined = nullptr;
    std::unique_ptr<Kokkos::Cuda> exec;
    Owned() {
      cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
      if (e != cudaSuccess) throw std::runtime_error(std::string("cispmv: cudaStreamCreate: ") + cudaGetErrorString(e));
      e = cudaEventCreateWithFlags(&followed, cudaEventDisableTiming);
      if (e == cudaSuccess) e = cudaEventCreateWithFlags(&joined, cudaEventDisableTiming);
      if (e != cudaSuccess) {
        release();
        throw std::runtime_error(std::string("cispmv: cudaEventCreate: ") + cudaGetErrorString(e));
      }
      try {
        exec = std::make_unique<Kokkos::Cuda>(stream);
      } catch (...) {
        release();
        throw;
      }
    }
    ~Owned() {
      if (exec) exec->fence();
      exec.reset();  // the instance goes before its stream
      release();
    }
    void release() {
      if (joined != nullptr) cudaEventDestroy(joined);
      if (followed != nullptr) cudaEventDestroy(followed);
      if (stream != nullptr) cudaStreamDestroy(stream);
    }
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
  };
  std::shared_ptr<Owned> owned_;
};
#endif

/// The time between two marks in an execution space's stream of work, as the device saw it: CUDA
/// events on Kokkos::Cuda (marks cost no fence, so work can overlap the host's); elsewhere the host
/// clock at the marks (a host space's work is done when the call that launched it returns).
/// seconds() waits for the stop mark.
template <class Exec>
class StreamClock {
 public:
  void start(const Exec&) { timer_.reset(); }
  void stop(const Exec& exec) {
    exec.fence();
    seconds_ = timer_.seconds();
  }
  double seconds() const { return seconds_; }

 private:
  Kokkos::Timer timer_;
  double seconds_ = 0.0;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
class StreamClock<Kokkos::Cuda> {
 public:
  StreamClock() : events_(std::make_shared<Events>()) {}
  void start(const Kokkos::Cuda& exec) { cudaEventRecord(events_->start, exec.cuda_stream()); }
  void stop(const Kokkos::Cuda& exec) { cudaEventRecord(events_->stop, exec.cuda_stream()); }
  double seconds() const {
    cudaEventSynchronize(events_->stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, events_->start, events_->stop);
    return 1e-3 * static_cast<double>(ms);
  }

 private:
  struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    Events() {
      if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess)
        throw std::runtime_error("cispmv: cudaEventCreate failed");
    }
    ~Events() {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
    Events(const Events&) = delete;
    Events& operator=(const Events&) = delete;
  };
  std::shared_ptr<Events> events_;
};
#endif

/// Marks in an execution space's stream of work that the host can wait for, one by one (record(i)
/// after some work, wait(i) until it is done): CUDA events on Kokkos::Cuda; elsewhere nothing to do
/// (a host space's work is done when the call that launched it returns).
template <class Exec>
class StreamMarks {
 public:
  explicit StreamMarks(int) {}
  void record(const Exec&, int) const {}
  void wait(int) const {}
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
class StreamMarks<Kokkos::Cuda> {
 public:
  explicit StreamMarks(int count) : events_(std::make_shared<Events>(count)) {}
  void record(const Kokkos::Cuda& exec, int i) const {
    cudaEventRecord(events_->at[static_cast<std::size_t>(i)], exec.cuda_stream());
  }
  void wait(int i) const { cudaEventSynchronize(events_->at[static_cast<std::size_t>(i)]); }

 private:
  struct Events {
    std::vector<cudaEvent_t> at;
    explicit Events(int count) : at(static_cast<std::size_t>(count), nullptr) {
      for (auto& e : at) {
        if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess)
          throw std::runtime_error("cispmv: cudaEventCreate failed");
      }
    }
    ~Events() {
      for (auto& e : at) {
        if (e != nullptr) cudaEventDestroy(e);
      }
    }
    Events(const Events&) = delete;
    Events& operator=(const Events&) = delete;
  };
  std::shared_ptr<Events> events_;
};
#endif

/// `policy` with Kokkos' hint that its kernel is light (WorkItemProperty::HintLightWeight). On CUDA Kokkos then
/// passes the functor as the kernel's argument (up to 4 KB) instead of through the constant-memory buffer that every
/// instance shares for functors of 512 bytes or more: a launch through that buffer first waits, on the host, for the
/// previous such kernel to finish, so kernels on two streams could not run at once and each launch after a long
/// kernel leaves the GPU idle while it is issued. Elsewhere the hint changes nothing. Only for kernels that never take
/// the address of the functor or of its members (a reference into a call that is not inlined takes one): an argument
/// has no address, so the kernel would copy the whole functor to each thread's stack (the factored scatter
/// kernel: 1,416 bytes of stack, a third slower).
template <class Policy>
auto light_launch(const Policy& policy) {
  return Kokkos::Experimental::require(policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

/// Lanes of a GPU's SIMT unit that a vector kernel should fill (CUDA's warp; 64 would suit AMD
/// wavefronts, but Kokkos caps a vector at 32 lanes on every GPU backend we build).
inline constexpr int gpu_max_vector_length = 32;

}  // namespace cispmv::impl
