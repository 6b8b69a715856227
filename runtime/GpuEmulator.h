/*===- GpuEmulator.h - What the emulator's parts share --------------------===//
 *
 * The GPU emulator (GpuEmulator.c) and its memory-access profile
 * (GpuEmulatorProfile.c): internal to the library.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FUEL_RUNTIME_GPUEMULATOR_H
#define FUEL_RUNTIME_GPUEMULATOR_H

#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

enum { kMaxWarp = 64, kMaxThreads = 1024 };

/* Records the first error since the last fuel_emu_clear_error. */
void fail(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/*--- The block being run (GpuEmulator.c) ---------------------------------*/

/* The running thread's index in its block (x fastest), and the block's. */
int emuCurrentThread(void);
int emuBlockThreads(void);
int emuWarpSize(void);
/* Whether thread `t` of the block has returned. */
int emuThreadDone(int t);
/* Lets the block's other threads run; back when this one's turn comes. */
void emuYield(void);

enum { kSpaceOther, kSpaceDevice, kSpaceWorkgroup };
/* Where `at` points: device memory (mgpuMemAlloc), a workgroup buffer of
   the running kernel's module, or elsewhere (a thread's stack: private
   memory, or host memory). */
int emuSpaceOf(const void *at);

/*--- The memory-access profile (GpuEmulatorProfile.c) --------------------===*/

/* A launch begins: whether to profile it, and which blocks. `sites` is the
   module's table of instrumented accesses (one line each); 0 blocks of
   `numBlocks`: the launch is not profiled. */
void profileLaunch(const char *module, const char *kernel,
                   const char *sites, int64_t numBlocks);
/* Block `block` (its index in the grid, x fastest) begins. */
void profileBlock(int64_t block);
/* Every thread of the block is at a barrier, or the block is over: the
   accesses so far are accounted. */
void profileFlush(void);

#endif /* FUEL_RUNTIME_GPUEMULATOR_H */
