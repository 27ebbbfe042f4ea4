#ifndef CLADSPASUPPORT_H
#define CLADSPASUPPORT_H
// Hosting LADSPA plugins (ladspa-sdk's ladspa.h, LADSPA 1.1): a library's descriptor function
// reached through dlsym, and an instance seen through LV2's function shapes, so the graph's
// runner and the queues' stages run LADSPA plugins as they run LV2 ones.
#include <stdint.h>
#include <ladspa.h>

/// One instance: what `aq_ladspa_connect` and `aq_ladspa_run` take as their handle.
typedef struct {
    const LADSPA_Descriptor *descriptor;
    LADSPA_Handle handle;
} aq_ladspa_instance;

/// The `index`th plugin of a library opened with dlopen, or NULL past the last (or when the
/// library has no `ladspa_descriptor`).
const LADSPA_Descriptor *aq_ladspa_descriptor(void *library, unsigned long index);

/// LV2's connect_port shape over LADSPA's: `instance` is an aq_ladspa_instance. Real-time safe
/// as far as the plugin's connect_port is.
void aq_ladspa_connect(void *instance, uint32_t port, void *data);

/// LV2's run shape over LADSPA's. Real-time safe as far as the plugin's run is.
void aq_ladspa_run(void *instance, uint32_t frames);

#endif
