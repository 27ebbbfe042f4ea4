/* A probe preloaded into a JACK client process (LD_PRELOAD) that measures its process thread
 * from outside: Scripts/host-load.sh runs `aqjack host` under it.
 *
 *   cc -shared -fPIC -O2 -I Sources/CRTProbe/include -o host-probe.so Scripts/host-probe.c -ljack -ldl
 *   AQ_PROBE_REPORT=FILE AQ_PROBE_WARMUP_CYCLES=N LD_PRELOAD=./host-probe.so aqjack host ...
 *
 * The counting is the tests' probe (Sources/CRTProbe/probe.c, included: malloc, calloc, realloc,
 * memalign, free and pthread_mutex_lock counted on watched threads). This file wraps the first
 * process callback the program registers: the thread JACK calls it on is watched, counting starts
 * after N cycles (default 375: 1 s at 48 kHz / 128), and every callback is timed (CLOCK_MONOTONIC,
 * the vDSO: no system call). A cycle whose callback took longer than its period is the client's
 * own slow cycle: what makes a server skip a cycle. At exit it writes one line to FILE:
 *   cycles C slow S longest_ns L mean_ns M period_ns P allocations A frees F locks K
 * counted from the end of the warm-up. */
#define _GNU_SOURCE
#include "../Sources/CRTProbe/probe.c"
#include <dlfcn.h>
#include <jack/jack.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static JackProcessCallback wrapped;
static void *wrappedArgument;
static long warmup = 375;
/* AQ_PROBE_CONTROL=1: the wrapper itself allocates and frees once a cycle on the process thread,
 * so the report must show as many allocations and frees as cycles (the probe sees this thread). */
static int control;
static long sampleRate;
/* Written by the process thread; read once at exit. */
static volatile long cycles, slowCycles, longestNanoseconds, totalNanoseconds, periodNanoseconds;

static long nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000L + now.tv_nsec;
}

static int probedProcess(jack_nframes_t frames, void *unused) {
    (void)unused;
    static long seen;
    if (seen == 0) aq_probe_watch_current_thread(NULL);
    if (++seen == warmup) aq_probe_reset_and_enable();
    long start = nanoseconds();
    int result = wrapped(frames, wrappedArgument);
    if (control) free(malloc(64));
    long spent = nanoseconds() - start;
    if (seen >= warmup) {
        long period = (long)frames * 1000000000L / sampleRate;
        periodNanoseconds = period;
        cycles++;
        totalNanoseconds += spent;
        if (spent > longestNanoseconds) longestNanoseconds = spent;
        if (spent > period) slowCycles++;
    }
    return result;
}

int jack_set_process_callback(jack_client_t *client, JackProcessCallback callback, void *argument) {
    typedef int (*Setter)(jack_client_t *, JackProcessCallback, void *);
    Setter real = (Setter)dlsym(RTLD_NEXT, "jack_set_process_callback");
    if (wrapped != NULL) return real(client, callback, argument);   /* only the first client */
    const char *text = getenv("AQ_PROBE_WARMUP_CYCLES");
    if (text != NULL && atol(text) > 0) warmup = atol(text);
    control = getenv("AQ_PROBE_CONTROL") != NULL && atoi(getenv("AQ_PROBE_CONTROL")) == 1;
    wrapped = callback;
    wrappedArgument = argument;
    sampleRate = (long)jack_get_sample_rate(client);
    return real(client, probedProcess, NULL);
}

__attribute__((destructor)) static void report(void) {
    aq_probe_disable();
    const char *path = getenv("AQ_PROBE_REPORT");
    if (path == NULL || wrapped == NULL) return;
    FILE *file = fopen(path, "w");
    if (file == NULL) return;
    fprintf(file, "cycles %ld slow %ld longest_ns %ld mean_ns %ld period_ns %ld allocations %ld frees %ld locks %ld\n",
            cycles, slowCycles, longestNanoseconds, cycles > 0 ? totalNanoseconds / cycles : 0, periodNanoseconds,
            aq_probe_allocation_count(), aq_probe_free_count(), aq_probe_mutex_lock_count());
    fclose(file);
}
