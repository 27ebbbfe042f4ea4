/* CFFmpeg: libavcodec, libavformat, libavutil and libswresample in one umbrella module.
   Debian's .pc files put dependencies in Requires.private, so each library is linked by name. */
#ifndef AQJACK_CFFMPEG_SHIM_H
#define AQJACK_CFFMPEG_SHIM_H
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>

/* Function-like macros re-exported as functions. */
static inline int cffmpeg_error_again(void) { return AVERROR(EAGAIN); }
static inline int cffmpeg_error_eof(void) { return AVERROR_EOF; }
#endif
