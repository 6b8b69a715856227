/*===- GpuEmulatorProfile.c - How kernels access memory, per warp ---------===//
 *
 * The memory-access profile of the GPU emulator: with
 * fuel-gpu-emulated-kernels{memory-profile} (fuel-to-nvvm and fuel-to-rocdl
 * with format=emulator-profile), every load and store of a kernel calls
 * fuel_emu_access(site, address, bytes, alignment) first. The accesses of
 * one warp (or AMD wave) that a GPU serves as one request are the k-th
 * executions of the same site by its lanes; for each such request this
 * counts what a GPU would move:
 * - device memory: the 32-byte sectors the lanes touch, against the fewest
 *   that hold the bytes they ask for (a request is coalesced when they are
 *   equal: 32 lanes reading 32 consecutive floats touch 4 sectors);
 * - workgroup memory: the wavefronts the banks need (32 banks of 4 bytes,
 *   each wavefront serving up to 128 bytes: lanes are taken in groups of
 *   128 / bytes, and a group needs as many wavefronts as the most distinct
 *   words any bank holds of it), against the fewest that hold its words (a
 *   request is free of bank conflicts when they are equal).
 * An access is one request per piece of its alignment, at most 16 bytes
 * (a vector<8xf32> aligned to 16 bytes is two requests, a vector<4xf32>
 * aligned to 4 four), as the backends split it (no GPU thread moves more
 * than 16 bytes at once, nor a vector its alignment does not allow).
 * That is the model of NVIDIA's L1 and shared memory; AMD's LDS has 32
 * banks of 4 bytes too. Caches, latencies and what runs at once are not
 * modeled: these are counts of a kernel's requests, the same on every run.
 *
 * While a block is profiled, each thread lets the others run after every
 * access, so a warp's lanes stay near each other and a request is counted
 * as soon as every live lane of the warp has made it; the rest (lanes that
 * took another branch) are counted at the next barrier or at the block's
 * end. A launch profiles a sample of its blocks (fuel_emu_profile_start):
 * the first of each of N equal runs of blocks, and the last one.
 *
 *===----------------------------------------------------------------------===*/

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "GpuEmulator.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*===--- What is counted --------------------------------------------------===*/

typedef struct {
  uint64_t requests; /* warp-wide requests */
  uint64_t bytes;    /* distinct bytes the lanes of each request ask for */
  uint64_t units;    /* sectors (device), wavefronts (workgroup) */
  uint64_t ideal;    /* the fewest units those bytes need */
} Counts;

typedef struct {
  char *description; /* the site's line: function, load/store, type,
                        alignment, location */
  Counts device, workgroup;
} Site;

/* One kernel of one compiled module: its sites' counts. */
typedef struct Record {
  char *module, *kernel, *table;
  uint64_t launches, blocks;
  size_t numSites;
  Site *sites;
  struct Record *next;
} Record;

static Record *records, **recordsEnd = &records;
static int sampleBlocks = -1; /* -1: off; 0: every block; n: n a launch */

static Record *current;  /* the profiled launch's record, or NULL */
static int64_t launchBlocks;
static int blockOn;      /* whether the running block is profiled */
static uint32_t *siteCount; /* per thread and site: executions so far */
static size_t siteCountCap;

/*===--- Open requests ----------------------------------------------------===*/

/* A request some lanes of a warp have made: the k-th execution of `site`
   by each. */
typedef struct {
  int32_t site, warp;
  uint32_t k;
  int32_t next; /* in its bucket's chain, or in the free list */
  int32_t bytes, alignment, space, live;
  uint64_t mask;
  const char *at[kMaxWarp];
} Request;

static Request *pool;
static int32_t poolUsed, poolCap, freeList = -1, numOpen;
static int32_t *buckets;
static uint32_t numBuckets;

static uint32_t hashKey(int32_t site, int32_t warp, uint32_t k) {
  uint32_t h = (uint32_t)site * 0x9E3779B1u ^ (uint32_t)warp * 0x85EBCA77u ^
               k * 0xC2B2AE3Du;
  return (h ^ h >> 15) & (numBuckets - 1);
}

