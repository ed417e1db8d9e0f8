// Counts of malloc, calloc and realloc calls in this process (see MallocCount.c).
#include <stdint.h>

/// Calls since the process started; 0 forever where counting is not available.
uint64_t vltava_malloc_calls(void);
/// Bytes those calls asked for (realloc counts its new size).
uint64_t vltava_malloc_bytes(void);
