#include "CLV2Support.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int aq_lv2_log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *format, va_list arguments) {
    aq_lv2_log_storage *storage = handle;
    char line[1024];
    int length = vsnprintf(line, sizeof line, format, arguments);
    if (storage->sink) storage->sink(storage->context, type, line);
    return length;
}

static int aq_lv2_log_printf(LV2_Log_Handle handle, LV2_URID type, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int length = aq_lv2_log_vprintf(handle, type, format, arguments);
    va_end(arguments);
    return length;
}

void aq_lv2_log_initialize(LV2_Log_Log *log, aq_lv2_log_storage *storage, aq_lv2_log_sink sink, void *context) {
    storage->sink = sink;
    storage->context = context;
    log->handle = storage;
    log->printf = aq_lv2_log_printf;
    log->vprintf = aq_lv2_log_vprintf;
}

void aq_lv2_sequence_clear(LV2_Atom_Sequence *sequence, LV2_URID sequence_type) {
    sequence->atom.size = sizeof(LV2_Atom_Sequence_Body);
    sequence->atom.type = sequence_type;
    sequence->body.unit = 0;
    sequence->body.pad = 0;
}

void aq_lv2_sequence_prepare_output(LV2_Atom_Sequence *sequence, uint32_t capacity, LV2_URID chunk_type) {
    sequence->atom.size = capacity - (uint32_t)sizeof(LV2_Atom);
    sequence->atom.type = chunk_type;
}

int aq_lv2_sequence_append(LV2_Atom_Sequence *sequence, uint32_t capacity, int64_t frames,
                           LV2_URID type, uint32_t size, const void *body) {
    // Events are padded to 8 bytes (LV2 atom:Sequence); the total is header + body size.
    uint32_t used = (uint32_t)sizeof(LV2_Atom) + sequence->atom.size;
    uint32_t event_bytes = (uint32_t)sizeof(LV2_Atom_Event) + size;
    uint32_t padded = (event_bytes + 7u) & ~7u;
    if (used + padded > capacity) return 0;
    LV2_Atom_Event *event = (LV2_Atom_Event *)((char *)sequence + used);
    event->time.frames = frames;
    event->body.size = size;
    event->body.type = type;
    memcpy(event + 1, body, size);
    sequence->atom.size += padded;
    return 1;
}

static char *aq_lv2_make_path(LV2_State_Make_Path_Handle handle, const char *path) {
    aq_lv2_path_storage *storage = handle;
    if (!path) return NULL;
    while (*path == '/') path++;   /* always under the directory */
    size_t base = strlen(storage->directory);
    size_t length = base + 1 + strlen(path) + 1;
    char *full = malloc(length);
    if (!full) return NULL;
    snprintf(full, length, "%s/%s", storage->directory, path);
    /* The directory itself, then each parent folder of the file asked for. */
    for (char *cursor = full + base; *cursor; cursor++) {
        if (*cursor != '/') continue;
        *cursor = '\0';
        if (mkdir(full, 0755) != 0 && errno != EEXIST) {
            free(full);
            return NULL;
        }
        *cursor = '/';
    }
    return full;
}

static void aq_lv2_free_path(LV2_State_Free_Path_Handle handle, char *path) {
    (void)handle;
    free(path);
}

int aq_lv2_path_initialize(LV2_State_Make_Path *make, LV2_State_Free_Path *free_path,
                           aq_lv2_path_storage *storage, const char *directory) {
    if (strlen(directory) >= sizeof storage->directory) return 0;
    strcpy(storage->directory, directory);
    make->handle = storage;
    make->path = aq_lv2_make_path;
    free_path->handle = storage;
    free_path->free_path = aq_lv2_free_path;
    return 1;
}
