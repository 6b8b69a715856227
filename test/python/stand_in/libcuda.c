/* A stand-in for the CUDA driver (libcuda.so.1) on a machine without a GPU.
 *
 * It answers the device queries of fuel_mlir.gpu.cuda_devices() for two
 * GPUs (an sm_90 with 132 SMs, an sm_86 with 72) and carries out what MLIR's
 * CUDA runtime wrappers (libmlir_cuda_runtime.so) and test/gpu/replay.py ask
 * of the driver when they run: "device" memory is host memory, copies are
 * memcpy, and a kernel launch runs nothing but is checked and written to
 * the log named by STUB_CUDA_LOG, a line per call:
 *
 *   module <bytes> <.target of the PTX>
 *   launch <kernel> grid <x> <y> <z> block <x> <y> <z> smem <bytes>
 *          params <count> device <how many point into device memory>
 *   alloc <bytes> | free <bytes> | copy <h2d|d2h|d2d|h2h> <bytes>
 *   error <what>   (a call the real driver would refuse, or a launch that
 *                   would fault: past CUDA's limits or the kernel's
 *                   .maxntid, a pointer parameter (.ptr) not into device
 *                   memory, a copy past the end of an allocation, ...)
 *
 * New device memory is filled with the f32 1.0, so a result that comes back
 * unchanged by the (absent) kernels reads as ones.
 *
 * With STUB_CUDA_TRACE=<folder> it also writes there what a GPU would have
 * to do, for test/gpu/replay.py to do on one: trace.txt, a line per device
 * call, with the modules' PTX (module<N>.ptx) and the bytes copied in
 * (blob<N>.bin) beside it:
 *
 *   module <N>
 *   alloc <A> <bytes>                     (A: the allocation's number)
 *   free <A>
 *   h2d <A> <offset> <bytes> <N>          (the bytes: blob<N>.bin)
 *   d2h <A> <offset> <bytes>
 *   d2d <A> <offset> <B> <offset> <bytes>
 *   memset32|memset16 <A> <offset> <value> <count>
 *   launch <N> <kernel> <gx> <gy> <gz> <bx> <by> <bz> <smem> <params...>
 *
 * where each kernel parameter is d:<A>:<offset> (a pointer into device
 * memory) or x:<its bytes in hex>.
 *
 * STUB_CUINIT=<status> makes cuInit fail; STUB_COUNT=<n> sets the GPUs.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static void note(const char *format, ...) {
  const char *path = getenv("STUB_CUDA_LOG");
  if (!path)
    return;
  FILE *log = fopen(path, "a");
  if (!log)
    return;
  va_list args;
  va_start(args, format);
  vfprintf(log, format, args);
  va_end(args);
  fputc('\n', log);
  fclose(log);
}

/* The trace (STUB_CUDA_TRACE), and a file beside it. */
static FILE *traceFile(void) {
  static FILE *trace;
  static char tracing[4096];
  const char *dir = getenv("STUB_CUDA_TRACE");
  if (!dir)
    dir = "";
  if (strcmp(dir, tracing)) { /* a new folder: a new trace */
    if (trace)
      fclose(trace);
    trace = NULL;
    snprintf(tracing, sizeof tracing, "%s", dir);
    if (*dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/trace.txt", dir);
      trace = fopen(path, "w");
      if (trace)
        setvbuf(trace, NULL, _IOLBF, 0);
    }
  }
  return trace;
}

static void traceBlob(const char *name, int n, const void *bytes,
                      size_t size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%d.%s", getenv("STUB_CUDA_TRACE"), name,
           n, !strcmp(name, "module") ? "ptx" : "bin");
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(bytes, 1, size, f);
    fclose(f);
  }
}

/* --- Devices --------------------------------------------------------- */

CUresult cuInit(unsigned flags) {
  const char *s = getenv("STUB_CUINIT");
  return s ? atoi(s) : 0;
}

CUresult cuDeviceGetCount(int *count) {
  const char *s = getenv("STUB_COUNT");
  *count = s ? atoi(s) : 2;
  return 0;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  *device = 100 + ordinal;
  return 0;
}

