/* Loads FFmpeg's libraries with dlopen and forwards aqff_<name> to <name> (see CFFmpeg.h). */
#include "CFFmpeg.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
/* The sonames of the major versions these headers describe: a struct layout read through the
   headers must come from the same major version. */
#define AVUTIL_SONAME "libavutil.so." STRINGIFY(LIBAVUTIL_VERSION_MAJOR)
#define AVCODEC_SONAME "libavcodec.so." STRINGIFY(LIBAVCODEC_VERSION_MAJOR)
#define AVFORMAT_SONAME "libavformat.so." STRINGIFY(LIBAVFORMAT_VERSION_MAJOR)

#define X(library, result, name, parameters, arguments) static result (*pointer_##name) parameters;
#include "functions.def"
#undef X

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_result = -1;
static char load_error[512];

static void *open_library(const char *soname) {
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) snprintf(load_error, sizeof load_error, "cannot load %s: %s", soname, dlerror());
    return handle;
}

static void load_all(void) {
    void *avutil = open_library(AVUTIL_SONAME);
    if (!avutil) return;
    void *avcodec = open_library(AVCODEC_SONAME);
    if (!avcodec) return;
    void *avformat = open_library(AVFORMAT_SONAME);
    if (!avformat) return;
#define X(library, result, name, parameters, arguments)                                        \
    pointer_##name = (result(*) parameters)dlsym(library, #name);                                \
    if (!pointer_##name) {                                                                      \
        snprintf(load_error, sizeof load_error, "%s has no symbol %s", #library, #name);        \
        return;                                                                                 \
    }
#include "functions.def"
#undef X
    load_result = 0;
}

int cffmpeg_load(void) {
    pthread_once(&load_once, load_all);
    return load_result;
}

const char *cffmpeg_load_error(void) { return load_error; }

#define X(library, result, name, parameters, arguments) \
    result aqff_##name parameters { return pointer_##name arguments; }
#include "functions.def"
#undef X
