/*===- GpuEmulator.c - The GPU runtime on the CPU -------------------------===//
 *
 * Runs the kernels of `fuel-to-nvvm{format=emulator}` on the CPU. The host
 * code calls MLIR's CUDA runtime interface (mgpuMemAlloc, mgpuLaunchKernel,
 * ...), implemented here on host memory; the kernels, compiled for the host
 * by fuel-gpu-emulated-kernels, call back for their thread's position
 * (fuel_emu_sreg), barriers (fuel_emu_barrier) and warp shuffles
 * (fuel_emu_shfl).
 *
 * A launch runs its blocks one after another, in one OS thread; a block's
 * threads are fibers, each running until it waits at a barrier
 * or a shuffle, so every thread of a block really is between the same two
 * barriers at once, as on a GPU. What a GPU would not report, the emulator
 * does, as an error the run API raises (fuel_emu_last_error):
 * - a barrier that not every thread of the block reaches, or a shuffle
 *   that a lane of its mask does not reach (the block cannot go on);
 * - a shuffle that reads a lane outside its mask (undefined on a GPU);
 * - an access outside device memory: each allocation ends at a page that
 *   cannot be read or written, and its bytes start as 0xff (a NaN in every
 *   float type), as do the workgroup buffers before each block, so that a
 *   read of memory nothing wrote shows in the results;
 * - a launch over CUDA's limits (1,024 threads a block; grid y, z 65,535).
 * The order in which a block's threads run between two barriers, and the
 * order of the blocks, is forward, reverse or shuffled by a seed
 * (fuel_emu_set_order, or FUEL_GPU_EMULATOR_ORDER=forward|reverse|<seed>):
 * a result that changes with the order reads memory that another thread
 * writes without a barrier between them.
 *
 * libdevice's functions (__nv_expf, ...) are the C library's. Kernels
 * compiled with fuel-gpu-emulated-kernels{memory-profile} also report each
 * load and store to the memory-access profile (GpuEmulatorProfile.c).
 *
 * One launch at a time (a process-wide lock); not for speed.
 *
 *===----------------------------------------------------------------------===*/

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "GpuEmulator.h"

/*===--- Errors -----------------------------------------------------------===*/

static char error[1024];
static int failed;

void fail(const char *format, ...) {
  if (failed)
    return;
  failed = 1;
  va_list args;
  va_start(args, format);
  vsnprintf(error, sizeof error, format, args);
  va_end(args);
}

/* The first error since the last call to fuel_emu_clear_error, or NULL. */
EXPORT const char *fuel_emu_last_error(void) { return failed ? error : NULL; }

EXPORT void fuel_emu_clear_error(void) {
  failed = 0;
  error[0] = 0;
}

/*===--- Registration -----------------------------------------------------===*/

/* A compiled module's constructors register its kernels' entries and its
   workgroup buffers (priority 0), then load its GPU modules (mgpuModuleLoad,
   priority 123), each of which takes what was registered under its name:
   modules of the same name in other compiled modules keep their own. */

typedef void (*Entry)(void **params);

typedef struct {
  char *module, *name;
  Entry entry;
  int warpSize; /* 32 (NVIDIA's warps, AMD's wave32) or 64 (wave64) */
} Kernel;

typedef struct {
  char *module;
  void *at;
  size_t size;
} Shared;

/* The table of a module's profiled accesses (fuel_emu_access's sites):
   one line each. */
typedef struct {
  char *module, *table;
} Sites;

static Kernel *kernels;
static size_t numKernels, capKernels;
static Shared *shared;
static size_t numShared, capShared;
static Sites *sites;
static size_t numSites, capSites;

EXPORT void fuel_emu_register_kernel(const char *module, const char *name,
                                     Entry entry, int32_t warpSize) {
  if (numKernels == capKernels) {
    capKernels = capKernels ? 2 * capKernels : 16;
    kernels = realloc(kernels, capKernels * sizeof *kernels);
  }
  kernels[numKernels++] =
      (Kernel){strdup(module), strdup(name), entry, warpSize};
}

EXPORT void fuel_emu_register_shared(const char *module, void *at,
                                     int64_t size) {
  if (numShared == capShared) {
    capShared = capShared ? 2 * capShared : 16;
    shared = realloc(shared, capShared * sizeof *shared);
  }
  shared[numShared++] = (Shared){strdup(module), at, (size_t)size};
}

EXPORT void fuel_emu_register_sites(const char *module, const char *table) {
  if (numSites == capSites) {
    capSites = capSites ? 2 * capSites : 16;
    sites = realloc(sites, capSites * sizeof *sites);
  }
  sites[numSites++] = (Sites){strdup(module), strdup(table)};
}