CUresult cuDeviceGetName(char *name, int len, int device) {
  snprintf(name, len, "%s", device == 100 ? "Stand-in H100" : "Stand-in A10");
  return 0;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  int first = device == 100;
  switch (attribute) {
  case 75: *value = first ? 9 : 8; return 0;    /* compute capability major */
  case 76: *value = first ? 0 : 6; return 0;    /* minor */
  case 16: *value = first ? 132 : 72; return 0; /* multiprocessors */
  case 97: *value = first ? 232448 : 101376; return 0; /* shared, opt-in */
  }
  return 1; /* CUDA_ERROR_INVALID_VALUE */
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = error ? "CUDA_ERROR_STAND_IN" : "CUDA_SUCCESS";
  return 0;
}

/* --- Contexts, streams, events --------------------------------------- */

static int context, stream, event;

CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) {
  *ctx = &context;
  return 0;
}
CUresult cuCtxPushCurrent_v2(void *ctx) { return ctx == &context ? 0 : 201; }
CUresult cuCtxPopCurrent_v2(void **ctx) {
  if (ctx)
    *ctx = &context;
  return 0;
}
CUresult cuCtxSetCurrent(void *ctx) { return ctx == &context ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuStreamCreate(void **s, unsigned flags) {
  *s = &stream;
  return 0;
}
CUresult cuStreamDestroy_v2(void *s) { return 0; }
CUresult cuStreamSynchronize(void *s) { return 0; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) { return 0; }
CUresult cuEventCreate(void **e, unsigned flags) {
  *e = &event;
  return 0;
}
CUresult cuEventDestroy_v2(void *e) { return 0; }
CUresult cuEventRecord(void *e, void *s) { return 0; }
CUresult cuEventSynchronize(void *e) { return 0; }
CUresult cuEventElapsedTime(float *ms, void *start, void *stop) {
  *ms = 0.0f;
  return 0;
}

/* --- Memory ---------------------------------------------------------- */

#define MAX_ALLOCS 4096
static struct {
  char *base;
  size_t size;
  int serial; /* the trace's number for it */
} allocs[MAX_ALLOCS];
static int allocCount;

static int allocation(const void *p) {
  for (int i = 0; i < MAX_ALLOCS; ++i)
    if (allocs[i].base && (const char *)p >= allocs[i].base &&
        (const char *)p < allocs[i].base + allocs[i].size)
      return i;
  return -1;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t size) {
  for (int i = 0; i < MAX_ALLOCS; ++i) {
    if (allocs[i].base)
      continue;
    char *p = malloc(size ? size : 1);
    if (!p)
      return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    float one = 1.0f;
    for (size_t at = 0; at + sizeof one <= size; at += sizeof one)
      memcpy(p + at, &one, sizeof one);
    allocs[i].base = p;
    allocs[i].size = size ? size : 1;
    allocs[i].serial = allocCount++;
    *ptr = (CUdeviceptr)(uintptr_t)p;
    note("alloc %zu", size);
    if (traceFile())
      fprintf(traceFile(), "alloc %d %zu\n", allocs[i].serial,
              allocs[i].size);
    return 0;
  }
  return 2;
}

CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t size, unsigned flags) {
  return cuMemAlloc_v2(ptr, size);
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
  int i = allocation((void *)(uintptr_t)ptr);
  if (i < 0 || allocs[i].base != (char *)(uintptr_t)ptr) {
    note("error free of memory not allocated");
    return 1;
  }
  note("free %zu", allocs[i].size);
  if (traceFile())
    fprintf(traceFile(), "free %d\n", allocs[i].serial);
  free(allocs[i].base);
  allocs[i].base = NULL;
  return 0;
}

