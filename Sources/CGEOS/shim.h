// Only the thread-safe re-entrant (_r) API: the design forbids the global-context calls.
#define GEOS_USE_ONLY_R_API
#include <geos_c.h>