/*===--- Device memory ----------------------------------------------------===*/

typedef struct {
  char *base;     /* the mapping: pages, then one page nothing may touch */
  size_t mapped;  /* bytes mapped, the last page included */
  char *data;     /* what the host code gets: 16-byte aligned, its end as
                     near the last page as that allows */
  size_t size;
} Allocation;

static Allocation *allocations;
static size_t numAllocations, capAllocations;
static uint64_t totalAllocs, totalFrees;

static size_t pageSize(void) {
  static size_t page;
  if (!page)
    page = (size_t)sysconf(_SC_PAGESIZE);
  return page;
}

EXPORT void *mgpuMemAlloc(uint64_t size, void *stream, _Bool hostShared) {
  (void)stream;
  (void)hostShared;
  size_t page = pageSize();
  size_t padded = (size + 15) & ~(size_t)15;
  size_t pages = (padded + page - 1) / page * page;
  size_t mapped = pages + page;
  char *base = mmap(NULL, mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    fail("mgpuMemAlloc: cannot map %llu bytes", (unsigned long long)size);
    return NULL;
  }
  mprotect(base + pages, page, PROT_NONE);
  char *data = base + pages - padded;
  memset(data, 0xff, padded);
  if (numAllocations == capAllocations) {
    capAllocations = capAllocations ? 2 * capAllocations : 64;
    allocations = realloc(allocations, capAllocations * sizeof *allocations);
  }
  allocations[numAllocations++] = (Allocation){base, mapped, data, size};
  ++totalAllocs;
  return data;
}

static Allocation *findAllocation(const void *at) {
  for (size_t i = 0; i < numAllocations; ++i)
    if ((const char *)at >= allocations[i].base &&
        (const char *)at < allocations[i].base + allocations[i].mapped)
      return &allocations[i];
  return NULL;
}

EXPORT void mgpuMemFree(void *at, void *stream) {
  (void)stream;
  Allocation *a = findAllocation(at);
  if (!a || a->data != at) {
    fail("mgpuMemFree: %p is not device memory", at);
    return;
  }
  munmap(a->base, a->mapped);
  *a = allocations[--numAllocations];
  ++totalFrees;
}

/* Checks that [at, at + size) is host memory or within one allocation. */
static int checkRange(const char *what, const void *at, size_t size) {
  Allocation *a = findAllocation(at);
  if (a && ((const char *)at < a->data ||
            (const char *)at + size > a->data + a->size)) {
    fail("%s: %zu bytes at %p run past a device buffer of %zu bytes", what,
         size, at, a->size);
    return 0;
  }
  return 1;
}

EXPORT void mgpuMemcpy(void *dst, void *src, size_t size, void *stream) {
  (void)stream;
  if (checkRange("mgpuMemcpy", dst, size) &&
      checkRange("mgpuMemcpy", src, size))
    memmove(dst, src, size);
}

EXPORT void mgpuMemset32(void *dst, unsigned value, size_t count,
                         void *stream) {
  (void)stream;
  if (checkRange("mgpuMemset32", dst, 4 * count))
    for (size_t i = 0; i < count; ++i)
      ((uint32_t *)dst)[i] = value;
}

EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                         void *stream) {
  (void)stream;
  if (checkRange("mgpuMemset16", dst, 2 * count))
    for (size_t i = 0; i < count; ++i)
      ((uint16_t *)dst)[i] = value;
}

/* Host memory is device memory here. */
EXPORT void mgpuMemHostRegister(void *at, uint64_t size) {
  (void)at;
  (void)size;
}
EXPORT void mgpuMemHostUnregister(void *at) { (void)at; }
EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                      int64_t elementSize) {
  (void)rank;
  (void)descriptor;
  (void)elementSize;
}
EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                        int64_t elementSize) {
  (void)rank;
  (void)descriptor;
  (void)elementSize;
}

/*===--- Streams, events, devices -----------------------------------------===*/

/* Everything runs when it is called: streams and events only need to be
   distinct non-null handles. */
static char streamTag, eventTag;
EXPORT void *mgpuStreamCreate(void) { return &streamTag; }
EXPORT void mgpuStreamDestroy(void *stream) { (void)stream; }
EXPORT void mgpuStreamSynchronize(void *stream) { (void)stream; }
EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  (void)stream;
  (void)event;
}
EXPORT void *mgpuEventCreate(void) { return &eventTag; }
EXPORT void mgpuEventDestroy(void *event) { (void)event; }
EXPORT void mgpuEventSynchronize(void *event) { (void)event; }
EXPORT void mgpuEventRecord(void *event, void *stream) {
  (void)event;
  (void)stream;
}
EXPORT void mgpuSetDefaultDevice(int32_t device) { (void)device; }

