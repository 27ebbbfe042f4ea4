import Foundation

/// A small LV2 plugin of the tests' own that takes `time:Position` on its event input (no Debian
/// plugin reports what it was told): it passes its audio through and reports, on control
/// outputs, the `time:speed`, `time:frame`, `time:bar`, `time:barBeat` and `time:beatsPerMinute`
/// of the last position object it was given (0 for what it did not hold) and how many it has
/// been given (`positions`).
public enum TimePluginFixture {
    public static let uri = "urn:aqjack:test:time-position"

    static let source = #"""
        #include <lv2/core/lv2.h>
        #include <lv2/atom/atom.h>
        #include <lv2/atom/util.h>
        #include <lv2/time/time.h>
        #include <lv2/urid/urid.h>
        #include <stdlib.h>
        #include <string.h>

        typedef struct {
            const LV2_Atom_Sequence *control;
            const float *input;
            float *output;
            float *speed, *frame, *positions, *bar, *bar_beat, *bpm;
            LV2_URID object, blank, position, time_frame, time_speed, atom_long, atom_float, time_bar, time_bar_beat, time_bpm;
            float last_speed, last_frame, received, last_bar, last_bar_beat, last_bpm;
        } Plugin;

        static LV2_Handle instantiate(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *features) {
            (void)d; (void)rate; (void)path;
            LV2_URID_Map *map = NULL;
            for (int i = 0; features && features[i]; i++) {
                if (!strcmp(features[i]->URI, LV2_URID__map)) map = features[i]->data;
            }
            if (!map) return NULL;
            Plugin *p = calloc(1, sizeof(Plugin));
            p->object = map->map(map->handle, LV2_ATOM__Object);
            p->blank = map->map(map->handle, LV2_ATOM__Blank);
            p->position = map->map(map->handle, LV2_TIME__Position);
            p->time_frame = map->map(map->handle, LV2_TIME__frame);
            p->time_speed = map->map(map->handle, LV2_TIME__speed);
            p->atom_long = map->map(map->handle, LV2_ATOM__Long);
            p->atom_float = map->map(map->handle, LV2_ATOM__Float);
            p->time_bar = map->map(map->handle, LV2_TIME__bar);
            p->time_bar_beat = map->map(map->handle, LV2_TIME__barBeat);
            p->time_bpm = map->map(map->handle, LV2_TIME__beatsPerMinute);
            return p;
        }

        static void connect_port(LV2_Handle h, uint32_t port, void *data) {
            Plugin *p = h;
            switch (port) {
            case 0: p->control = data; break;
            case 1: p->input = data; break;
            case 2: p->output = data; break;
            case 3: p->speed = data; break;
            case 4: p->frame = data; break;
            case 5: p->positions = data; break;
            case 6: p->bar = data; break;
            case 7: p->bar_beat = data; break;
            case 8: p->bpm = data; break;
            }
        }

        static void run(LV2_Handle h, uint32_t frames) {
            Plugin *p = h;
            if (p->input && p->output) memmove(p->output, p->input, frames * sizeof(float));
            if (p->control) {
                LV2_ATOM_SEQUENCE_FOREACH(p->control, event) {
                    if (event->body.type != p->object && event->body.type != p->blank) continue;
                    const LV2_Atom_Object *object = (const LV2_Atom_Object *)&event->body;
                    if (object->body.otype != p->position) continue;
                    const LV2_Atom *speed = NULL, *frame = NULL, *bar = NULL, *bar_beat = NULL, *bpm = NULL;
                    lv2_atom_object_get(object, p->time_speed, &speed, p->time_frame, &frame, p->time_bar, &bar,
                                        p->time_bar_beat, &bar_beat, p->time_bpm, &bpm, 0);
                    if (bar && bar->type == p->atom_long) p->last_bar = (float)((const LV2_Atom_Long *)bar)->body;
                    if (bar_beat && bar_beat->type == p->atom_float) p->last_bar_beat = ((const LV2_Atom_Float *)bar_beat)->body;
                    if (bpm && bpm->type == p->atom_float) p->last_bpm = ((const LV2_Atom_Float *)bpm)->body;
                    if (speed && speed->type == p->atom_float) p->last_speed = ((const LV2_Atom_Float *)speed)->body;
                    if (frame && frame->type == p->atom_long) p->last_frame = (float)((const LV2_Atom_Long *)frame)->body;
                    p->received += 1;
                }
            }
            if (p->speed) *p->speed = p->last_speed;
            if (p->frame) *p->frame = p->last_frame;
            if (p->positions) *p->positions = p->received;
            if (p->bar) *p->bar = p->last_bar;
            if (p->bar_beat) *p->bar_beat = p->last_bar_beat;
            if (p->bpm) *p->bpm = p->last_bpm;
        }

        """# + LV2TestBundle.descriptor(uri: uri, extensionData: "NULL")

    static let manifest = """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        @prefix atom: <http://lv2plug.in/ns/ext/atom#> .
        @prefix time: <http://lv2plug.in/ns/ext/time#> .
        @prefix urid: <http://lv2plug.in/ns/ext/urid#> .

        <urn:aqjack:test:time-position>
            a lv2:Plugin ;
            doap:name "aqjack test time position" ;
            lv2:binary <time-position.so> ;
            lv2:requiredFeature urid:map ;
            lv2:optionalFeature lv2:hardRTCapable ;
            lv2:port [
                a lv2:InputPort, atom:AtomPort ; atom:bufferType atom:Sequence ; atom:supports time:Position ;
                lv2:index 0 ; lv2:symbol "control" ; lv2:name "Control"
            ] , [
                a lv2:InputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "in" ; lv2:name "In"
            ] , [
                a lv2:OutputPort, lv2:AudioPort ; lv2:index 2 ; lv2:symbol "out" ; lv2:name "Out"
            ] , [
                a lv2:OutputPort, lv2:ControlPort ; lv2:index 3 ; lv2:symbol "speed" ; lv2:name "Speed"
            ] , [
                a lv2:OutputPort, lv2:ControlPort ; lv2:index 4 ; lv2:symbol "frame" ; lv2:name "Frame"
            ] , [
                a lv2:OutputPort, lv2:ControlPort ; lv2:index 5 ; lv2:symbol "positions" ; lv2:name "Positions"
            ] , [
                a lv2:OutputPort, lv2:ControlPort ; lv2:index 6 ; lv2:symbol "bar" ; lv2:name "Bar"
            ] , [
                a lv2:OutputPort, lv2:ControlPort ; lv2:index 7 ; lv2:symbol "bar_beat" ; lv2:name "Bar beat"
            ] , [
                a lv2:OutputPort, lv2:ControlPort ; lv2:index 8 ; lv2:symbol "bpm" ; lv2:name "Beats per minute"
            ] .
        """

    /// Builds the bundle in a new temporary folder; returns that folder, for `LV2_PATH`.
    public static func build() throws -> String {
        try LV2TestBundle.build(name: "time-position", source: source, manifest: manifest)
    }
}
