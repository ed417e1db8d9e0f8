// An honest allocation count for vltava-bench: glibc 2.34 removed __malloc_hook, and
// mallinfo2 reports bytes in use, not calls. So this file defines malloc, calloc and realloc
// themselves: the executable's definitions take precedence over libc's for every library in
// the process (the Swift runtime's swift_slowAlloc included), count the call, and forward to
// glibc's exported __libc_* functions, the same allocator, so libc's free frees the memory.
// Not counted: posix_memalign/aligned_alloc (Swift uses them only for alignments above 16)
// and calls glibc makes to itself internally. Linked only into vltava-bench.
#include "MallocCount.h"

#if defined(__linux__) && defined(__GLIBC__)
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);

static _Atomic uint64_t calls;
static _Atomic uint64_t bytes;

static void count(size_t size) {
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, size, memory_order_relaxed);
}

void *malloc(size_t size) {
    count(size);
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
    count(n * size);
    return __libc_calloc(n, size);
}

void *realloc(void *pointer, size_t size) {
    count(size);
    return __libc_realloc(pointer, size);
}

uint64_t vltava_malloc_calls(void) { return atomic_load_explicit(&calls, memory_order_relaxed); }
uint64_t vltava_malloc_bytes(void) { return atomic_load_explicit(&bytes, memory_order_relaxed); }
#else
uint64_t vltava_malloc_calls(void) { return 0; }
uint64_t vltava_malloc_bytes(void) { return 0; }
#endif