/*===--- Modules ----------------------------------------------------------===*/

static const char kObjectPrefix[] = "fuel-gpu-emulator:";

typedef struct Function Function;

typedef struct {
  char name[256];
  Kernel *kernels;
  size_t numKernels;
  Shared *shared;
  size_t numShared;
  char *sites; /* the profiled accesses' table, or NULL */
  Function *functions; /* the handles mgpuModuleGetFunction gave out */
} Module;

struct Function {
  const Module *module;
  char name[256];
  Function *next;
};

static void *loadModule(const void *data) {
  if (!data || strncmp(data, kObjectPrefix, sizeof kObjectPrefix - 1)) {
    fail("mgpuModuleLoad: not a module of fuel-to-nvvm{format=emulator}");
    return NULL;
  }
  Module *m = calloc(1, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s",
           (const char *)data + sizeof kObjectPrefix - 1);
  /* Take (and take out of the registry) what was registered for it. */
  m->kernels = calloc(numKernels + 1, sizeof *m->kernels);
  size_t kept = 0;
  for (size_t i = 0; i < numKernels; ++i) {
    if (!strcmp(kernels[i].module, m->name))
      m->kernels[m->numKernels++] = kernels[i];
    else
      kernels[kept++] = kernels[i];
  }
  numKernels = kept;
  m->shared = calloc(numShared + 1, sizeof *m->shared);
  kept = 0;
  for (size_t i = 0; i < numShared; ++i) {
    if (!strcmp(shared[i].module, m->name))
      m->shared[m->numShared++] = shared[i];
    else
      shared[kept++] = shared[i];
  }
  numShared = kept;
  kept = 0;
  for (size_t i = 0; i < numSites; ++i) {
    if (!strcmp(sites[i].module, m->name) && !m->sites) {
      m->sites = sites[i].table;
      free(sites[i].module);
    } else {
      sites[kept++] = sites[i];
    }
  }
  numSites = kept;
  return m;
}

EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  return loadModule(data);
}

EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  (void)optLevel;
  return loadModule(data);
}

EXPORT void mgpuModuleUnload(void *module) {
  Module *m = module;
  if (!m)
    return;
  for (size_t i = 0; i < m->numKernels; ++i) {
    free(m->kernels[i].module);
    free(m->kernels[i].name);
  }
  for (size_t i = 0; i < m->numShared; ++i)
    free(m->shared[i].module);
  free(m->sites);
  while (m->functions) {
    Function *next = m->functions->next;
    free(m->functions);
    m->functions = next;
  }
  free(m->kernels);
  free(m->shared);
  free(m);
}

EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  Module *m = module;
  if (!m)
    return NULL;
  for (Function *f = m->functions; f; f = f->next)
    if (!strcmp(f->name, name))
      return f;
  Function *f = calloc(1, sizeof *f);
  f->module = m;
  snprintf(f->name, sizeof f->name, "%s", name);
  f->next = m->functions;
  m->functions = f;
  return f;
}

/*===--- Fibers -----------------------------------------------------------===*/

enum { kStack = 256 * 1024 };

static void fiberMain(void);

/* A fiber's saved state, and the switch between two. On x86-64 a switch
   saves the callee-saved registers and the floating-point control words on
   the stack it leaves and restores them from the one it enters (no system
   call: ucontext's swapcontext saves the signal mask, two system calls a
   switch, most of a large launch's time); elsewhere, ucontext. */
#if defined(__x86_64__) && defined(__linux__) && !defined(FUEL_EMU_UCONTEXT)
#define FUEL_EMU_STACK_SWITCH 1
typedef struct {
  void *sp;
} Context;

/* fuel_emu_switch(&from->sp, to->sp) */
__asm__(".text\n"
        ".globl fuel_emu_switch\n"
        ".hidden fuel_emu_switch\n"
        ".type fuel_emu_switch,@function\n"
        "fuel_emu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n"
        "  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n"
        "  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size fuel_emu_switch, .-fuel_emu_switch\n");
void fuel_emu_switch(void **from, void *to);

static void switchContext(Context *from, Context *to) {
  fuel_emu_switch(&from->sp, to->sp);
}

/* A stack whose first switch "returns" into fiberMain, aligned as a call
   would leave it, with this thread's floating-point control words. */
