/* CSndFile: libsndfile as Swift sees it. Only AQMedia imports this module. */
#ifndef AQJACK_CSNDFILE_SHIM_H
#define AQJACK_CSNDFILE_SHIM_H
#include <sndfile.h>
#include <string.h>

/* Writes a BWF 'bext' chunk whose TimeReference is `frames` (samples since midnight, or here the
   JACK frame time of the first sample). Only before the first write; WAV, W64 and RF64 only.
   Returns SF_TRUE on success. (SF_BROADCAST_INFO's fixed char arrays are awkward from Swift.) */
static inline int csndfile_set_time_reference(SNDFILE *file, unsigned long long frames,
                                              const char *description, const char *originator) {
    SF_BROADCAST_INFO info;
    memset(&info, 0, sizeof info);
    strncpy(info.description, description, sizeof info.description - 1);
    strncpy(info.originator, originator, sizeof info.originator - 1);
    info.time_reference_low = (unsigned int)(frames & 0xFFFFFFFFu);
    info.time_reference_high = (unsigned int)(frames >> 32);
    info.version = 1;
    return sf_command(file, SFC_SET_BROADCAST_INFO, &info, sizeof info);
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