static CUresult copy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  void *d = (void *)(uintptr_t)dst, *s = (void *)(uintptr_t)src;
  int di = allocation(d), si = allocation(s);
  if ((di >= 0 && (char *)d + n > allocs[di].base + allocs[di].size) ||
      (si >= 0 && (char *)s + n > allocs[si].base + allocs[si].size)) {
    note("error copy of %zu bytes past the end of device memory", n);
    return 1;
  }
  note("copy %s %zu", si >= 0 ? (di >= 0 ? "d2d" : "d2h")
                              : (di >= 0 ? "h2d" : "h2h"), n);
  FILE *trace = traceFile();
  if (trace && di >= 0 && si >= 0)
    fprintf(trace, "d2d %d %td %d %td %zu\n", allocs[di].serial,
            (char *)d - allocs[di].base, allocs[si].serial,
            (char *)s - allocs[si].base, n);
  else if (trace && si >= 0)
    fprintf(trace, "d2h %d %td %zu\n", allocs[si].serial,
            (char *)s - allocs[si].base, n);
  else if (trace && di >= 0) {
    static int blobs;
    traceBlob("blob", blobs, s, n);
    fprintf(trace, "h2d %d %td %zu %d\n", allocs[di].serial,
            (char *)d - allocs[di].base, n, blobs++);
  }
  memmove(d, s, n);
  return 0;
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return copy(dst, src, n);
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, void *s) {
  return copy(dst, src, n);
}
static void traceMemset(int bits, CUdeviceptr dst, unsigned value,
                        size_t count) {
  int i = allocation((void *)(uintptr_t)dst);
  if (traceFile() && i >= 0)
    fprintf(traceFile(), "memset%d %d %td %u %zu\n", bits, allocs[i].serial,
            (char *)(uintptr_t)dst - allocs[i].base, value, count);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  return copy(dst, (CUdeviceptr)(uintptr_t)src, n);
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  return copy((CUdeviceptr)(uintptr_t)dst, src, n);
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return copy(dst, src, n);
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                          void *s);
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value,
                          size_t count, void *s);
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned value, size_t count) {
  return cuMemsetD32Async(dst, value, count, NULL);
}
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count) {
  return cuMemsetD16Async(dst, value, count, NULL);
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                          void *s) {
  traceMemset(32, dst, value, count);
  for (size_t i = 0; i < count; ++i)
    memcpy((char *)(uintptr_t)dst + 4 * i, &value, 4);
  return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value,
                          size_t count, void *s) {
  traceMemset(16, dst, value, count);
  for (size_t i = 0; i < count; ++i)
    memcpy((char *)(uintptr_t)dst + 2 * i, &value, 2);
  return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned flags) {
  return 0;
}
CUresult cuMemHostUnregister(void *p) { return 0; }

/* --- Modules and launches -------------------------------------------- */

#define MAX_FUNCTIONS 4096
static struct {
  char name[256];
  const char *ptx; /* the module's text, kept while it is loaded */
} functions[MAX_FUNCTIONS];
/* Each loaded module: its number in the trace, then its text. */
static int moduleCount;
static int functionCount;

CUresult cuModuleLoadData(void **module, const void *image) {
  const char *text = image;
  const char *target = strstr(text, "\n.target ");
  if (!target) {
    note("error module without a .target (not PTX)");
    return 218; /* CUDA_ERROR_INVALID_PTX */
  }
  char chip[32] = "";
  sscanf(target, "\n.target %31[^ \n,]", chip);
  size_t size = strlen(text) + 1;
  char *kept = malloc(sizeof(int) + size);
  memcpy(kept, &moduleCount, sizeof(int));
  memcpy(kept + sizeof(int), text, size);
  *module = kept + sizeof(int);
  note("module %zu %s", size, chip);
  if (traceFile()) {
    traceBlob("module", moduleCount, text, size - 1);
    fprintf(traceFile(), "module %d\n", moduleCount);
  }
  ++moduleCount;
  return 0;
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n,
                            void *options, void **values) {
  return cuModuleLoadData(module, image);
}

CUresult cuModuleUnload(void *module) { return 0; }

CUresult cuModuleGetFunction(void **function, void *module,
                             const char *name) {
  const char *ptx = module;
  char entry[300];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  if (!strstr(ptx, entry) || functionCount == MAX_FUNCTIONS) {
    note("error no kernel %s in the module", name);
    return 500; /* CUDA_ERROR_NOT_FOUND */
  }
  snprintf(functions[functionCount].name, 256, "%s", name);
  functions[functionCount].ptx = ptx;
  *function = &functions[functionCount++];
  return 0;
}

CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  return 0;
}

/* The parameters of kernel `name` in `ptx`, at most `most`: each one's
 * bytes in `sizes` (.u64: 8, .b8 name[16]: 16, ...) and whether it is a
 * pointer (.ptr) in `pointer`; returns their number, or -1 for a
 * declaration it cannot size. */