static void startContext(Context *c, char *stack) {
  uint64_t *top = (uint64_t *)(stack + kStack);
  uint32_t mxcsr;
  uint16_t fpucw;
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
  __asm__ volatile("fnstcw %0" : "=m"(fpucw));
  top[-1] = 0;                        /* fiberMain's return address: none */
  top[-2] = (uint64_t)(uintptr_t)fiberMain;
  for (int i = 3; i <= 8; ++i)        /* rbp, rbx, r12-r15 */
    top[-i] = 0;
  top[-9] = mxcsr | ((uint64_t)fpucw << 32);
  c->sp = &top[-9];
}
#else
typedef struct {
  ucontext_t uc;
} Context;

static ucontext_t *schedulerContext(void);

static void switchContext(Context *from, Context *to) {
  swapcontext(&from->uc, &to->uc);
}

static void startContext(Context *c, char *stack) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = stack;
  c->uc.uc_stack.ss_size = kStack;
  c->uc.uc_link = schedulerContext();
  makecontext(&c->uc, fiberMain, 0);
}
#endif

enum { kWaitNone, kWaitBarrier, kWaitShuffle };

typedef struct {
  Context context;
  int done;
  int waits;
  unsigned generation; /* of the barrier it waits at */
  int x, y, z;
} Fiber;

typedef struct {
  uint64_t arrived, read, mask;
  uint32_t value[kMaxWarp];
} Warp;

static struct {
  Fiber *fibers;
  char *stacks;
  size_t capacity;
  int threads;
  int block[3], grid[3], blockId[3];
  int current;
  int progress;
  int arrived;
  unsigned generation;
  Warp warps[kMaxThreads / 32];
  int warpSize;
  Context scheduler;
  Entry entry;
  void **params;
  const Function *function;
} emu;

#if !FUEL_EMU_STACK_SWITCH
static ucontext_t *schedulerContext(void) { return &emu.scheduler.uc; }
#endif

static int order = -1;      /* 0: forward, 1: reverse, 2: shuffled */
static uint64_t seed = 1;

EXPORT void fuel_emu_set_order(int newOrder, uint64_t newSeed) {
  order = newOrder;
  seed = newSeed ? newSeed : 1;
}

static void readOrder(void) {
  if (order >= 0)
    return;
  const char *env = getenv("FUEL_GPU_EMULATOR_ORDER");
  order = 0;
  if (!env || !*env || !strcmp(env, "forward"))
    return;
  if (!strcmp(env, "reverse")) {
    order = 1;
    return;
  }
  order = 2;
  seed = strtoull(env, NULL, 10);
  if (!seed)
    seed = 1;
}

static uint64_t nextRandom(void) {
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return seed;
}

/* A permutation of [0, n) in the chosen order. */
static void permutation(int *out, int n) {
  for (int i = 0; i < n; ++i)
    out[i] = order == 1 ? n - 1 - i : i;
  if (order == 2)
    for (int i = n - 1; i > 0; --i) {
      int j = (int)(nextRandom() % (uint64_t)(i + 1));
      int t = out[i];
      out[i] = out[j];
      out[j] = t;
    }
}

static void yield(void) {
  Fiber *f = &emu.fibers[emu.current];
  switchContext(&f->context, &emu.scheduler);
}

static void fiberMain(void) {
  emu.entry(emu.params);
  emu.fibers[emu.current].done = 1;
  emu.progress = 1;
#if FUEL_EMU_STACK_SWITCH
  /* Back to the scheduler, for good. */
  switchContext(&emu.fibers[emu.current].context, &emu.scheduler);
#endif
}

static int linearThread(void) {
  const Fiber *f = &emu.fibers[emu.current];
  return f->x + emu.block[0] * (f->y + emu.block[1] * f->z);
}

int emuSpaceOf(const void *at) {
  if (findAllocation(at))
    return kSpaceDevice;
  const Module *m = emu.function->module;
  for (size_t i = 0; i < m->numShared; ++i)
    if ((const char *)at >= (const char *)m->shared[i].at &&
        (const char *)at < (const char *)m->shared[i].at + m->shared[i].size)
      return kSpaceWorkgroup;
  return kSpaceOther;
}

int emuCurrentThread(void) { return linearThread(); }
int emuBlockThreads(void) { return emu.threads; }
int emuWarpSize(void) { return emu.warpSize; }
int emuThreadDone(int t) { return emu.fibers[t].done; }
void emuYield(void) {
  emu.progress = 1;
  yield();
}

EXPORT int32_t fuel_emu_sreg(int32_t code) {
  const Fiber *f = &emu.fibers[emu.current];
  switch (code) {
  case 0: return f->x;
  case 1: return f->y;
  case 2: return f->z;
  case 3: case 4: case 5: return emu.block[code - 3];
  case 6: case 7: case 8: return emu.blockId[code - 6];
  case 9: case 10: case 11: return emu.grid[code - 9];
  case 12: return linearThread() % emu.warpSize;
  case 13: return emu.warpSize;
  default: fail("fuel_emu_sreg: unknown register %d", code); return 0;
  }
}

