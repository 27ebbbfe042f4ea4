#ifndef CLV2SUPPORT_H
#define CLV2SUPPORT_H
// The parts of hosting LV2 plugins that Swift cannot write: the log feature's printf is a C
// variadic function, and the LV2 structs are spelled here with lv2-dev's own headers (lv2 1.18).
#include <stdint.h>
#include <stddef.h>
#include <lv2/core/lv2.h>
#include <lv2/urid/urid.h>
#include <lv2/options/options.h>
#include <lv2/atom/atom.h>
#include <lv2/log/log.h>
#include <lv2/worker/worker.h>
#include <lv2/state/state.h>

/// Where a plugin's log lines go: called with the formatted line (no trailing newline added or
/// removed) and the log type's URID. Any thread the plugin logs from.
typedef void (*aq_lv2_log_sink)(void *context, LV2_URID type, const char *line);

/// The host's log feature: `log` is filled with a handle and the printf/vprintf functions that
/// format into a 1 KiB stack buffer (longer lines are cut) and call `sink`. `storage` must live
/// as long as the plugin instance; it holds the sink and its context.
typedef struct {
    aq_lv2_log_sink sink;
    void *context;
} aq_lv2_log_storage;

void aq_lv2_log_initialize(LV2_Log_Log *log, aq_lv2_log_storage *storage, aq_lv2_log_sink sink, void *context);

/// An empty atom sequence of `capacity` bytes (body included) at `sequence`: for an input port,
/// size = the header only; for an output port, a Chunk the plugin may fill up to `capacity`.
void aq_lv2_sequence_clear(LV2_Atom_Sequence *sequence, LV2_URID sequence_type);
void aq_lv2_sequence_prepare_output(LV2_Atom_Sequence *sequence, uint32_t capacity, LV2_URID chunk_type);

/// Appends one event of `size` bytes at `frames` to an input sequence of `capacity` bytes.
/// Returns 0 when it does not fit (the sequence is unchanged).
int aq_lv2_sequence_append(LV2_Atom_Sequence *sequence, uint32_t capacity, int64_t frames,
                           LV2_URID type, uint32_t size, const void *body);

/// The host's `state:makePath` and `state:freePath` features (LV2 State 2.2 and 2.6): each path
/// a plugin asks for is made under `storage->directory` (its parent folders created), returned
/// in memory from `malloc` that the plugin frees with `free_path` (or `free`). `storage` must
/// live as long as the instance. Not real-time (plugins call it from instantiate, state or
/// worker code).
typedef struct {
    char directory[4096];
} aq_lv2_path_storage;

/// Returns 0 when `directory` is too long for the storage.
int aq_lv2_path_initialize(LV2_State_Make_Path *make, LV2_State_Free_Path *free_path,
                           aq_lv2_path_storage *storage, const char *directory);

/// The LV2 worker (`worker:schedule`): work a plugin schedules from `run()` is done by its
/// `work()` outside the audio thread, and the responses reach `work_response()` after a later
/// `run()`, then `end_run()` (LV2 Worker 1.2).
///
/// Threaded (the live host, whose `run()` is on JACK's process thread): requests go through a
/// lock-free single-producer ring to a thread of the worker's own, woken with `sem_post`;
/// responses come back through a second ring. Nothing on the audio side allocates, locks or
/// waits. Not threaded (queue stages and offline rendering, whose `run()` is not real-time):
/// `work()` runs inside `schedule_work()`, so the same input always gives the same output.
typedef struct aq_lv2_worker aq_lv2_worker;

/// A worker with rings of `ring_bytes` each (a request or response larger than a ring's free
/// space is refused with LV2_WORKER_ERR_NO_SPACE). NULL when memory cannot be had.
aq_lv2_worker *aq_lv2_worker_new(int threaded, uint32_t ring_bytes);
/// The `worker:schedule` feature's data, for the instance's feature list.
LV2_Worker_Schedule *aq_lv2_worker_schedule(aq_lv2_worker *worker);
/// Binds the instantiated plugin (`interface` from `extension_data(LV2_WORKER__interface)`;
/// NULL leaves scheduling refused) and, threaded and with an interface, starts the worker's
/// thread. Call before the first `run()`. Returns 0 when the thread cannot be started.
int aq_lv2_worker_bind(aq_lv2_worker *worker, LV2_Handle handle, const LV2_Worker_Interface *interface);
/// After each `run()`, on the audio thread: hands every pending response to `work_response()`,
/// then calls `end_run()`. Real-time safe.
void aq_lv2_worker_after_run(aq_lv2_worker *worker);
/// Requests refused for want of ring space so far. Any thread.
uint32_t aq_lv2_worker_refused(aq_lv2_worker *worker);
/// Stops the thread (after the work it has) and frees the worker. Not while the plugin runs.
void aq_lv2_worker_free(aq_lv2_worker *worker);

/// `run(handle, frames)` followed by `aq_lv2_worker_after_run`: the live host's run function for
/// a plugin with a worker (`context` is an aq_lv2_run_context). Real-time safe.
typedef struct {
    void (*run)(LV2_Handle, uint32_t);
    LV2_Handle handle;
    aq_lv2_worker *worker;
} aq_lv2_run_context;
void aq_lv2_run_with_worker(void *context, uint32_t frames);

#endif
