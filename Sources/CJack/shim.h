/* CJack: libjack as Swift sees it. Only AQJack imports this module. */
#ifndef AQJACK_CJACK_SHIM_H
#define AQJACK_CJACK_SHIM_H
#include <jack/jack.h>
#include <jack/metadata.h>
#include <jack/uuid.h>
#include <jack/midiport.h>

/* jack_client_open is C-variadic, which Swift cannot call: this fixed-arity wrapper passes the
   server name (JackServerName) only when one is given. */
static inline jack_client_t *cjack_client_open(const char *client_name, jack_options_t options,
                                               jack_status_t *status, const char *server_name) {
    if (server_name != 0)
        return jack_client_open(client_name, (jack_options_t)(options | JackServerName), status, server_name);
    return jack_client_open(client_name, options, status);
}

/* The macros Swift cannot import as C strings. */
static inline const char *cjack_default_audio_type(void) { return JACK_DEFAULT_AUDIO_TYPE; }
static inline const char *cjack_metadata_pretty_name(void) { return JACK_METADATA_PRETTY_NAME; }
static inline const char *cjack_default_midi_type(void) { return JACK_DEFAULT_MIDI_TYPE; }
static inline const char *cjack_metadata_signal_type(void) { return JACK_METADATA_SIGNAL_TYPE; }
#endif