/* Waits until every thread of the block has arrived (bar.sync 0). */
EXPORT void fuel_emu_barrier(void) {
  unsigned generation = emu.generation;
  emu.progress = 1;
  if (++emu.arrived == emu.threads) {
    profileFlush();
    emu.arrived = 0;
    ++emu.generation;
    return;
  }
  emu.fibers[emu.current].waits = kWaitBarrier;
  emu.fibers[emu.current].generation = generation;
  while (emu.generation == generation && !failed)
    yield();
  emu.fibers[emu.current].waits = kWaitNone;
}

/* Lane j's value of the warp's exchange, read by the lane of `bit`; the
   last lane to read ends the exchange. */
static uint32_t readLane(Warp *w, int j, uint64_t bit) {
  uint32_t read = w->value[j];
  w->read |= bit;
  emu.progress = 1;
  if (w->read == w->mask) {
    w->arrived = 0;
    w->read = 0;
    w->mask = 0;
  }
  return read;
}

/* shfl.sync.{bfly,up,down,idx}.b32 with PTX's rules: returns the value
   read, and in bit 32 whether the source lane was in range. */
EXPORT uint64_t fuel_emu_shfl(int32_t kind, uint32_t mask, uint32_t value,
                              int32_t offset, int32_t clamp) {
  int lane = linearThread() % emu.warpSize;
  Warp *w = &emu.warps[linearThread() / emu.warpSize];
  uint64_t bit = (uint64_t)1 << lane;
  if (emu.warpSize != 32) {
    fail("kernel %s: shfl.sync in a wave of %d lanes", emu.function->name,
         emu.warpSize);
    return value;
  }
  if (!(mask & bit)) {
    fail("kernel %s: lane %d of a warp shuffles with a mask (0x%x) that "
         "leaves it out",
         emu.function->name, lane, mask);
    return value;
  }
  Fiber *f = &emu.fibers[emu.current];
  f->waits = kWaitShuffle;
  /* The previous shuffle of this warp is over once all its lanes read. */
  while ((w->arrived & bit) && !failed)
    yield();
  if (w->arrived && w->mask != mask && !failed)
    fail("kernel %s: lanes of a warp shuffle together with masks 0x%x and "
         "0x%x",
         emu.function->name, (uint32_t)w->mask, mask);
  w->mask = mask;
  w->value[lane] = value;
  w->arrived |= bit;
  emu.progress = 1;
  while ((w->arrived & mask) != mask && !failed)
    yield();
  f->waits = kWaitNone;
  int b = offset & 31, c = clamp & 31, segmask = (clamp >> 8) & 31;
  int maxLane = (lane & segmask) | (c & ~segmask);
  int minLane = lane & segmask;
  int j = lane, valid = 0;
  switch (kind) {
  case 0: j = lane ^ b; valid = j <= maxLane; break;       /* bfly */
  case 1: j = lane - b; valid = j >= maxLane; break;       /* up */
  case 2: j = lane + b; valid = j <= maxLane; break;       /* down */
  case 3: j = minLane | (b & ~segmask); valid = j <= maxLane; break;
  default: fail("fuel_emu_shfl: unknown kind %d", kind);
  }
  if (!valid)
    j = lane;
  if (!(mask & (1u << j)))
    fail("kernel %s: lane %d reads lane %d, outside the shuffle's mask "
         "(0x%x)",
         emu.function->name, lane, j, mask);
  return (uint64_t)readLane(w, j, bit) | ((uint64_t)(valid != 0) << 32);
}

/* mbcnt.lo / mbcnt.hi (AMD): the bits of `mask` for the lanes below this
   one, among lanes 0-31 (lo) or 32-63 (hi), plus `base`. */
EXPORT int32_t fuel_emu_mbcnt(int32_t high, uint32_t mask, int32_t base) {
  int lane = linearThread() % emu.warpSize;
  int below = high ? lane - 32 : lane;
  if (below <= 0)
    return base;
  uint32_t lanes = below >= 32 ? mask : mask & ((1u << below) - 1);
  return base + __builtin_popcount(lanes);
}

/* A lane exchange of AMD's wave (ds_bpermute, ds_swizzle): every active
   lane offers `value`, each reads lane j's. A lane is active if it reaches
   this; one that waits at a barrier or has returned is not (reading it is
   an error: the wave would read 0). */
