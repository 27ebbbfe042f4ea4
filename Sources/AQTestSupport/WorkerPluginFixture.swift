import Foundation

/// A small LV2 plugin of the tests' own that needs the worker (`worker:schedule` is a required
/// feature), built with `cc` against lv2-dev's headers into a bundle in a temporary folder: no
/// Debian plugin uses the worker. It multiplies its audio by a gain that only its worker's
/// response sets: each run whose `gain` control differs from the gain last asked for schedules
/// work with the new value; `work()` answers with it; `work_response()` makes it the gain from
/// the next run on; `end_run()` does nothing. Before the first response the
/// output is silence.
public enum WorkerPluginFixture {
    public static let uri = "urn:aqjack:test:worker-gain"

    static let source = #"""
        #include <lv2/core/lv2.h>
        #include <lv2/worker/worker.h>
        #include <stdlib.h>
        #include <string.h>

        typedef struct {
            const float *gain_control;
            const float *input;
            float *output;
            LV2_Worker_Schedule *schedule;
            float asked;      /* the gain last sent to the worker */
            float applied;    /* the gain the worker's last response set */
            int pending;
        } Plugin;

        static LV2_Handle instantiate(const LV2_Descriptor *d, double rate, const char *path,
                                      const LV2_Feature *const *features) {
            LV2_Worker_Schedule *schedule = NULL;
            for (int i = 0; features && features[i]; i++)
                if (!strcmp(features[i]->URI, LV2_WORKER__schedule)) schedule = features[i]->data;
            if (!schedule) return NULL;
            Plugin *p = calloc(1, sizeof *p);
            p->schedule = schedule;
            p->asked = -1;
            return p;
        }

        static void connect_port(LV2_Handle h, uint32_t port, void *data) {
            Plugin *p = h;
            if (port == 0) p->gain_control = data;
            else if (port == 1) p->input = data;
            else if (port == 2) p->output = data;
        }

        static void run(LV2_Handle h, uint32_t frames) {
            Plugin *p = h;
            for (uint32_t i = 0; i < frames; i++) p->output[i] = p->input[i] * p->applied;
            float gain = *p->gain_control;
            if (gain != p->asked && !p->pending
                && p->schedule->schedule_work(p->schedule->handle, sizeof gain, &gain) == LV2_WORKER_SUCCESS) {
                p->asked = gain;
                p->pending = 1;
            }
        }

        static LV2_Worker_Status work(LV2_Handle h, LV2_Worker_Respond_Function respond,
                                      LV2_Worker_Respond_Handle rh, uint32_t size, const void *data) {
            if (size != sizeof(float)) return LV2_WORKER_ERR_UNKNOWN;
            return respond(rh, size, data);
        }

        static LV2_Worker_Status work_response(LV2_Handle h, uint32_t size, const void *data) {
            Plugin *p = h;
            memcpy(&p->applied, data, sizeof p->applied);
            p->pending = 0;
            return LV2_WORKER_SUCCESS;
        }

        static LV2_Worker_Status end_run(LV2_Handle h) { return LV2_WORKER_SUCCESS; }

        static const void *extension_data(const char *uri) {
            static const LV2_Worker_Interface worker = { work, work_response, end_run };
            return strcmp(uri, LV2_WORKER__interface) ? NULL : &worker;
        }

        """# + LV2TestBundle.descriptor(uri: uri, extensionData: "extension_data")

    static let manifest = """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        @prefix work: <http://lv2plug.in/ns/ext/worker#> .

        <urn:aqjack:test:worker-gain>
            a lv2:Plugin ;
            doap:name "aqjack test worker gain" ;
            lv2:binary <worker-gain.so> ;
            lv2:requiredFeature work:schedule ;
            lv2:extensionData work:interface ;
            lv2:port [
                a lv2:InputPort, lv2:ControlPort ; lv2:index 0 ; lv2:symbol "gain" ; lv2:name "Gain" ;
                lv2:default 1.0 ; lv2:minimum 0.0 ; lv2:maximum 4.0
            ] , [
                a lv2:InputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "in" ; lv2:name "In"
            ] , [
                a lv2:OutputPort, lv2:AudioPort ; lv2:index 2 ; lv2:symbol "out" ; lv2:name "Out"
            ] .
        """

    /// Builds the bundle in a new temporary folder; returns that folder, for `LV2_PATH`.
    public static func build() throws -> String {
        try LV2TestBundle.build(name: "worker-gain", source: source, manifest: manifest)
    }
}
