#!/usr/bin/env python3
"""The hostile-input campaign against Apple's entry points for untrusted bytes.

    Scripts/mutation-campaign.py [--keep DIR] [--max-cases N]

Makes small seed files of every container the stream parser reads (WAVE, RF64, CAF with linear
PCM and AAC, ADTS, MP3 with a Xing and a VBRI header, M4A with AAC and ALAC, fragmented MP4),
finds each size, count and offset field of each container, and writes mutants: every field set
to 0, 1, -1, 2^31, 2^32, 2^62 and its maximum (what its width holds), the stream truncated at
every box or chunk boundary, 32- and 64-bit box sizes, boxes nested 100,000 deep. Each mutant
goes through the FuzzParsers binary (Scripts/fuzz.sh builds it with AddressSanitizer) as
AudioFileStreamParseBytes in chunks of 1, 13, 4,096 and 65,536 bytes with a seek, as
AudioFileOpenWithCallbacks with reads of 1 and 13 bytes, and as ExtAudioFileOpenURL.

A case fails when it crashes (any trap or sanitizer report), runs over 5 s, or allocates more
than 200 MB at once (libFuzzer's -malloc_limit_mb). Failing inputs are copied to --keep (for
Tests/FuzzCorpus). Prints one line per failure and a summary; exits 1 when anything failed.
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("AQJACK_FUZZ_BINARY", os.path.join(ROOT, ".build/fuzzer/debug/FuzzParsers"))
AQJACK = os.path.join(ROOT, ".build/release/aqjack")
# FuzzSelector's values (Sources/FuzzParsers/FuzzParsers.swift).
STREAM, CALLBACKS, EXT = 7, 8, 9
VALUES4 = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF]
VALUES8 = [0, 1, (1 << 64) - 1, 1 << 31, 1 << 32, 1 << 62, (1 << 63) - 1, 1 << 63]
VALUES2 = [0, 1, 0xFFFF, 0x8000]


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_seeds(work):
    """Small files of every container, written by sox, ffmpeg and aqjack."""
    tone = os.path.join(work, "tone.wav")
    run("sox", "-n", "-r", "8000", "-c", "2", "-b", "16", tone, "synth", "0.15", "sine", "440", "sine", "660")
    seeds = {"wav": tone}
    run("sox", tone, os.path.join(work, "pcm.caf"))
    seeds["caf-pcm"] = os.path.join(work, "pcm.caf")
    run("ffmpeg", "-y", "-i", tone, "-rf64", "always", os.path.join(work, "rf64.wav"))
    seeds["rf64"] = os.path.join(work, "rf64.wav")
    for name, ext, extra in [("adts", "aac", []), ("caf-aac", "caf", ["--codec", "aac"]), ("m4a", "m4a", []),
                             ("alac", "m4a", ["--codec", "alac"])]:
        path = os.path.join(work, name + "." + ext)
        run(AQJACK, "convert", tone, path, *extra)
        seeds[name] = path
    run("ffmpeg", "-y", "-i", tone, "-c:a", "libmp3lame", "-b:a", "32k", os.path.join(work, "xing.mp3"))
    seeds["mp3"] = os.path.join(work, "xing.mp3")
    run("ffmpeg", "-y", "-i", tone, "-c:a", "aac", "-movflags", "frag_keyframe+empty_moov+default_base_moof",
        "-frag_duration", "50000", os.path.join(work, "frag.mp4"))
    seeds["frag"] = os.path.join(work, "frag.mp4")
    return {name: open(path, "rb").read() for name, path in seeds.items()}


def put(data, offset, width, value, big):
    order = ">" if big else "<"
    fmt = {2: "H", 4: "I", 8: "Q"}[width]
    return data[:offset] + struct.pack(order + fmt, value % (1 << (8 * width))) + data[offset + width:]


def field_mutants(data, fields, big):
    """Every (offset, width) field set to each value its width holds."""
    for offset, width, what in fields:
        if offset + width > len(data):
            continue
        for value in {2: VALUES2, 4: VALUES4, 8: VALUES8}[width]:
            yield f"{what}={value:#x}", put(data, offset, width, value, big)


# ---- RIFF / RF64 ----

def riff_fields(data):
    fields, bounds = [(4, 4, "riff-size")], [12]
    pos = 12
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4].decode("latin1"), struct.unpack("<I", data[pos + 4:pos + 8])[0]
        fields.append((pos + 4, 4, f"{cid}-size"))
        if cid == "fmt ":
            fields += [(pos + 10, 2, "fmt-channels"), (pos + 12, 4, "fmt-rate"), (pos + 20, 2, "fmt-align"), (pos + 22, 2, "fmt-bits")]
        if cid == "ds64":
            fields += [(pos + 8, 8, "ds64-riff"), (pos + 16, 8, "ds64-data"), (pos + 24, 8, "ds64-samples")]
        if cid == "data":
            bounds += [pos, pos + 8, pos + 8 + 4, len(data) - 1]
            break
        pos += 8 + size + (size & 1)
        bounds.append(pos)
    return fields, bounds


# ---- CAF ----

def caf_fields(data):
    fields, bounds = [], [8]
    pos = 8
    while pos + 12 <= len(data):
        ctype, size = data[pos:pos + 4].decode("latin1"), struct.unpack(">q", data[pos + 4:pos + 12])[0]
        fields.append((pos + 4, 8, f"{ctype}-size"))
        body = pos + 12
        if ctype == "desc":
            fields += [(body + 8, 4, "desc-format"), (body + 16, 4, "desc-bpp"), (body + 20, 4, "desc-fpp"),
                       (body + 24, 4, "desc-channels"), (body + 28, 4, "desc-bits")]
        if ctype == "pakt":
            fields += [(body, 8, "pakt-packets"), (body + 8, 8, "pakt-valid"), (body + 16, 4, "pakt-priming"), (body + 20, 4, "pakt-remainder")]
        if size < 0:
            break
        pos = body + size
        bounds.append(pos)
    return fields, bounds


def varint(value):
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(out))


def caf_varint_mutants(data):
    """The packet table's first entry as a negative 10-byte varint, 2^33, 2^62 and a huge run."""
    pos = 8
    while pos + 12 <= len(data):
        ctype, size = data[pos:pos + 4].decode("latin1"), struct.unpack(">q", data[pos + 4:pos + 12])[0]
        if ctype == "pakt":
            first = pos + 12 + 24
            end = first
            while data[end] & 0x80:
                end += 1
            for label, replacement in [("negative", bytes([0xFF] * 9 + [0x7F])), ("2^33", varint(1 << 33)), ("2^62", varint(1 << 62)),
                                       ("endless", bytes([0x80] * 64))]:
                body = data[pos + 12:first] + replacement + data[end + 1:pos + 12 + size]
                yield f"pakt-varint-{label}", data[:pos + 4] + struct.pack(">q", len(body)) + body + data[pos + 12 + size:]
            # Two entries of 2^62 each.
            body = data[pos + 12:pos + 12 + 24] + varint(1 << 62) * 2
            body = struct.pack(">q", 2) + body[8:]
            yield "pakt-two-2^62", data[:pos + 4] + struct.pack(">q", len(body)) + body + data[pos + 12 + size:]
            return
        if size < 0:
            return
        pos += 12 + size