static void rehash(uint32_t size) {
  free(buckets);
  numBuckets = size;
  buckets = malloc(sizeof *buckets * size);
  memset(buckets, 0xff, sizeof *buckets * size);
  for (int32_t i = 0; i < poolUsed; ++i) {
    if (!pool[i].live)
      continue;
    uint32_t h = hashKey(pool[i].site, pool[i].warp, pool[i].k);
    pool[i].next = buckets[h];
    buckets[h] = i;
  }
}

static Request *openRequest(int32_t site, int32_t warp, uint32_t k) {
  if (!numBuckets)
    rehash(1024);
  uint32_t h = hashKey(site, warp, k);
  for (int32_t i = buckets[h]; i >= 0; i = pool[i].next)
    if (pool[i].site == site && pool[i].warp == warp && pool[i].k == k)
      return &pool[i];
  int32_t i = freeList;
  if (i >= 0) {
    freeList = pool[i].next;
  } else {
    if (poolUsed == poolCap) {
      poolCap = poolCap ? 2 * poolCap : 256;
      pool = realloc(pool, sizeof *pool * (size_t)poolCap);
    }
    i = poolUsed++;
  }
  Request *r = &pool[i];
  r->site = site;
  r->warp = warp;
  r->k = k;
  r->mask = 0;
  r->live = 1;
  r->next = buckets[h];
  buckets[h] = i;
  if (++numOpen > (int32_t)numBuckets)
    rehash(2 * numBuckets);
  return r;
}

static void closeRequest(Request *r) {
  int32_t i = (int32_t)(r - pool);
  int32_t *link = &buckets[hashKey(r->site, r->warp, r->k)];
  while (*link != i)
    link = &pool[*link].next;
  *link = r->next;
  r->live = 0;
  r->next = freeList;
  freeList = i;
  --numOpen;
}

/*===--- Counting a request -----------------------------------------------===*/

static int compareAddresses(const void *a, const void *b) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  return x < y ? -1 : x > y;
}

