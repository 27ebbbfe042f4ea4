/* CRTProbe: counts heap and mutex calls made on watched threads, for the real-time safety
   tests. Linked only into test binaries: it defines malloc, free, calloc, realloc, memalign,
   posix_memalign, aligned_alloc and pthread_mutex_lock, forwarding each to glibc, so every
   library in the process (libjack included) goes through it. Compiled out under sanitizers,
   which interpose the same functions. */
#ifndef AQJACK_CRTPROBE_H
#define AQJACK_CRTPROBE_H

/* 1 when the probe is compiled in (0 under ASan/TSan: the tests then report and skip). */
int aq_probe_is_active(void);

/* Marks the calling thread as watched: its calls are counted from now on. Has the shape of a
   JACK thread-init callback, so it can be passed to jack_set_thread_init_callback directly. */
void aq_probe_watch_current_thread(void *unused);

/* Counts only on these threads (among the watched ones), e.g. the JACK process threads from
   jack_client_thread_id: JACK's other threads (notifications) may allocate legitimately when an
   xrun or a graph change is reported. count 0 counts on every watched thread. At most 16. */
void aq_probe_count_only(const unsigned long *threads, int count);

/* Threads marked so far. */
long aq_probe_watched_thread_count(void);

/* Starts (or restarts) counting from zero; counts only while enabled. */
void aq_probe_reset_and_enable(void);
void aq_probe_disable(void);

/* Calls counted on watched threads while enabled. */
long aq_probe_allocation_count(void);  /* malloc, calloc, realloc, memalign, posix_memalign, aligned_alloc */
long aq_probe_free_count(void);
long aq_probe_mutex_lock_count(void);

#endif