# ---- MPEG-4 ----

CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"mvex", b"moof", b"traf", b"dinf", b"udta"}


def boxes(data, start, end, depth=0, path=()):
    """Every box as (offset, header length, size, type, ancestors' offsets)."""
    pos = start
    while pos + 8 <= end:
        size, btype = struct.unpack(">I", data[pos:pos + 4])[0], data[pos + 4:pos + 8]
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", data[pos + 8:pos + 16])[0], 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            return
        yield pos, header, size, btype, path
        if btype in CONTAINERS:
            yield from boxes(data, pos + header, pos + size, depth + 1, path + (pos,))
        if btype == b"stsd":
            entry = pos + header + 8
            yield from boxes(data, entry + 36, entry + struct.unpack(">I", data[entry:entry + 4])[0], depth + 1, path + (pos, entry))
        pos += size


def replace_box(data, offset, size, ancestors, new):
    """`data` with the box at `offset` replaced by `new`, every ancestor's 32-bit size fixed."""
    delta = len(new) - size
    out = bytearray(data[:offset] + new + data[offset + size:])
    for parent in ancestors:
        old = struct.unpack(">I", out[parent:parent + 4])[0]
        if old > 1:
            out[parent:parent + 4] = struct.pack(">I", old + delta)
    return bytes(out)