static int parameters(const char *ptx, const char *name, int *sizes,
                      int *pointer, int most) {
  char entry[300];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  const char *at = strstr(ptx, entry);
  const char *end = at ? strchr(at, ')') : NULL;
  int count = 0;
  while (at && count < most) {
    at = strstr(at, ".param ");
    if (!at || at > end)
      break;
    at += strlen(".param ");
    const char *stop = strpbrk(at, ",)");
    const char *bracket = memchr(at, '[', stop - at);
    int size = 0, width = 0;
    /* The type: .u64, .b32, .f16, ... (.b8 in an array's declaration). */
    for (const char *t = at; t && t < stop; t = strchr(t + 1, '.')) {
      if (strchr("usbf", t[1]) && sscanf(t + 2, "%d", &width) == 1 &&
          width % 8 == 0)
        break;
      width = 0;
    }
    if (bracket && width)
      size = width / 8 * atoi(bracket + 1);
    else
      size = width / 8;
    if (!size)
      return -1;
    const char *ptr = strstr(at, ".ptr");
    pointer[count] = ptr && ptr < stop;
    sizes[count++] = size;
    at = stop;
  }
  return count;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *s, void **params, void **extra) {
  if (function < (void *)functions ||
      function >= (void *)(functions + functionCount)) {
    note("error launch of an unknown function");
    return 400; /* CUDA_ERROR_INVALID_HANDLE */
  }
  const char *name = ((const char *)function);
  const char *ptx = functions[(int)(((char *)function - (char *)functions) /
                                    sizeof functions[0])].ptx;
  if (!gx || !gy || !gz || !bx || !by || !bz ||
      (unsigned long long)bx * by * bz > 1024 || gy > 65535 || gz > 65535) {
    note("error launch of %s with grid %u %u %u block %u %u %u", name, gx, gy,
         gz, bx, by, bz);
    return 1;
  }
  /* A block larger than the kernel's .maxntid (the product of its
   * extents) fails to launch on a GPU. */
  char entry[300];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  const char *body = strstr(ptx, entry);
  const char *limit = body ? strstr(body, ".maxntid ") : NULL;
  const char *open = body ? strchr(body, '{') : NULL;
  unsigned mx = 1, my = 1, mz = 1;
  if (limit && (!open || limit < open) &&
      sscanf(limit, ".maxntid %u, %u, %u", &mx, &my, &mz) >= 1 &&
      (unsigned long long)bx * by * bz > (unsigned long long)mx * my * mz) {
    note("error launch of %s with block %u %u %u past its .maxntid %u %u %u",
         name, bx, by, bz, mx, my, mz);
    return 1;
  }
  int sizes[1024], pointer[1024];
  int count = parameters(ptx, name, sizes, pointer, 1024), device = 0;
  if (count < 0) {
    note("error a parameter of %s of no size the stand-in knows", name);
    return 1;
  }
  /* Each parameter's allocation, where it is an 8-byte pointer into device
   * memory (-1 where not). */
  int into[1024];
  for (int i = 0; i < count; ++i) {
    void *value = NULL;
    if (sizes[i] == 8)
      memcpy(&value, params[i], sizeof value);
    into[i] = value ? allocation(value) : -1;
    device += into[i] >= 0;
    if (into[i] < 0 && pointer[i] && value) {
      /* A kernel would read host memory (or no memory) through it. */
      note("error launch of %s: pointer parameter %d is %p, not device "
           "memory", name, i, value);
      return 1;
    }
  }
  FILE *trace = traceFile();
  if (trace) {
    int module;
    memcpy(&module, ptx - sizeof(int), sizeof(int));
    fprintf(trace, "launch %d %s %u %u %u %u %u %u %u", module, name, gx, gy,
            gz, bx, by, bz, smem);
    for (int i = 0; i < count; ++i) {
      if (into[i] >= 0) {
        char *value;
        memcpy(&value, params[i], sizeof value);
        fprintf(trace, " d:%d:%td", allocs[into[i]].serial,
                value - allocs[into[i]].base);
        continue;
      }
      fputs(" x:", trace);
      for (int b = 0; b < sizes[i]; ++b)
        fprintf(trace, "%02x", ((unsigned char *)params[i])[b]);
    }
    fputc('\n', trace);
  }
  note("launch %s grid %u %u %u block %u %u %u smem %u params %d device %d",
       name, gx, gy, gz, bx, by, bz, smem, count, device);
  return 0;
}

CUresult cuLaunchKernelEx(const void *config, void *function, void **params,
                          void **extra) {
  note("error cluster launch");
  return 1;
}

CUresult cuTensorMapEncodeTiled(void) {
  note("error tensor map");
  return 1;
}
