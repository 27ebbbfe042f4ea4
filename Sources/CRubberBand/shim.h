/* Rubber Band's C API (Debian's librubberband-dev), for pitch-preserving play rates. */
#include <rubberband/rubberband-c.h>
