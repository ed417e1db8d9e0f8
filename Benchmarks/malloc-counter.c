// LD_PRELOAD counter of malloc, calloc and realloc calls, for Benchmarks/http-cost.sh: the
// count lives in a file named by $MALLOC_COUNTER_FILE (mapped shared), so another process
// reads it while the server runs. Forwards to glibc's exported __libc_* functions, as
// Benchmarks/CMallocCount does inside vltava-bench. Build: cc -O2 -shared -fPIC -o X.so this.c
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);

static _Atomic uint64_t fallback;
static _Atomic uint64_t *calls = &fallback;

__attribute__((constructor)) static void open_counter(void) {
    const char *path = getenv("MALLOC_COUNTER_FILE");
    if (!path) return;
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0) return;
    if (ftruncate(fd, sizeof(uint64_t)) == 0) {
        void *mapped = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (mapped != MAP_FAILED) calls = mapped;
    }
    close(fd);
}

static inline void count(void) { atomic_fetch_add_explicit(calls, 1, memory_order_relaxed); }

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *pointer, size_t size) { count(); return __libc_realloc(pointer, size); }
