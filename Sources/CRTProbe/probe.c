/* See include/CRTProbe.h. */
#define _GNU_SOURCE
#include "CRTProbe.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#if defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#    define AQ_PROBE_DISABLED 1
#  endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define AQ_PROBE_DISABLED 1
#endif

static atomic_long watched_threads;
static atomic_int enabled;
static atomic_long allocations;
static atomic_long frees;
static atomic_long mutex_locks;
static __thread int thread_is_watched;
static unsigned long only_threads[16];
static atomic_int only_count;

void aq_probe_count_only(const unsigned long *threads, int count) {
    if (count > 16) count = 16;
    for (int i = 0; i < count; i++) only_threads[i] = threads[i];
    atomic_store(&only_count, count);
}

static int thread_counts(void) {
    int count = atomic_load_explicit(&only_count, memory_order_relaxed);
    if (count == 0) return 1;
    unsigned long self = (unsigned long)pthread_self();
    for (int i = 0; i < count; i++) if (only_threads[i] == self) return 1;
    return 0;
}

void aq_probe_watch_current_thread(void *unused) {
    (void)unused;
    thread_is_watched = 1;
    atomic_fetch_add(&watched_threads, 1);
}
long aq_probe_watched_thread_count(void) { return atomic_load(&watched_threads); }
void aq_probe_reset_and_enable(void) {
    atomic_store(&allocations, 0);
    atomic_store(&frees, 0);
    atomic_store(&mutex_locks, 0);
    atomic_store(&enabled, 1);
}
void aq_probe_disable(void) { atomic_store(&enabled, 0); }
long aq_probe_allocation_count(void) { return atomic_load(&allocations); }
long aq_probe_free_count(void) { return atomic_load(&frees); }
long aq_probe_mutex_lock_count(void) { return atomic_load(&mutex_locks); }

#ifdef AQ_PROBE_DISABLED
int aq_probe_is_active(void) { return 0; }
#else
int aq_probe_is_active(void) { return 1; }

#define COUNT(counter) \
    do { if (thread_is_watched && atomic_load_explicit(&enabled, memory_order_relaxed) && thread_counts()) atomic_fetch_add(&counter, 1); } while (0)

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
/* glibc's own entry point, reached under its versioned name so our definition does not recurse. */
extern int aq_real_pthread_mutex_lock(pthread_mutex_t *);
__asm__(".symver aq_real_pthread_mutex_lock, __pthread_mutex_lock@GLIBC_2.2.5");

void *malloc(size_t size) { COUNT(allocations); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { COUNT(allocations); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { COUNT(allocations); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { COUNT(allocations); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { COUNT(allocations); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    COUNT(allocations);
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *out = pointer;
    return 0;
}
void free(void *pointer) { if (pointer) COUNT(frees); __libc_free(pointer); }
int pthread_mutex_lock(pthread_mutex_t *mutex) { COUNT(mutex_locks); return aq_real_pthread_mutex_lock(mutex); }
#endif
