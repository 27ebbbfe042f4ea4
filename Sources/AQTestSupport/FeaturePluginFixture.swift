import Foundation

/// A small LV2 plugin of the tests' own that requires host features no Debian plugin requires:
/// fixed, power-of-two block lengths (`bufsz:fixedBlockLength`, `bufsz:powerOf2BlockLength`)
/// and `state:makePath`. It reads the block length from the host's options
/// (`bufsz:nominalBlockLength`, else `maxBlockLength`), and at instantiation writes a file at
/// the path makePath gives for `takes/one/note.txt` (two folders the host must make) and reads
/// it back. It halves its input; a run of any other length, or a length that is not a power of
/// two, or a file that could not be written and read back, gives NaN instead, so a host that
/// breaks a promise shows in every sample. With `AQJACK_TEST_PLUGIN_ABORT` set it crashes
/// (abort) in instantiate: a plugin's own fault, which must leave aqjack's files as they were.
public enum FeaturePluginFixture {
    public static let uri = "urn:aqjack:test:feature-half"

    static let source = #"""
        #include <lv2/core/lv2.h>
        #include <lv2/options/options.h>
        #include <lv2/urid/urid.h>
        #include <lv2/buf-size/buf-size.h>
        #include <lv2/atom/atom.h>
        #include <lv2/state/state.h>
        #include <math.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>

        typedef struct {
            const float *input;
            float *output;
            uint32_t block;
            int file_ok;
        } Plugin;

        /* Writes a note at the path makePath gives and reads it back: 1 when it comes back. */
        static int note_round_trip(LV2_State_Make_Path *make, LV2_State_Free_Path *free_path) {
            char *path = make->path(make->handle, "takes/one/note.txt");
            if (!path) return 0;
            int ok = 0;
            FILE *file = fopen(path, "w");
            if (file) {
                fputs("aqjack", file);
                fclose(file);
                char back[16] = { 0 };
                file = fopen(path, "r");
                if (file) {
                    ok = fgets(back, sizeof back, file) && !strcmp(back, "aqjack");
                    fclose(file);
                }
            }
            if (free_path) free_path->free_path(free_path->handle, path); else free(path);
            return ok;
        }

        static LV2_Handle instantiate(const LV2_Descriptor *d, double rate, const char *path,
                                      const LV2_Feature *const *features) {
            if (getenv("AQJACK_TEST_PLUGIN_ABORT")) abort();
            LV2_URID_Map *map = NULL;
            const LV2_Options_Option *options = NULL;
            LV2_State_Make_Path *make = NULL;
            LV2_State_Free_Path *free_path = NULL;
            for (int i = 0; features && features[i]; i++) {
                if (!strcmp(features[i]->URI, LV2_URID__map)) map = features[i]->data;
                if (!strcmp(features[i]->URI, LV2_OPTIONS__options)) options = features[i]->data;
                if (!strcmp(features[i]->URI, LV2_STATE__makePath)) make = features[i]->data;
                if (!strcmp(features[i]->URI, LV2_STATE__freePath)) free_path = features[i]->data;
            }
            if (!map || !options || !make) return NULL;
            LV2_URID nominal = map->map(map->handle, LV2_BUF_SIZE__nominalBlockLength);
            LV2_URID maximum = map->map(map->handle, LV2_BUF_SIZE__maxBlockLength);
            LV2_URID atomInt = map->map(map->handle, LV2_ATOM__Int);
            uint32_t block = 0, most = 0;
            for (const LV2_Options_Option *o = options; o->key; o++) {
                if (o->type != atomInt) continue;
                if (o->key == nominal) block = (uint32_t)*(const int32_t *)o->value;
                if (o->key == maximum) most = (uint32_t)*(const int32_t *)o->value;
            }
            if (!block) block = most;
            if (!block) return NULL;
            Plugin *p = calloc(1, sizeof *p);
            p->block = block;
            p->file_ok = note_round_trip(make, free_path);
            return p;
        }

        static void connect_port(LV2_Handle h, uint32_t port, void *data) {
            Plugin *p = h;
            if (port == 0) p->input = data;
            else if (port == 1) p->output = data;
        }

        static void run(LV2_Handle h, uint32_t frames) {
            Plugin *p = h;
            int kept = p->file_ok && frames == p->block && (frames & (frames - 1)) == 0;
            for (uint32_t i = 0; i < frames; i++) p->output[i] = kept ? p->input[i] * 0.5f : NAN;
        }

        """# + LV2TestBundle.descriptor(uri: uri, extensionData: "NULL")

    static let manifest = """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        @prefix bufsz: <http://lv2plug.in/ns/ext/buf-size#> .
        @prefix opts: <http://lv2plug.in/ns/ext/options#> .
        @prefix urid: <http://lv2plug.in/ns/ext/urid#> .
        @prefix state: <http://lv2plug.in/ns/ext/state#> .

        <urn:aqjack:test:feature-half>
            a lv2:Plugin ;
            doap:name "aqjack test feature half" ;
            lv2:binary <feature-half.so> ;
            lv2:requiredFeature urid:map, opts:options, bufsz:fixedBlockLength, bufsz:powerOf2BlockLength, state:makePath ;
            lv2:port [
                a lv2:InputPort, lv2:AudioPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In"
            ] , [
                a lv2:OutputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "out" ; lv2:name "Out"
            ] .
        """

    /// Builds the bundle in a new temporary folder; returns that folder, for `LV2_PATH`.
    public static func build() throws -> String {
        try LV2TestBundle.build(name: "feature-half", source: source, manifest: manifest)
    }
}
