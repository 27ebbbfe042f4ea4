// lilv 0.24 (Debian liblilv-dev, pkg-config lilv-0): plugin discovery, instances, presets, state.
#include <lilv/lilv.h>