def mp4_mutants(data):
    found = list(boxes(data, 0, len(data)))
    fields = []
    bounds = set()
    for pos, header, size, btype, path in found:
        name = btype.decode("latin1")
        bounds.update([pos, pos + header, pos + size])
        fields.append((pos, 4, f"{name}-size"))
        body = pos + header
        version = data[body] if body < len(data) else 0
        if btype == b"stsz":
            fields += [(body + 4, 4, "stsz-fixed"), (body + 8, 4, "stsz-count"), (body + 12, 4, "stsz-entry")]
        elif btype in (b"stco", b"co64"):
            fields += [(body + 4, 4, f"{name}-count"), (body + 8, 4 if btype == b"stco" else 8, f"{name}-entry")]
        elif btype == b"stsc":
            fields += [(body + 4, 4, "stsc-count"), (body + 8, 4, "stsc-first"), (body + 12, 4, "stsc-per-chunk")]
        elif btype == b"elst":
            if version == 1:
                fields += [(body + 4, 4, "elst-count"), (body + 8, 8, "elst-duration"), (body + 16, 8, "elst-media-time")]
            else:
                fields += [(body + 4, 4, "elst-count"), (body + 8, 4, "elst-duration"), (body + 12, 4, "elst-media-time")]
        elif btype in (b"mdhd", b"mvhd"):
            fields.append((body + (20 if version == 1 else 12), 4, f"{name}-timescale"))
        elif btype == b"trun":
            fields += [(body + 4, 4, "trun-count"), (body + 8, 4, "trun-offset-or-entry")]
        elif btype == b"trex":
            fields.append((body + 16, 4, "trex-size"))
        elif btype == b"tfhd":
            fields.append((body + 8, 8, "tfhd-base"))
        elif btype == b"esds":
            fields.append((body + 4, 4, "esds-head"))
    yield from field_mutants(data, fields, True)
    for pos, header, size, btype, path in found:
        name = btype.decode("latin1")
        # The box with a 64-bit size of each value (its header grows by 8 bytes).
        if header == 8:
            for value in VALUES8:
                new = struct.pack(">I", 1) + btype + struct.pack(">Q", value) + data[pos + 8:pos + size]
                yield f"{name}-size64={value:#x}", replace_box(data, pos, size, path, new)
        body = pos + header
        if btype == b"elst" and data[body] == 0:
            # Version 1 with 64-bit duration and media time, each value.
            for what in ("duration", "media-time"):
                for value in VALUES8:
                    duration = value if what == "duration" else struct.unpack(">I", data[body + 8:body + 12])[0]
                    media = value if what == "media-time" else struct.unpack(">i", data[body + 12:body + 16])[0] % (1 << 64)
                    content = bytes([1, 0, 0, 0]) + struct.pack(">I", 1) + struct.pack(">QQ", duration, media) + data[body + 16:body + 20]
                    yield f"elst64-{what}={value:#x}", replace_box(data, pos, size, path, struct.pack(">I", 8 + len(content)) + b"elst" + content)
        if btype == b"stco":
            count = struct.unpack(">I", data[body + 4:body + 8])[0]
            entries = [struct.unpack(">I", data[body + 8 + 4 * i:body + 12 + 4 * i])[0] for i in range(count)]
            for value in VALUES8:
                content = data[body:body + 8] + struct.pack(">Q", value) + b"".join(struct.pack(">Q", e) for e in entries[1:])
                yield f"co64-entry={value:#x}", replace_box(data, pos, size, path, struct.pack(">I", 8 + len(content)) + b"co64" + content)
        if btype == b"tfhd":
            flags = struct.unpack(">I", data[body:body + 4])[0] & 0xFFFFFF
            if not flags & 1:
                for value in VALUES8:
                    content = struct.pack(">I", (flags | 1) & ~0x020000) + data[body + 4:body + 8] + struct.pack(">Q", value) + data[body + 8:pos + size]
                    yield f"tfhd-base={value:#x}", replace_box(data, pos, size, path, struct.pack(">I", 8 + len(content)) + b"tfhd" + content)
    for cut in sorted(bounds):
        if 0 < cut < len(data):
            yield f"truncated-at-{cut}", data[:cut]
    # Nesting 100,000 deep inside the first track.
    traks = [(pos, header, size, path) for pos, header, size, btype, path in found if btype == b"trak"]
    if traks:
        pos, header, size, path = traks[0]
        for kind in (b"mdia", b"minf", b"stbl", b"edts"):
            depth = 100_000
            nest = bytearray()
            for level in range(depth):
                nest += struct.pack(">I", 8 * (depth - level)) + kind
            new = data[pos:pos + header] + bytes(nest) + data[pos + header:pos + size]
            new = struct.pack(">I", len(new)) + new[4:]
            yield f"nested-{kind.decode()}-100000", replace_box(data, pos, size, path, new)


