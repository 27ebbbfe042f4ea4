/* CCivetweb: civetweb (Debian libcivetweb-dev), the HTTP and WebSocket server, as Swift sees it.
   Only AQWeb imports this module. */
#ifndef AQJACK_CCIVETWEB_SHIM_H
#define AQJACK_CCIVETWEB_SHIM_H
#include <civetweb.h>
#endif