static int32_t exchange(int j, int32_t value, const char *what) {
  int lane = linearThread() % emu.warpSize;
  int wave = linearThread() / emu.warpSize;
  Warp *w = &emu.warps[wave];
  uint64_t bit = (uint64_t)1 << lane;
  Fiber *f = &emu.fibers[emu.current];
  f->waits = kWaitShuffle;
  while ((w->arrived & bit) && !failed)
    yield();
  w->value[lane] = (uint32_t)value;
  w->arrived |= bit;
  emu.progress = 1;
  /* Everyone else of the wave has arrived, returned, or waits at a
     barrier not yet released (inactive here). */
  for (;;) {
    uint64_t others = 0;
    int first = wave * emu.warpSize;
    for (int l = 0; l < emu.warpSize && first + l < emu.threads; ++l) {
      const Fiber *o = &emu.fibers[first + l];
      int blocked =
          o->waits == kWaitBarrier && o->generation == emu.generation;
      if (!(w->arrived >> l & 1) && !o->done && !blocked)
        others |= (uint64_t)1 << l;
    }
    if (!others || failed)
      break;
    yield();
  }
  if (!w->mask)
    w->mask = w->arrived;
  f->waits = kWaitNone;
  if (!(w->mask >> j & 1))
    fail("kernel %s: lane %d reads lane %d, which is not active in the %s",
         emu.function->name, lane, j, what);
  return (int32_t)readLane(w, j, bit);
}

EXPORT int32_t fuel_emu_bpermute(int32_t address, int32_t value) {
  return exchange((int)(((uint32_t)address >> 2) % (uint32_t)emu.warpSize),
                  value, "ds_bpermute");
}

/* ds_swizzle (AMD), both of its modes: with bit 15 set, each group of four
   lanes reads the lanes its 2-bit fields name; else, within each group of
   32 lanes, ((lane & and) | or) ^ xor, the masks in bits 0-4, 5-9 and
   10-14. */
EXPORT int32_t fuel_emu_swizzle(int32_t value, int32_t pattern) {
  int lane = linearThread() % emu.warpSize;
  int j;
  if (pattern & 0x8000) {
    j = (lane & ~3) | ((pattern >> (2 * (lane & 3))) & 3);
  } else {
    int andMask = pattern & 31, orMask = (pattern >> 5) & 31;
    int xorMask = (pattern >> 10) & 31;
    j = (lane & ~31) | ((((lane & 31) & andMask) | orMask) ^ xorMask);
  }
  return exchange(j, value, "ds_swizzle");
}

/*===--- Faults -----------------------------------------------------------===*/

static volatile sig_atomic_t inKernel;
static volatile void *faultAddress;
static struct sigaction previousSegv, previousBus;
static char *signalStack;

static void onFault(int signal, siginfo_t *info, void *unused) {
  (void)unused;
  if (!inKernel) {
    sigaction(SIGSEGV, &previousSegv, NULL);
    sigaction(SIGBUS, &previousBus, NULL);
    raise(signal);
    return;
  }
  faultAddress = info->si_addr;
  inKernel = 0;
  /* The faulting fiber is abandoned: back to the scheduler. */
  Context abandoned;
  switchContext(&abandoned, &emu.scheduler);
}

static void describeFault(void) {
  const char *at = (const char *)faultAddress;
  for (size_t i = 0; i < numAllocations; ++i) {
    const Allocation *a = &allocations[i];
    if (at >= a->base && at < a->base + a->mapped) {
      fail("kernel %s: thread (%d, %d, %d) of block (%d, %d, %d) accessed "
           "%td bytes past the end of a device buffer of %zu bytes",
           emu.function->name, emu.fibers[emu.current].x,
           emu.fibers[emu.current].y, emu.fibers[emu.current].z,
           emu.blockId[0], emu.blockId[1], emu.blockId[2],
           at - (a->data + a->size), a->size);
      return;
    }
  }
  const char *stacks = emu.stacks;
  if (at >= stacks && at < stacks + emu.capacity * kStack)
    fail("kernel %s: a thread overflowed its %d KiB stack",
         emu.function->name, kStack / 1024);
  else
    fail("kernel %s: thread (%d, %d, %d) of block (%d, %d, %d) accessed "
         "%p, which is not device memory",
         emu.function->name, emu.fibers[emu.current].x,
         emu.fibers[emu.current].y, emu.fibers[emu.current].z,
         emu.blockId[0], emu.blockId[1], emu.blockId[2], (void *)at);
}

static void installFaultHandler(void) {
  static int installed;
  if (installed)
    return;
  installed = 1;
  size_t size = 64 * 1024;
  signalStack = malloc(size);
  stack_t ss = {.ss_sp = signalStack, .ss_size = size, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = onFault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &previousSegv);
  sigaction(SIGBUS, &sa, &previousBus);
}