# ---- ADTS and MP3 ----

def adts_mutants(data):
    frames = []
    pos = 0
    while pos + 7 <= len(data) and data[pos] == 0xFF:
        length = ((data[pos + 3] & 3) << 11) | (data[pos + 4] << 3) | (data[pos + 5] >> 5)
        frames.append(pos)
        if length == 0:
            break
        pos += length
    for index in (0, 1, len(frames) // 2):
        at = frames[index]
        for length in (0, 1, 7, 8, 9, 8191):
            b = bytearray(data)
            b[at + 3] = (b[at + 3] & ~3) | (length >> 11)
            b[at + 4] = (length >> 3) & 0xFF
            b[at + 5] = (b[at + 5] & 0x1F) | ((length & 7) << 5)
            yield f"adts-frame{index}-length={length}", bytes(b)
    for at in frames[:40]:
        yield f"truncated-at-{at}", data[:at]
        yield f"truncated-at-{at + 3}", data[:at + 3]


def mp3_mutants(data):
    start = 0
    if data[:3] == b"ID3":
        start = 10 + ((data[6] << 21) | (data[7] << 14) | (data[8] << 7) | data[9])
        for value in (0, 0x7F7F7F7F):
            b = bytearray(data)
            b[6:10] = struct.pack(">I", value)
            yield f"id3-size={value:#x}", bytes(b)
    xing = data.find(b"Xing", start, start + 200)
    if xing < 0:
        xing = data.find(b"Info", start, start + 200)
    if xing > 0:
        b = bytearray(data)
        struct.pack_into(">I", b, xing + 4, 3)   # frames and bytes present
        base = bytes(b)
        yield from field_mutants(base, [(xing + 8, 4, "xing-frames"), (xing + 12, 4, "xing-bytes")], True)
        # The same frame with a Fraunhofer VBRI header instead.
        v = bytearray(base)
        v[xing:xing + 4] = b"\0\0\0\0"
        vbri = start + 36
        v[vbri:vbri + 4] = b"VBRI"
        for value in VALUES4:
            w = bytearray(v)
            struct.pack_into(">I", w, vbri + 10, value)
            yield f"vbri-bytes={value:#x}", bytes(w)
            w = bytearray(v)
            struct.pack_into(">I", w, vbri + 14, value)
            yield f"vbri-frames={value:#x}", bytes(w)
    for cut in range(start, min(len(data), start + 2000), 97):
        yield f"truncated-at-{cut}", data[:cut]


def chunked_mutants(data, fields, bounds, big):
    yield from field_mutants(data, fields, big)
    for cut in sorted(set(bounds)):
        if 0 < cut < len(data):
            yield f"truncated-at-{cut}", data[:cut]


def mutants(seeds):
    for name, data in seeds.items():
        if name in ("wav", "rf64"):
            fields, bounds = riff_fields(data)
            yield from ((name, label, m) for label, m in chunked_mutants(data, fields, bounds, False))
        elif name.startswith("caf"):
            fields, bounds = caf_fields(data)
            yield from ((name, label, m) for label, m in chunked_mutants(data, fields, bounds, True))
            yield from ((name, label, m) for label, m in caf_varint_mutants(data))
        elif name == "adts":
            yield from ((name, label, m) for label, m in adts_mutants(data))
        elif name == "mp3":
            yield from ((name, label, m) for label, m in mp3_mutants(data))
        else:
            yield from ((name, label, m) for label, m in mp4_mutants(data))


def inputs_for(body):
    """The entry points and chunkings each mutant goes through: (label, selector bytes)."""
    for schedule, chunk in enumerate((1, 13, 4096, 65536)):
        yield f"stream/{chunk}", bytes([STREAM, schedule])
    for limit in (1, 13):
        yield f"callbacks/{limit}", bytes([CALLBACKS, limit - 1])
    yield "ext", bytes([EXT])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", help="copy every failing input into this folder")
    parser.add_argument("--max-cases", type=int, default=0, help="stop after this many mutants (0: all)")
    args = parser.parse_args()
    if not os.access(BINARY, os.X_OK):
        sys.exit(f"mutation-campaign: {BINARY} is missing: run Scripts/fuzz.sh 0 0 first")
    work = tempfile.mkdtemp(prefix="aqjack-campaign-")
    try:
        seeds = make_seeds(work)
        files = []
        labels = {}
        for index, (seed, label, data) in enumerate(mutants(seeds)):
            if args.max_cases and index >= args.max_cases:
                break
            for entry, prefix in inputs_for(data):
                path = os.path.join(work, f"case-{len(files):06d}")
                with open(path, "wb") as out:
                    out.write(prefix + data)
                files.append(path)
                labels[path] = (seed, label, entry)
        mutant_count = len({(s, l) for s, l, _ in labels.values()})
        print(f"mutation-campaign: {mutant_count} mutants of {len(seeds)} seeds, {len(files)} runs", flush=True)
        failures, slowest, pending = [], (0, None), list(files)
        env = dict(os.environ, SWIFT_BACKTRACE="enable=no", ASAN_OPTIONS="detect_leaks=0")
        while pending:
            batch, pending = pending[:150], pending[150:]
            result = subprocess.run([BINARY, "-timeout=5", "-malloc_limit_mb=200", "-rss_limit_mb=2048", *batch],
                                    capture_output=True, text=True, errors="replace", env=env)
            log = result.stdout + result.stderr
            for path, ms in re.findall(r"Executed (\S+) in (\d+) ms", log):
                if int(ms) > slowest[0]:
                    slowest = (int(ms), path)
                if int(ms) > 5000:
                    failures.append((path, f"ran {ms} ms, over 5 s"))
                    seed, label, entry = labels[path]
                    print(f"SLOW {seed} {label} via {entry}: {ms} ms", flush=True)
            if result.returncode == 0:
                continue
            running = re.findall(r"Running: (\S+)", log)
            culprit = running[-1] if running else batch[0]
            reason = next((line.strip() for line in log.splitlines()
                           if "ERROR:" in line or "Fatal error" in line or "timeout" in line.lower() or "out-of-memory" in line), "exit %d" % result.returncode)
            failures.append((culprit, reason))
            seed, label, entry = labels[culprit]
            print(f"FAIL {seed} {label} via {entry}: {reason[:200]}", flush=True)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                safe = re.sub(r"[^A-Za-z0-9_.=-]", "_", f"{seed}-{label}-{entry}")
                shutil.copy(culprit, os.path.join(args.keep, safe))
            pending = batch[batch.index(culprit) + 1:] + pending
        ms, path = slowest
        where = "" if path is None else f" ({labels[path][0]} {labels[path][1]} via {labels[path][2]})"
        print(f"mutation-campaign: {len(files)} runs, {len(failures)} failed; slowest {ms} ms{where}")
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
