/* CSndFile: libsndfile as Swift sees it. Only AQMedia imports this module. */
#ifndef AQJACK_CSNDFILE_SHIM_H
#define AQJACK_CSNDFILE_SHIM_H
#include <sndfile.h>
#include <string.h>

/* Writes a BWF 'bext' chunk with every field aqjack fills (EBU Tech 3285): the texts are cut to
   their fields' sizes; version 2 leaves the loudness fields at 0x7FFF ("not given") for
   csndfile's caller to write after close, once they are measured. Only before the first write;
   WAV, W64 and RF64 only. Returns SF_TRUE on success. */
static inline int csndfile_set_bext(SNDFILE *file, const char *description, const char *originator,
                                    const char *reference, const char *date, const char *time,
                                    unsigned long long frames, int version, const char *coding_history) {
    SF_BROADCAST_INFO info;
    memset(&info, 0, sizeof info);
    strncpy(info.description, description, sizeof info.description);
    strncpy(info.originator, originator, sizeof info.originator);
    strncpy(info.originator_reference, reference, sizeof info.originator_reference);
    strncpy(info.origination_date, date, sizeof info.origination_date);
    strncpy(info.origination_time, time, sizeof info.origination_time);
    info.time_reference_low = (unsigned int)(frames & 0xFFFFFFFFu);
    info.time_reference_high = (unsigned int)(frames >> 32);
    info.version = (short)version;
    if (version >= 2) {
        info.loudness_value = info.loudness_range = info.max_true_peak_level = 0x7FFF;
        info.max_momentary_loudness = info.max_shortterm_loudness = 0x7FFF;
    }
    strncpy(info.coding_history, coding_history, sizeof info.coding_history - 1);
    info.coding_history_size = (unsigned int)strlen(info.coding_history);
    return sf_command(file, SFC_SET_BROADCAST_INFO, &info, sizeof info);
}

/* Adds a chunk `id` (4 characters, e.g. "iXML") holding `length` bytes of `data` to a WAV or
   RF64 file being written, before the first write. Returns SF_ERR_NO_ERROR (0) on success. */
static inline int csndfile_set_chunk(SNDFILE *file, const char *id, const void *data, unsigned int length) {
    SF_CHUNK_INFO chunk;
    memset(&chunk, 0, sizeof chunk);
    strncpy(chunk.id, id, sizeof chunk.id - 1);
    chunk.id_size = (unsigned int)strlen(chunk.id);
    chunk.datalen = length;
    chunk.data = (void *)data;
    return sf_set_chunk(file, &chunk);
}

/* Reads the BWF TimeReference, or returns -1 when the file has no 'bext' chunk. */
static inline long long csndfile_time_reference(SNDFILE *file) {
    SF_BROADCAST_INFO info;
    memset(&info, 0, sizeof info);
    if (sf_command(file, SFC_GET_BROADCAST_INFO, &info, sizeof info) != SF_TRUE) return -1;
    return (long long)(((unsigned long long)info.time_reference_high << 32) | info.time_reference_low);
}

/* sync_file_range(2), which glibc declares only under _GNU_SOURCE (the Glibc module is built
   without it); the symbol is glibc's since 2.6. Flags: WAIT_BEFORE 1, WRITE 2, WAIT_AFTER 4. */
extern int sync_file_range(int fd, long long offset, long long count, unsigned int flags);

/* Starts writing `count` bytes at `offset` of `fd` back to the disk; does not wait. */
static inline int csndfile_start_writeback(int fd, long long offset, long long count) {
    return sync_file_range(fd, offset, count, 2);
}

/* Waits until `count` bytes at `offset` of `fd` are on the disk. */
static inline int csndfile_finish_writeback(int fd, long long offset, long long count) {
    return sync_file_range(fd, offset, count, 1 | 2 | 4);
}
#endif
