/* CFFmpeg: FFmpeg's headers (types, constants) and the functions aqjack calls, reached through
   dlopen rather than linked.

   Why: linking libavcodec/libavformat makes the dynamic loader map ~130 shared libraries at
   every start of `aqjack`, which tripled `aqjack --ports`' start-up time (measured: 52 ms
   against jack_lsp's 18 ms). Loading them on first use keeps the commands that never touch a
   codec as fast as before.

   Call cffmpeg_load() (thread-safe, idempotent) and check its result before any aqff_* call;
   every FFmpeg function is called as aqff_<name> with FFmpeg's own signature. */
#ifndef AQJACK_CFFMPEG_H
#define AQJACK_CFFMPEG_H
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>

/* 0 when libavutil, libavcodec and libavformat are loaded and every function is resolved;
   otherwise -1, and cffmpeg_load_error() says which library or symbol was missing. */
int cffmpeg_load(void);
const char *cffmpeg_load_error(void);

#define X(library, result, name, parameters, arguments) result aqff_##name parameters;
#include "functions.def"
#undef X

/* Function-like macros re-exported as functions. */
static inline int cffmpeg_error_again(void) { return AVERROR(EAGAIN); }
static inline int cffmpeg_error_eof(void) { return AVERROR_EOF; }
static inline uint64_t cffmpeg_layout_surround(void) { return AV_CH_LAYOUT_SURROUND; }
static inline uint64_t cffmpeg_layout_6point0(void) { return AV_CH_LAYOUT_6POINT0; }
static inline uint64_t cffmpeg_layout_octagonal(void) { return AV_CH_LAYOUT_OCTAGONAL; }
#endif