static int compareWords(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Device memory: the sectors that the lanes' bytes fall in. */
static void countDevice(const Request *r, Counts *c) {
  const char *at[kMaxWarp];
  int n = 0;
  for (int l = 0; l < kMaxWarp; ++l)
    if (r->mask >> l & 1)
      at[n++] = r->at[l];
  qsort(at, (size_t)n, sizeof *at, compareAddresses);
  uint64_t sectors = 0, bytes = 0;
  uintptr_t end = 0, lastSector = 0;
  int anySector = 0;
  for (int i = 0; i < n; ++i) {
    uintptr_t s = (uintptr_t)at[i], e = s + (uintptr_t)r->bytes;
    if (e > end) {
      bytes += e - (s > end ? s : end);
      end = e;
    }
    uintptr_t first = s >> 5, last = (e - 1) >> 5;
    if (anySector && first <= lastSector)
      first = lastSector + 1;
    if (first <= last) {
      sectors += last - first + 1;
      lastSector = last;
      anySector = 1;
    }
  }
  ++c->requests;
  c->bytes += bytes;
  c->units += sectors;
  c->ideal += (bytes + 31) / 32;
}

/* Workgroup memory: the wavefronts of each group of lanes that asks for up
   to 128 bytes. */
static void countWorkgroup(const Request *r, int warpSize, Counts *c) {
  int perPhase = r->bytes >= 128 ? 1 : 128 / r->bytes;
  uint64_t wordsPerLane = ((uint64_t)r->bytes + 3) / 4 + 1;
  uint64_t *words = malloc(sizeof *words * wordsPerLane * (size_t)perPhase);
  uint64_t bytes = 0;
  for (int first = 0; first < warpSize; first += perPhase) {
    size_t n = 0;
    for (int l = first; l < first + perPhase && l < warpSize; ++l) {
      if (!(r->mask >> l & 1))
        continue;
      uintptr_t s = (uintptr_t)r->at[l], e = s + (uintptr_t)r->bytes;
      for (uintptr_t w = s >> 2; w <= (e - 1) >> 2; ++w)
        words[n++] = w;
    }
    if (!n)
      continue;
    qsort(words, n, sizeof *words, compareWords);
    size_t distinct = 0;
    for (size_t i = 0; i < n; ++i)
      if (!i || words[i] != words[distinct - 1])
        words[distinct++] = words[i];
    int banks[32] = {0}, most = 0;
    for (size_t i = 0; i < distinct; ++i) {
      int bank = (int)(words[i] & 31);
      if (++banks[bank] > most)
        most = banks[bank];
    }
    c->units += (uint64_t)most;
    c->ideal += (distinct + 31) / 32;
    bytes += 4 * distinct;
  }
  free(words);
  ++c->requests;
  c->bytes += bytes;
}

/* A GPU's thread moves at most 16 bytes at once: the backends split a
   wider access, each 16 bytes a request of its own (and a vector into the
   pieces its alignment allows). */
enum { kWidestAccess = 16 };

static void countRequest(Request *r) {
  Site *site = &current->sites[r->site];
  Request piece = *r;
  int32_t widest =
      r->alignment < kWidestAccess ? r->alignment : kWidestAccess;
  for (int32_t offset = 0; offset < r->bytes; offset += widest) {
    piece.bytes = r->bytes - offset < widest ? r->bytes - offset : widest;
    for (int l = 0; l < kMaxWarp; ++l)
      if (r->mask >> l & 1)
        piece.at[l] = r->at[l] + offset;
    if (r->space == kSpaceDevice)
      countDevice(&piece, &site->device);
    else
      countWorkgroup(&piece, emuWarpSize(), &site->workgroup);
  }
  closeRequest(r);
}

/* The lanes of `warp` that have not returned. */
static int liveLanes(int warp) {
  int warpSize = emuWarpSize(), threads = emuBlockThreads(), live = 0;
  for (int t = warp * warpSize; t < (warp + 1) * warpSize && t < threads;
       ++t)
    live += !emuThreadDone(t);
  return live;
}

/*===--- The emulator's hooks ---------------------------------------------===*/

static Record *findRecord(const char *module, const char *kernel,
                          const char *table) {
  for (Record *r = records; r; r = r->next)
    if (!strcmp(r->module, module) && !strcmp(r->kernel, kernel) &&
        !strcmp(r->table, table))
      return r;
  Record *r = calloc(1, sizeof *r);
  r->module = strdup(module);
  r->kernel = strdup(kernel);
  r->table = strdup(table);
  for (const char *p = table; *p; ++p)
    r->numSites += *p == '\n';
  r->sites = calloc(r->numSites + 1, sizeof *r->sites);
  const char *line = table;
  for (size_t i = 0; i < r->numSites; ++i) {
    const char *end = strchr(line, '\n');
    r->sites[i].description = strndup(line, (size_t)(end - line));
    line = end + 1;
  }
  *recordsEnd = r;
  recordsEnd = &r->next;
  return r;
}

void profileLaunch(const char *module, const char *kernel, const char *sites,
                   int64_t numBlocks) {
  blockOn = 0;
  current = sampleBlocks >= 0 && sites ? findRecord(module, kernel, sites)
                                       : NULL;
  launchBlocks = numBlocks;
  if (current)
    ++current->launches;
}

void profileBlock(int64_t block) {
  /* What a block that stopped early (an error) left open is dropped. */
  poolUsed = 0;
  freeList = -1;
  numOpen = 0;
  if (numBuckets)
    memset(buckets, 0xff, sizeof *buckets * numBuckets);
  int64_t n = sampleBlocks;
  blockOn = current && (n == 0 || launchBlocks <= n ||
                        block == launchBlocks - 1 ||
                        (block * n) % launchBlocks < n);
  if (!blockOn)
    return;
  ++current->blocks;
  size_t needed = (size_t)emuBlockThreads() * current->numSites;
  if (needed > siteCountCap) {
    free(siteCount);
    siteCount = malloc(sizeof *siteCount * needed);
    siteCountCap = needed;
  }
  memset(siteCount, 0, sizeof *siteCount * needed);
}

void profileFlush(void) {
  if (!blockOn)
    return;
  for (int32_t i = 0; i < poolUsed; ++i)
    if (pool[i].live)
      countRequest(&pool[i]);
}

/* Called before each load and store of a kernel compiled with
   fuel-gpu-emulated-kernels{memory-profile}. */
EXPORT void fuel_emu_access(int32_t site, const void *at, int32_t bytes,
                             int32_t alignment) {
  if (!blockOn)
    return;
  int space = emuSpaceOf(at);
  if (space == kSpaceOther || bytes <= 0)
    return;
  if (alignment <= 0) {
    fail("fuel_emu_access: site %d has an alignment of %d", site, alignment);
    return;
  }
  if (site < 0 || (size_t)site >= current->numSites) {
    fail("fuel_emu_access: site %d of a table of %zu", site,
         current->numSites);
    return;
  }
  int t = emuCurrentThread(), warpSize = emuWarpSize();
  int warp = t / warpSize, lane = t % warpSize;
  uint32_t k = siteCount[(size_t)t * current->numSites + (size_t)site]++;
  Request *r = openRequest(site, warp, k);
  if (!r->mask) {
    r->bytes = bytes;
    r->alignment = alignment;
    r->space = space;
  }
  r->at[lane] = at;
  r->mask |= (uint64_t)1 << lane;
  if (__builtin_popcountll(r->mask) >= liveLanes(warp))
    countRequest(r);
  emuYield();
}

/*===--- The profile's interface ------------------------------------------===*/

/* Profiles the launches from now on (forgetting earlier ones): `blocks`
   blocks of each launch, or every block with 0. */
EXPORT void fuel_emu_profile_start(int32_t blocks) {
  while (records) {
    Record *r = records;
    records = r->next;
    for (size_t i = 0; i < r->numSites; ++i)
      free(r->sites[i].description);
    free(r->sites);
    free(r->module);
    free(r->kernel);
    free(r->table);
    free(r);
  }
  recordsEnd = &records;
  sampleBlocks = blocks < 0 ? 0 : blocks;
}

EXPORT void fuel_emu_profile_stop(void) { sampleBlocks = -1; }

/* A growing string. */
typedef struct {
  char *data;
  size_t size, cap;
} Text;

static void append(Text *t, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void append(Text *t, const char *format, ...) {
  for (;;) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(t->data + t->size, t->cap - t->size, format, args);
    va_end(args);
    if (n >= 0 && (size_t)n < t->cap - t->size) {
      t->size += (size_t)n;
      return;
    }
    t->cap = 2 * t->cap + (size_t)(n > 0 ? n : 0) + 256;
    t->data = realloc(t->data, t->cap);
  }
}

static void appendString(Text *t, const char *s) {
  append(t, "\"");
  for (; *s; ++s) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      append(t, "\\%c", ch);
    else if (ch < 0x20)
      append(t, "\\u%04x", ch);
    else
      append(t, "%c", ch);
  }
  append(t, "\"");
}

