// libebur128 1.2 (Debian libebur128-dev): EBU R 128 loudness, loudness range and true peak.
#include <ebur128.h>
