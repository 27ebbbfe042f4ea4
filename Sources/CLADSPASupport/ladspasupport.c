#include "CLADSPASupport.h"
#include <dlfcn.h>
#include <stddef.h>

const LADSPA_Descriptor *aq_ladspa_descriptor(void *library, unsigned long index) {
    LADSPA_Descriptor_Function function = (LADSPA_Descriptor_Function)dlsym(library, "ladspa_descriptor");
    return function ? function(index) : NULL;
}

void aq_ladspa_connect(void *instance, uint32_t port, void *data) {
    aq_ladspa_instance *self = instance;
    self->descriptor->connect_port(self->handle, port, data);
}

void aq_ladspa_run(void *instance, uint32_t frames) {
    aq_ladspa_instance *self = instance;
    self->descriptor->run(self->handle, frames);
}
