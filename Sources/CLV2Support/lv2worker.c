// The LV2 worker feature (see CLV2Support.h): two single-producer single-consumer byte rings, a
// thread that runs the plugin's work(), and the audio side's response delivery.
#include "CLV2Support.h"
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/// A byte ring: one writer, one reader. Positions only grow (unsigned wrap-around); `size` is a
/// power of two. Each message is a uint32_t length, then its bytes, written whole or not at all.
typedef struct {
    uint8_t *bytes;
    uint32_t size;
    _Atomic uint32_t written;
    _Atomic uint32_t read;
} aq_ring;

static int ring_init(aq_ring *ring, uint32_t minimum) {
    uint32_t size = 64;
    while (size < minimum) size <<= 1;
    ring->bytes = calloc(size, 1);
    ring->size = size;
    atomic_init(&ring->written, 0);
    atomic_init(&ring->read, 0);
    return ring->bytes != NULL;
}

static void ring_copy_in(aq_ring *ring, uint32_t at, const void *data, uint32_t count) {
    uint32_t offset = at & (ring->size - 1), first = ring->size - offset;
    if (first > count) first = count;
    memcpy(ring->bytes + offset, data, first);
    memcpy(ring->bytes, (const uint8_t *)data + first, count - first);
}

static void ring_copy_out(aq_ring *ring, uint32_t at, void *data, uint32_t count) {
    uint32_t offset = at & (ring->size - 1), first = ring->size - offset;
    if (first > count) first = count;
    memcpy(data, ring->bytes + offset, first);
    memcpy((uint8_t *)data + first, ring->bytes, count - first);
}

/// Writer side: the whole message or nothing. Returns 0 when it does not fit.
static int ring_write(aq_ring *ring, uint32_t size, const void *data) {
    uint32_t written = atomic_load_explicit(&ring->written, memory_order_relaxed);
    uint32_t read = atomic_load_explicit(&ring->read, memory_order_acquire);
    if (ring->size - (written - read) < sizeof size + (uint64_t)size) return 0;
    ring_copy_in(ring, written, &size, sizeof size);
    ring_copy_in(ring, written + sizeof size, data, size);
    atomic_store_explicit(&ring->written, written + (uint32_t)sizeof size + size, memory_order_release);
    return 1;
}

/// Reader side: the next message's length, or -1 when the ring is empty.
static int64_t ring_peek(aq_ring *ring) {
    uint32_t read = atomic_load_explicit(&ring->read, memory_order_relaxed);
    uint32_t written = atomic_load_explicit(&ring->written, memory_order_acquire);
    if (written == read) return -1;
    uint32_t size;
    ring_copy_out(ring, read, &size, sizeof size);
    return size;
}

/// Reader side: copies the next message (of the length ring_peek gave) into `data`.
static void ring_take(aq_ring *ring, void *data, uint32_t size) {
    uint32_t read = atomic_load_explicit(&ring->read, memory_order_relaxed);
    ring_copy_out(ring, read + sizeof size, data, size);
    atomic_store_explicit(&ring->read, read + (uint32_t)sizeof size + size, memory_order_release);
}

struct aq_lv2_worker {
    LV2_Worker_Schedule schedule;
    LV2_Handle handle;
    const LV2_Worker_Interface *interface;
    int threaded;
    aq_ring requests;
    aq_ring responses;
    /// Where a message is copied for work() or work_response(): as large as a ring.
    uint8_t *request_scratch;
    uint8_t *response_scratch;
    sem_t wake;
    int wake_ready;
    pthread_t thread;
    int thread_running;
    _Atomic int stopping;
    _Atomic uint32_t refused;
};

static LV2_Worker_Status respond(LV2_Worker_Respond_Handle handle, uint32_t size, const void *data) {
    aq_lv2_worker *worker = handle;
    return ring_write(&worker->responses, size, data) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE;
}

