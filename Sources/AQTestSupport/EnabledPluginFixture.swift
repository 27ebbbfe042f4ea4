import Foundation

/// A small LV2 plugin of the tests' own with an `lv2:enabled` port (no Debian plugin has one):
/// 64 frames of latency (reported on its `latency` output, `lv2:designation lv2:latency`); with
/// `enabled` at 1 it outputs its input 64 frames late and doubled, at 0 it bypasses itself
/// (the input 64 frames late, unchanged) and says so on its `bypassed` output (1), which a host
/// that bypassed it with a delay line of its own instead would leave at 0.
public enum EnabledPluginFixture {
    public static let uri = "urn:aqjack:test:enabled-double"
    public static let latency = 64

    static let source = #"""
        #include <lv2/core/lv2.h>
        #include <stdlib.h>
        #include <string.h>

        #define LATENCY 64

        typedef struct {
            const float *input;
            float *output;
            const float *enabled;
            float *latency;
            float *bypassed;
            float line[LATENCY];
            unsigned position;
        } Plugin;

        static LV2_Handle instantiate(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *features) {
            (void)d; (void)rate; (void)path; (void)features;
            return calloc(1, sizeof(Plugin));
        }

        static void connect_port(LV2_Handle h, uint32_t port, void *data) {
            Plugin *p = h;
            switch (port) {
            case 0: p->input = data; break;
            case 1: p->output = data; break;
            case 2: p->enabled = data; break;
            case 3: p->latency = data; break;
            case 4: p->bypassed = data; break;
            }
        }

        static void run(LV2_Handle h, uint32_t frames) {
            Plugin *p = h;
            int on = !p->enabled || *p->enabled >= 0.5f;
            for (uint32_t i = 0; i < frames; i++) {
                float late = p->line[p->position];
                p->line[p->position] = p->input[i];
                p->position = (p->position + 1) % LATENCY;
                p->output[i] = on ? late * 2.0f : late;
            }
            if (p->latency) *p->latency = LATENCY;
            if (p->bypassed) *p->bypassed = on ? 0.0f : 1.0f;
        }

        """# + LV2TestBundle.descriptor(uri: uri, extensionData: "NULL")

    static let manifest = """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .

        <urn:aqjack:test:enabled-double>
            a lv2:Plugin ;
            doap:name "aqjack test enabled double" ;
            lv2:binary <enabled-double.so> ;
            lv2:optionalFeature lv2:hardRTCapable ;
            lv2:port [
                a lv2:InputPort, lv2:AudioPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In"
            ] , [
                a lv2:OutputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "out" ; lv2:name "Out"
            ] , [
                a lv2:InputPort, lv2:ControlPort ; lv2:index 2 ; lv2:symbol "enabled" ; lv2:name "Enabled" ;
                lv2:designation lv2:enabled ; lv2:portProperty lv2:toggled ; lv2:default 1 ; lv2:minimum 0 ; lv2:maximum 1
            ] , [
                a lv2:OutputPort, lv2:ControlPort ; lv2:index 3 ; lv2:symbol "latency" ; lv2:name "Latency" ;
                lv2:designation lv2:latency ; lv2:portProperty lv2:reportsLatency
            ] , [
                a lv2:OutputPort, lv2:ControlPort ; lv2:index 4 ; lv2:symbol "bypassed" ; lv2:name "Bypassed"
            ] .
        """

    /// Builds the bundle in a new temporary folder; returns that folder, for `LV2_PATH`.
    public static func build() throws -> String {
        try LV2TestBundle.build(name: "enabled-double", source: source, manifest: manifest)
    }
}
