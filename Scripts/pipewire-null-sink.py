"""Writes a headless PipeWire config for Scripts/test-pipewire.sh: minimal.conf with every ALSA
adapter (hardware) replaced by one null sink, so PipeWire runs with no sound card, no session
bus and no wireplumber.

    python3 Scripts/pipewire-null-sink.py /usr/share/pipewire/minimal.conf OUT.conf
"""
import sys

text = open(sys.argv[1]).read()
null_sink = """{ factory = adapter
        args = {
            factory.name     = support.null-audio-sink
            node.name        = "aqjack-null-sink"
            media.class      = "Audio/Sink"
            audio.position   = [ FL FR ]
            monitor.channel-volumes = false
            # DSP ports (one mono float port per channel), which JACK clients see as ports.
            adapter.auto-port-config = {
                mode = dsp
                monitor = false
                control = false
                position = preserve
            }
        }
    }"""
# Each uncommented `{ factory = adapter` block (brace-matched) that opens ALSA hardware goes;
# the first is replaced by the null sink.
out, position, replaced = [], 0, False
while True:
    start = text.find("\n    { factory = adapter", position)
    if start < 0:
        break
    start += 5
    depth, end = 0, len(text)
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                end = index + 1
                break
    out.append(text[position:start])
    block = text[start:end]
    if "api.alsa.pcm" in block:
        if not replaced:
            out.append(null_sink)
            replaced = True
    else:
        out.append(block)
    position = end
out.append(text[position:])
if not replaced:
    sys.exit("pipewire-null-sink.py: no ALSA adapter found in " + sys.argv[1])
open(sys.argv[2], "w").write("".join(out))