static void appendCounts(Text *t, const Site *s, const char *space,
                         const Counts *c, int *first) {
  if (!c->requests)
    return;
  append(t, "%s{\"site\": ", *first ? "" : ", ");
  *first = 0;
  appendString(t, s->description);
  append(t,
         ", \"space\": \"%s\", \"requests\": %llu, \"bytes\": %llu, "
         "\"units\": %llu, \"ideal\": %llu}",
         space, (unsigned long long)c->requests,
         (unsigned long long)c->bytes, (unsigned long long)c->units,
         (unsigned long long)c->ideal);
}

/* The profile so far, as JSON: {"kernels": [{"module", "kernel",
   "launches", "blocks" (profiled), "sites": [{"site" (its line), "space"
   ("device" or "workgroup"), "requests", "bytes", "units" (sectors or
   wavefronts), "ideal"}]}]}. Valid until the next call. */
EXPORT const char *fuel_emu_profile_report(void) {
  static Text t;
  t.size = 0;
  append(&t, "{\"kernels\": [");
  for (Record *r = records; r; r = r->next) {
    append(&t, "%s{\"module\": ", r == records ? "" : ", ");
    appendString(&t, r->module);
    append(&t, ", \"kernel\": ");
    appendString(&t, r->kernel);
    append(&t, ", \"launches\": %llu, \"blocks\": %llu, \"sites\": [",
           (unsigned long long)r->launches, (unsigned long long)r->blocks);
    int first = 1;
    for (size_t i = 0; i < r->numSites; ++i) {
      appendCounts(&t, &r->sites[i], "device", &r->sites[i].device, &first);
      appendCounts(&t, &r->sites[i], "workgroup", &r->sites[i].workgroup,
                   &first);
    }
    append(&t, "]}");
  }
  append(&t, "]}");
  return t.data;
}
