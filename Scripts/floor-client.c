/* The floor for a recorder's lost frames on this host: the least a JACK client can do per cycle
 * with N input ports (jack_port_get_buffer and a copy of each into memory; no ring, no consumer
 * thread, no disk). Scripts/bench-record.sh runs it after the recorders, on the same server and
 * generator, and prints the frames it found skipped beside theirs.
 *
 *   floor-client PORTS SECONDS SOURCE-PREFIX
 * connects SOURCE-PREFIX1 ... SOURCE-PREFIXN to its ports, waits 1 s, then counts for SECONDS:
 * frames skipped and repeated (JACK frame time jumps forward or back between its process
 * callbacks) and xruns. Prints
 *   floor PORTS ports CYCLES cycles SKIPPED skipped REPEATED repeated XRUNS xruns
 * Exit status 1 when no server answers or a port cannot be registered or connected. */
#include <jack/jack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jack_client_t *client;
static jack_port_t **ports;
static int portCount;
static float *block;
/* Written by the process thread only; read by main after the counting window (a torn read of a
 * long on x86-64 cannot happen, and the figures are printed once). */
static volatile long cycles, skipped, repeated, xruns;
static jack_nframes_t lastFrameTime;
static int started;

static int process(jack_nframes_t frames, void *unused) {
    (void)unused;
    jack_nframes_t now = jack_last_frame_time(client);
    /* Signed: JACK2 can hand a client a frame time a cycle back (a repeated cycle). */
    int32_t jump = (int32_t)(now - lastFrameTime - frames);
    if (started && jump > 0) skipped += jump;
    if (started && jump < 0) repeated += -jump;
    lastFrameTime = now;
    started = 1;
    cycles++;
    for (int port = 0; port < portCount; port++)
        memcpy(block + (size_t)port * frames, jack_port_get_buffer(ports[port], frames), frames * sizeof(float));
    return 0;
}

static int onXrun(void *unused) { (void)unused; xruns++; return 0; }

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: floor-client PORTS SECONDS SOURCE-PREFIX\n"); return 2; }
    portCount = atoi(argv[1]);
    int seconds = atoi(argv[2]);
    jack_status_t status;
    client = jack_client_open("floor", JackNoStartServer, &status);
    if (!client) { fprintf(stderr, "floor-client: no JACK server (status 0x%x)\n", status); return 1; }
    ports = calloc((size_t)portCount, sizeof *ports);
    block = calloc((size_t)portCount * 8192, sizeof(float)); /* periods up to 8192 frames */
    char name[64];
    for (int port = 0; port < portCount; port++) {
        snprintf(name, sizeof name, "in_%d", port + 1);
        ports[port] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        if (!ports[port]) { fprintf(stderr, "floor-client: cannot register port %s\n", name); return 1; }
    }
    jack_set_process_callback(client, process, NULL);
    jack_set_xrun_callback(client, onXrun, NULL);
    if (jack_activate(client)) { fprintf(stderr, "floor-client: cannot activate\n"); return 1; }
    for (int port = 0; port < portCount; port++) {
        snprintf(name, sizeof name, "%s%d", argv[3], port + 1);
        if (jack_connect(client, name, jack_port_name(ports[port]))) { fprintf(stderr, "floor-client: cannot connect %s\n", name); return 1; }
    }
    sleep(1);
    long cycles0 = cycles, skipped0 = skipped, repeated0 = repeated, xruns0 = xruns;
    sleep((unsigned)seconds);
    printf("floor %d ports %ld cycles %ld skipped %ld repeated %ld xruns\n", portCount, cycles - cycles0, skipped - skipped0,
           repeated - repeated0, xruns - xruns0);
    jack_client_close(client);
    return 0;
}