static LV2_Worker_Status schedule_work(LV2_Worker_Schedule_Handle handle, uint32_t size, const void *data) {
    aq_lv2_worker *worker = handle;
    if (!worker->interface) return LV2_WORKER_ERR_UNKNOWN;
    if (!worker->threaded) {
        // Not real-time: the work is done now, its responses delivered after this run().
        return worker->interface->work(worker->handle, respond, worker, size, data);
    }
    if (!ring_write(&worker->requests, size, data)) {
        atomic_fetch_add_explicit(&worker->refused, 1, memory_order_relaxed);
        return LV2_WORKER_ERR_NO_SPACE;
    }
    sem_post(&worker->wake);
    return LV2_WORKER_SUCCESS;
}

static void *worker_thread(void *argument) {
    aq_lv2_worker *worker = argument;
    for (;;) {
        sem_wait(&worker->wake);
        int64_t size;
        while ((size = ring_peek(&worker->requests)) >= 0) {
            ring_take(&worker->requests, worker->request_scratch, (uint32_t)size);
            if (worker->interface)
                worker->interface->work(worker->handle, respond, worker, (uint32_t)size, worker->request_scratch);
        }
        if (atomic_load_explicit(&worker->stopping, memory_order_acquire)) break;
    }
    return NULL;
}

aq_lv2_worker *aq_lv2_worker_new(int threaded, uint32_t ring_bytes) {
    aq_lv2_worker *worker = calloc(1, sizeof *worker);
    if (!worker) return NULL;
    worker->threaded = threaded;
    worker->schedule.handle = worker;
    worker->schedule.schedule_work = schedule_work;
    if (!ring_init(&worker->requests, ring_bytes) || !ring_init(&worker->responses, ring_bytes)
        || !(worker->request_scratch = malloc(worker->requests.size))
        || !(worker->response_scratch = malloc(worker->responses.size))) {
        aq_lv2_worker_free(worker);
        return NULL;
    }
    sem_init(&worker->wake, 0, 0);
    worker->wake_ready = 1;
    return worker;
}

LV2_Worker_Schedule *aq_lv2_worker_schedule(aq_lv2_worker *worker) { return &worker->schedule; }

int aq_lv2_worker_bind(aq_lv2_worker *worker, LV2_Handle handle, const LV2_Worker_Interface *interface) {
    worker->handle = handle;
    // The thread only for a plugin that has work to do.
    if (interface && worker->threaded && !worker->thread_running) {
        if (pthread_create(&worker->thread, NULL, worker_thread, worker) != 0) return 0;
        worker->thread_running = 1;
    }
    worker->interface = interface;
    return 1;
}

void aq_lv2_worker_after_run(aq_lv2_worker *worker) {
    if (!worker->interface) return;
    int64_t size;
    while ((size = ring_peek(&worker->responses)) >= 0) {
        ring_take(&worker->responses, worker->response_scratch, (uint32_t)size);
        if (worker->interface->work_response)
            worker->interface->work_response(worker->handle, (uint32_t)size, worker->response_scratch);
    }
    if (worker->interface->end_run) worker->interface->end_run(worker->handle);
}

uint32_t aq_lv2_worker_refused(aq_lv2_worker *worker) {
    return atomic_load_explicit(&worker->refused, memory_order_relaxed);
}

void aq_lv2_worker_free(aq_lv2_worker *worker) {
    if (!worker) return;
    if (worker->thread_running) {
        atomic_store_explicit(&worker->stopping, 1, memory_order_release);
        sem_post(&worker->wake);
        pthread_join(worker->thread, NULL);
    }
    if (worker->wake_ready) sem_destroy(&worker->wake);
    free(worker->requests.bytes);
    free(worker->responses.bytes);
    free(worker->request_scratch);
    free(worker->response_scratch);
    free(worker);
}

void aq_lv2_run_with_worker(void *context, uint32_t frames) {
    aq_lv2_run_context *run = context;
    run->run(run->handle, frames);
    aq_lv2_worker_after_run(run->worker);
}