/*===--- Launches ---------------------------------------------------------===*/

static pthread_mutex_t launchLock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t launches, blocksRun;

static int reserveFibers(size_t threads) {
  if (threads <= emu.capacity)
    return 1;
  if (emu.stacks)
    munmap(emu.stacks, emu.capacity * kStack);
  free(emu.fibers);
  emu.fibers = calloc(threads, sizeof *emu.fibers);
  emu.stacks = mmap(NULL, threads * kStack, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (emu.stacks == MAP_FAILED) {
    emu.stacks = NULL;
    emu.capacity = 0;
    fail("cannot map the stacks of %zu threads", threads);
    return 0;
  }
  /* The lowest page of each stack stops an overflow. */
  for (size_t i = 0; i < threads; ++i)
    mprotect(emu.stacks + i * kStack, pageSize(), PROT_NONE);
  emu.capacity = threads;
  return 1;
}

/* Why the block cannot go on: who waits where, who has returned. */
static void describeDeadlock(void) {
  int atBarrier = 0, atShuffle = 0, returned = 0, first = -1;
  for (int i = 0; i < emu.threads; ++i) {
    const Fiber *f = &emu.fibers[i];
    if (f->done)
      ++returned;
    else if (f->waits == kWaitBarrier)
      ++atBarrier;
    else if (f->waits == kWaitShuffle) {
      ++atShuffle;
      if (first < 0)
        first = i;
    }
  }
  if (atShuffle)
    fail("kernel %s, block (%d, %d, %d): %d threads wait at a warp shuffle "
         "(thread %d first) that lanes of its mask never reach; %d wait at "
         "a barrier, %d have returned",
         emu.function->name, emu.blockId[0], emu.blockId[1], emu.blockId[2],
         atShuffle, first, atBarrier, returned);
  else
    fail("kernel %s, block (%d, %d, %d): %d of its %d threads wait at a "
         "barrier that the other %d never reach (they have returned)",
         emu.function->name, emu.blockId[0], emu.blockId[1], emu.blockId[2],
         atBarrier, emu.threads, returned);
}

static void runBlock(int *threadOrder) {
  const Module *m = emu.function->module;
  for (size_t i = 0; i < m->numShared; ++i)
    memset(m->shared[i].at, 0xff, m->shared[i].size);
  memset(emu.warps, 0, sizeof emu.warps);
  emu.arrived = 0;
  int n = emu.threads;
  for (int t = 0; t < n; ++t) {
    Fiber *f = &emu.fibers[t];
    f->done = 0;
    f->waits = kWaitNone;
    f->x = t % emu.block[0];
    f->y = t / emu.block[0] % emu.block[1];
    f->z = t / (emu.block[0] * emu.block[1]);
    startContext(&f->context, emu.stacks + (size_t)t * kStack);
  }
  for (;;) {
    int live = 0;
    emu.progress = 0;
    permutation(threadOrder, n);
    for (int k = 0; k < n && !failed; ++k) {
      int t = threadOrder[k];
      if (emu.fibers[t].done)
        continue;
      ++live;
      emu.current = t;
      inKernel = 1;
      switchContext(&emu.scheduler, &emu.fibers[t].context);
      if (!inKernel) { /* it faulted */
        describeFault();
        return;
      }
      inKernel = 0;
    }
    if (failed || !live) {
      profileFlush();
      return;
    }
    if (!emu.progress) {
      describeDeadlock();
      return;
    }
  }
}

EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                             intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                             intptr_t blockZ, int32_t sharedBytes,
                             void *stream, void **params, void **extra,
                             size_t paramCount) {
  (void)stream;
  (void)extra;
  (void)paramCount;
  if (failed)
    return;
  const Function *f = function;
  if (!f) {
    fail("mgpuLaunchKernel: no function");
    return;
  }
  Entry entry = NULL;
  int warpSize = 32;
  for (size_t i = 0; i < f->module->numKernels; ++i)
    if (!strcmp(f->module->kernels[i].name, f->name)) {
      entry = f->module->kernels[i].entry;
      warpSize = f->module->kernels[i].warpSize;
    }
  if (!entry) {
    fail("mgpuLaunchKernel: no kernel %s in module %s (was it compiled "
         "with fuel-to-nvvm{format=emulator}?)",
         f->name, f->module->name);
    return;
  }
  intptr_t threads = blockX * blockY * blockZ;
  if (gridX < 1 || gridY < 1 || gridZ < 1 || blockX < 1 || blockY < 1 ||
      blockZ < 1 || threads > kMaxThreads || blockZ > 64 || gridY > 65535 ||
      gridZ > 65535 || gridX > 2147483647) {
    fail("kernel %s: grid (%td, %td, %td) and block (%td, %td, %td) are "
         "outside CUDA's limits",
         f->name, gridX, gridY, gridZ, blockX, blockY, blockZ);
    return;
  }
  if (sharedBytes) {
    fail("kernel %s: dynamic shared memory is not emulated", f->name);
    return;
  }
  pthread_mutex_lock(&launchLock);
  readOrder();
  installFaultHandler();
  if (reserveFibers((size_t)threads)) {
    int *threadOrder = malloc(sizeof(int) * (size_t)threads);
    intptr_t blocks = gridX * gridY * gridZ;
    int *blockOrder = NULL;
    /* Shuffling the blocks needs their list; past a million, in order. */
    if (order != 0 && blocks <= (1 << 20)) {
      blockOrder = malloc(sizeof(int) * (size_t)blocks);
      permutation(blockOrder, (int)blocks);
    }
    emu.threads = (int)threads;
    emu.block[0] = (int)blockX;
    emu.block[1] = (int)blockY;
    emu.block[2] = (int)blockZ;
    emu.grid[0] = (int)gridX;
    emu.grid[1] = (int)gridY;
    emu.grid[2] = (int)gridZ;
    emu.entry = entry;
    emu.warpSize = warpSize;
    emu.params = params;
    emu.function = f;
    profileLaunch(f->module->name, f->name, f->module->sites, blocks);
    for (intptr_t k = 0; k < blocks && !failed; ++k) {
      intptr_t b = blockOrder ? blockOrder[k] : k;
      emu.blockId[0] = (int)(b % gridX);
      emu.blockId[1] = (int)(b / gridX % gridY);
      emu.blockId[2] = (int)(b / (gridX * gridY));
      profileBlock(b);
      runBlock(threadOrder);
      ++blocksRun;
    }
    ++launches;
    free(blockOrder);
    free(threadOrder);
  }
  pthread_mutex_unlock(&launchLock);
}

