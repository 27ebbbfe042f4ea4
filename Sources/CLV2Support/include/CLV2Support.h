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

#endif