/* Launches, blocks run, device allocations and frees since the library was
   loaded (for tests). */
EXPORT void fuel_emu_counts(uint64_t out[4]) {
  out[0] = launches;
  out[1] = blocksRun;
  out[2] = totalAllocs;
  out[3] = totalFrees;
}

/*===--- libdevice --------------------------------------------------------===*/

#define UNARY(name, fn)                                                       \
  EXPORT float __nv_##name##f(float x) { return fn##f(x); }                  \
  EXPORT double __nv_##name(double x) { return fn(x); }
#define BINARY(name, fn)                                                      \
  EXPORT float __nv_##name##f(float x, float y) { return fn##f(x, y); }      \
  EXPORT double __nv_##name(double x, double y) { return fn(x, y); }

UNARY(exp, exp)
UNARY(exp2, exp2)
UNARY(expm1, expm1)
UNARY(log, log)
UNARY(log2, log2)
UNARY(log10, log10)
UNARY(log1p, log1p)
UNARY(fabs, fabs)
UNARY(sqrt, sqrt)
UNARY(cbrt, cbrt)
UNARY(tanh, tanh)
UNARY(sinh, sinh)
UNARY(cosh, cosh)
UNARY(sin, sin)
UNARY(cos, cos)
UNARY(tan, tan)
UNARY(asin, asin)
UNARY(acos, acos)
UNARY(atan, atan)
UNARY(asinh, asinh)
UNARY(acosh, acosh)
UNARY(atanh, atanh)
UNARY(erf, erf)
UNARY(erfc, erfc)
UNARY(floor, floor)
UNARY(ceil, ceil)
UNARY(round, round)
UNARY(trunc, trunc)
UNARY(rint, rint)
UNARY(nearbyint, nearbyint)
BINARY(pow, pow)
BINARY(fmax, fmax)
BINARY(fmin, fmin)
BINARY(fmod, fmod)
BINARY(atan2, atan2)
BINARY(copysign, copysign)
EXPORT float __nv_rsqrtf(float x) { return 1.0f / sqrtf(x); }
EXPORT double __nv_rsqrt(double x) { return 1.0 / sqrt(x); }
EXPORT float __nv_powif(float x, int n) { return powf(x, (float)n); }
EXPORT double __nv_powi(double x, int n) { return pow(x, (double)n); }
EXPORT float __nv_fmaf(float x, float y, float z) { return fmaf(x, y, z); }
EXPORT double __nv_fma(double x, double y, double z) { return fma(x, y, z); }
EXPORT int __nv_isnanf(float x) { return isnan(x); }
EXPORT int __nv_isinff(float x) { return isinf(x); }
EXPORT int __nv_finitef(float x) { return isfinite(x); }
