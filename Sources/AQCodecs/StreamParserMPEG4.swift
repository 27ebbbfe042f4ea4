import AQMedia
import CAudioTypes

/// MPEG-4 audio streams (M4A, MP4) with AAC, MP3, Opus, FLAC, AC-3 or E-AC-3: the first audio
/// track's sample table ('moov': 'stsd' and its 'esds', 'dOps', 'dfLa', 'dac3' or 'dec3';
/// 'stsz', 'stsc', 'stco'/'co64', the edit list for priming), or fragments ('moof'/'trun'), then the samples from 'mdat' as they arrive. A 'moov' after its 'mdat' (a
/// file not made for streaming) is handled by keeping the 'mdat' bytes until the table comes.
final class MPEG4StreamParser: StreamContainerParser {
    /// `.chunks`: between boxes; `.data`: in an 'mdat'.
    private var state = ChunkedState.chunks
    /// Every sample's absolute offset and size, in stream order.
    private var samples: [(offset: Int64, size: Int)] = []
    private var nextSample = 0
    /// Where the current 'mdat' ends (nil: at the end of the stream).
    private var mdatEnd: Int64?
    /// 'mdat' bytes kept while no sample table is known, from `stashStart`.
    private var stash: [UInt8] = []
    private var stashStart: Int64 = 0
    private var haveTable = false
    /// Fragment defaults from 'trex'.
    private var defaultSampleSize = 0

    func step(_ input: UnsafeRawBufferPointer, at offset: Int64, info: AudioStreamInfo,
              events: (AudioStreamEvent) -> Void, packets: AudioStreamPacketHandler) throws(AudioFileError) -> Int {
        if let passed = state.pass(input) { return passed }
        switch state {
        case .header, .skipping, .trailer:
            return 0   // no header; skipping passed over above
        case .data:
            if let mdatEnd, offset >= mdatEnd {
                state = .chunks
                return try step(input, at: offset, info: info, events: events, packets: packets)
            }
            return try mdat(input, at: offset, info: info, packets: packets)
        case .chunks:
            guard input.count >= 8 else { return 0 }
            var size = Int64(input.be32(0))
            let type = input.fourCC(4)
            var header = 8
            if size == 1 {
                guard input.count >= 16 else { return 0 }
                size = Int64(bitPattern: input.be64(8))
                header = 16
            }
            guard size == 0 || size >= Int64(header) else { throw malformedStream("MPEG-4 box '\(type)' of \(size) bytes") }
            switch type {
            case "mdat":
                guard case let (end, false) = offset.addingReportingOverflow(size) else {
                    throw malformedStream("MPEG-4 'mdat' of \(size) bytes at byte \(offset) ends past 2^63")
                }
                mdatEnd = size == 0 ? nil : end
                if info.dataOffset == 0 { info.dataOffset = offset + Int64(header) }
                if !haveTable { stashStart = offset + Int64(header) }
                state = .data
                return header
            case "moov", "moof":
                guard size > 0 else { throw malformedStream("MPEG-4 '\(type)' running to the end of the stream") }
                try checkHeaderSize(size, of: "MPEG-4 '\(type)' box")
                guard Int64(input.count) >= size else { return 0 }
                let body = UnsafeRawBufferPointer(rebasing: input[header ..< Int(size)])
                if type == "moov" {
                    try readMovie(body, info: info, events: events)
                } else {
                    try readFragment(body, boxStart: offset)
                }
                try flushStash(info: info, packets: packets)
                return Int(size)
            default:
                guard size > 0 else {
                    state = .skipping(.max)
                    return header
                }
                state = .skip(size - Int64(header))
                return header
            }
        }
    }

    /// Hands out the samples inside `input` (bytes of 'mdat' from `offset`), or keeps the
    /// bytes when no table is known yet.
    private func mdat(_ input: UnsafeRawBufferPointer, at offset: Int64, info: AudioStreamInfo,
                      packets: AudioStreamPacketHandler) throws(AudioFileError) -> Int {
        let inMdat = mdatEnd.map { Int(max(0, min(Int64(input.count), $0 - offset))) } ?? input.count
        func consumed(_ count: Int) -> Int {
            if let mdatEnd, offset + Int64(count) >= mdatEnd { state = .chunks }
            return count
        }
        guard haveTable else {
            guard stash.count + inMdat <= StreamLimits.stashBytes else {
                throw AudioFileError(AudioFileStreamProperties.notOptimizedCode,
                                     "the MPEG-4 stream's 'moov' is not within the first \(StreamLimits.stashBytes) bytes of its 'mdat': the file is not optimized for streaming")
            }
            stash.append(contentsOf: input[0 ..< inMdat])
            return consumed(inMdat)
        }
        var descriptions: [AudioStreamPacketDescription] = []
        var first = -1
        var end = 0
        while nextSample < samples.count {
            let sample = samples[nextSample]
            let start = Int(sample.offset - offset)
            // A gap (the next chunk elsewhere) ends this batch; a sample not all here waits.
            guard start >= 0, descriptions.isEmpty || start == end, start + sample.size <= inMdat else { break }
            if first < 0 { first = start }
            descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(start - first), mVariableFramesInPacket: 0,
                                                             mDataByteSize: UInt32(sample.size)))
            end = start + sample.size
            nextSample += 1
        }
        if !descriptions.isEmpty {
            descriptions.withUnsafeBufferPointer { packets(UnsafeRawBufferPointer(rebasing: input[first ..< end]), $0.count, $0) }
            return consumed(end)
        }
        // Nothing whole here: skip what comes before the next sample, or wait for the rest of it.
        let nextStart = nextSample < samples.count ? samples[nextSample].offset - offset : Int64(inMdat)
        return nextStart > 0 ? consumed(Int(min(nextStart, Int64(inMdat)))) : 0
    }

    /// Hands out what was kept of an 'mdat' that came before the table.
    private func flushStash(info: AudioStreamInfo, packets: AudioStreamPacketHandler) throws(AudioFileError) {
        guard haveTable, !stash.isEmpty else { return }
        let saved = state
        let savedEnd = mdatEnd
        mdatEnd = stashStart + Int64(stash.count)
        var position = 0
        try stash.withUnsafeBufferPointer { (buffer) throws(AudioFileError) in
            let raw = UnsafeRawBufferPointer(buffer)
            while position < raw.count {
                let consumed = try mdat(UnsafeRawBufferPointer(rebasing: raw[position...]), at: stashStart + Int64(position), info: info, packets: packets)
                if consumed == 0 { break }
                position += consumed
            }
        }
        stash.removeAll()
        state = saved
        mdatEnd = savedEnd
    }

    // MARK: Boxes

    /// Calls `visit` with each box in `body`: its type and contents.
    private func boxes(_ body: UnsafeRawBufferPointer, _ visit: (String, UnsafeRawBufferPointer) throws(AudioFileError) -> Void) throws(AudioFileError) {
        var cursor = 0
        while cursor + 8 <= body.count {
            var claimed = UInt64(body.be32(cursor))
            var header = 8
            if claimed == 1 {
                guard cursor + 16 <= body.count else { break }
                claimed = body.be64(cursor + 8)
                header = 16
            } else if claimed == 0 {
                claimed = UInt64(body.count - cursor)
            }
            guard claimed >= UInt64(header), claimed <= UInt64(body.count - cursor) else {
                throw malformedStream("MPEG-4 box '\(body.fourCC(cursor + 4))' of \(claimed) bytes overruns its parent")
            }
            let size = Int(claimed)
            try visit(body.fourCC(cursor + 4), UnsafeRawBufferPointer(rebasing: body[cursor + header ..< cursor + size]))
            cursor += size
        }
    }

    private func readMovie(_ body: UnsafeRawBufferPointer, info: AudioStreamInfo, events: (AudioStreamEvent) -> Void) throws(AudioFileError) {
        var movieTimescale = 0
        var track: TrackTable?
        try boxes(body) { (type, content) throws(AudioFileError) in
            switch type {
            case "mvhd":
                guard content.count >= 24 else { return }
                movieTimescale = Int(content.be32(content[0] == 1 ? 20 : 12))
            case "trak":
                if track == nil, let table = try readTrack(content) { track = table }
            case "mvex":
                try boxes(content) { (type, trex) throws(AudioFileError) in
                    if type == "trex", trex.count >= 24 { defaultSampleSize = Int(trex.be32(16)) }
                }
            default: break
            }
        }
        guard let track else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode, "the MPEG-4 stream has no audio track of AAC, MP3, Opus, FLAC, AC-3 or E-AC-3")
        }
        info.dataFormat = try Self.format(of: track)
        // MP3 needs no cookie (its frames' headers say everything), as the file reader gives it.
        let isAAC = info.dataFormat.mFormatID == AudioFormatValues.mpeg4AAC
        info.magicCookie = track.entry == "mp4a" && !isAAC ? [] : track.cookie
        if isAAC { info.bitRate = try ElementaryStreamDescriptor(parsing: track.cookie).averageBitRate }
        samples = track.samples
        info.packetOffsets = samples.map(\.offset)
        info.maximumPacketSize = samples.map(\.size).max() ?? 0
        if !samples.isEmpty {
            info.audioDataPacketCount = Int64(samples.count)
            info.audioDataByteCount = Int64(samples.reduce(0) { $0 + $1.size })
        }
        events(.property(AudioFileStreamProperties.dataFormat))
        events(.property(AudioFileStreamProperties.magicCookieData))
        // A media time of -1 is an empty edit (nothing to skip).
        if let edit = track.edit, edit.mediaTime >= 0, movieTimescale > 0, track.timescale > 0 {
            let rate = Int64(info.dataFormat.mSampleRate)
            guard edit.duration >= 0, case let (primingTicks, false) = edit.mediaTime.multipliedReportingOverflow(by: rate),
                  case let (validTicks, false) = edit.duration.multipliedReportingOverflow(by: rate),
                  let priming = Int32(exactly: primingTicks / Int64(track.timescale)) else {
                throw malformedStream("MPEG-4 edit list of media time \(edit.mediaTime) and duration \(edit.duration): expected at most 2^31 frames of priming")
            }
            let valid = validTicks / Int64(movieTimescale)
            // What the decoder drops itself (Opus's pre-skip) is not there to trim.
            let skipped = Int32(clamping: PacketDecoders.framesSkippedByDecoder(info.dataFormat.mFormatID, cookie: info.magicCookie))
            let trimmed = max(0, priming - skipped)
            let remainder = Int64(samples.count) * Int64(info.dataFormat.mFramesPerPacket) - Int64(skipped) - Int64(trimmed) - valid
            info.packetTable = PacketTable(validFrameCount: valid, primingFrames: trimmed, remainderFrames: Int32(clamping: max(0, remainder)))
            events(.property(AudioFileStreamProperties.packetTableInfo))
        }
        if !samples.isEmpty {
            events(.property(AudioFileStreamProperties.audioDataPacketCount))
            events(.property(AudioFileStreamProperties.audioDataByteCount))
        }
        if let first = samples.first { info.dataOffset = first.offset }
        events(.property(AudioFileStreamProperties.dataOffset))
        haveTable = true
        info.isReadyToProducePackets = true
        events(.property(AudioFileStreamProperties.readyToProducePackets))
    }

    /// The stream description of a track, by its sample entry: AAC from its ES_Descriptor (the
    /// AAC core, as ``CompressedFormatValues/aacDescription(_:)``), MP3 where the descriptor names
    /// MPEG audio, Opus at 48 kHz with 960
    /// frames a packet, FLAC with STREAMINFO's block size when fixed, AC-3 and E-AC-3 with 1536
    /// frames and the channels their 'dac3'/'dec3' say.
    static func format(of track: TrackTable) throws(AudioFileError) -> AudioStreamBasicDescription {
        func described(_ id: UInt32, rate: Int, channels: Int, frames: Int) -> AudioStreamBasicDescription {
            AudioStreamBasicDescription(mSampleRate: Double(rate), mFormatID: id, mFormatFlags: 0, mBytesPerPacket: 0, mFramesPerPacket: UInt32(frames),
                                        mBytesPerFrame: 0, mChannelsPerFrame: UInt32(channels), mBitsPerChannel: 0, mReserved: 0)
        }
        switch track.entry {
        case "mp4a" where [0x69, 0x6B].contains(ElementaryStreamDescriptor.objectType(in: track.cookie)):
            // MPEG audio in 'mp4a' (MP3 as ffmpeg and others write it): MPEG-1 Layer III, 1152
            // frames a packet; MPEG-2 (half rates), 576.
            let mpeg1 = ElementaryStreamDescriptor.objectType(in: track.cookie) == 0x6B
            return described(AudioFormatValues.mpegLayer3, rate: track.rate, channels: track.channels, frames: mpeg1 ? 1152 : 576)
        case "mp4a":
            return CompressedFormatValues.aacDescription(try ElementaryStreamDescriptor(parsing: track.cookie).audioSpecificConfig)
        case "Opus":
            return described(AudioFormatValues.opus, rate: 48000, channels: Int(track.cookie.count > 9 ? track.cookie[9] : 0), frames: 960)
        case "fLaC":
            // The cookie: version and flags, a metadata block header, STREAMINFO (block sizes first).
            let info = track.cookie.count >= 8 + 18 ? Array(track.cookie[8...]) : []
            let minimum = info.count >= 4 ? Int(info[0]) << 8 | Int(info[1]) : 0, maximum = info.count >= 4 ? Int(info[2]) << 8 | Int(info[3]) : 0
            let rate = info.count >= 13 ? Int(info[10]) << 12 | Int(info[11]) << 4 | Int(info[12]) >> 4 : track.rate
            let channels = info.count >= 13 ? Int(info[12] >> 1 & 0x07) + 1 : track.channels
            return described(AudioFormatValues.flac, rate: rate, channels: channels, frames: minimum == maximum ? maximum : 0)
        default:
            return described(track.entry == "ac-3" ? AudioFormatValues.ac3 : AudioFormatValues.enhancedAC3, rate: track.rate,
                             channels: track.ac3Channels ?? track.channels, frames: 1536)
        }
    }

    /// The channels of an AC-3 coding mode (acmod) and its LFE flag.
    static func ac3Channels(mode: Int, lfe: Int) -> Int { [2, 1, 2, 3, 3, 4, 4, 5][mode & 7] + (lfe & 1) }

    /// An audio track's sample entry, cookie, timescale, edit and samples.
    struct TrackTable {
        /// The sample entry's type: 'mp4a', 'Opus', 'fLaC', 'ac-3' or 'ec-3'.
        var entry = ""
        /// The sample entry's channel count and rate (Hz).
        var channels = 0
        var rate = 0
        /// AC-3 and E-AC-3: the channels 'dac3'/'dec3' say.
        var ac3Channels: Int?
        /// AAC: the ES_Descriptor; Opus: an OpusHead made from 'dOps'; FLAC: the 'dfLa' payload.
        var cookie: [UInt8] = []
        var timescale = 0
        var edit: (mediaTime: Int64, duration: Int64)?
        var samples: [(offset: Int64, size: Int)] = []
    }

    private func readTrack(_ trak: UnsafeRawBufferPointer) throws(AudioFileError) -> TrackTable? {
        var table = TrackTable()
        var isAudio = false
        var sizes: [Int] = []
        var chunkOffsets: [Int64] = []
        var perChunk: [(firstChunk: Int, samples: Int)] = []
        func walk(_ body: UnsafeRawBufferPointer, depth: Int) throws(AudioFileError) {
            guard depth < StreamLimits.depth else { throw malformedStream("MPEG-4 boxes nested more than \(StreamLimits.depth) deep") }
            try boxes(body) { (type, content) throws(AudioFileError) in
                switch type {
                case "mdia", "minf", "stbl", "edts": try walk(content, depth: depth + 1)
                case "hdlr": if content.count >= 12 { isAudio = content.fourCC(8) == "soun" }
                case "mdhd": if content.count >= 24 { table.timescale = Int(content.be32(content[0] == 1 ? 20 : 12)) }
                case "elst":
                    guard content.count >= 8, content.be32(4) >= 1 else { return }
                    if content[0] == 1, content.count >= 28 {
                        table.edit = (Int64(bitPattern: content.be64(16)), Int64(bitPattern: content.be64(8)))
                    } else if content.count >= 20 {
                        table.edit = (Int64(Int32(bitPattern: content.be32(12))), Int64(content.be32(8)))
                    }
                case "stsd":
                    // One sample entry (an AudioSampleEntry, 28 bytes after its header) with the
                    // box that configures its decoder.
                    guard content.count >= 16 else { return }
                    let entry = UnsafeRawBufferPointer(rebasing: content[8...])
                    let kind = entry.fourCC(4)
                    guard ["mp4a", "Opus", "fLaC", "ac-3", "ec-3"].contains(kind) else {
                        throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                             "MPEG-4 sample entry '\(kind)': the stream parser reads AAC ('mp4a'), Opus ('Opus'), FLAC ('fLaC'), AC-3 ('ac-3') and E-AC-3 ('ec-3')")
                    }
                    let size = min(Int(entry.be32(0)), entry.count)
                    guard size >= 36 else { throw malformedStream("MPEG-4 '\(kind)' entry of \(size) bytes") }
                    table.entry = kind
                    table.channels = Int(entry.be16(24))
                    table.rate = Int(entry.be32(32) >> 16)
                    try boxes(UnsafeRawBufferPointer(rebasing: entry[36 ..< size])) { (type, child) throws(AudioFileError) in
                        switch type {
                        case "esds" where child.count > 4: table.cookie = Array(child[4...])
                        case "dfLa" where child.count > 4: table.cookie = Array(child)
                        case "dOps" where child.count >= 11:
                            // RFC 7845's OpusHead from the big-endian 'dOps' (Opus in ISOBMFF 4.3.2).
                            let skip = UInt16(child[2]) << 8 | UInt16(child[3]), gain = UInt16(child[8]) << 8 | UInt16(child[9])
                            let rate = child.be32(4)
                            table.cookie = Array("OpusHead".utf8) + [1, child[1], UInt8(skip & 0xFF), UInt8(skip >> 8)]
                                + [UInt8(rate & 0xFF), UInt8(rate >> 8 & 0xFF), UInt8(rate >> 16 & 0xFF), UInt8(rate >> 24)]
                                + [UInt8(gain & 0xFF), UInt8(gain >> 8)] + Array(child[10...])
                        case "dac3" where child.count >= 3:
                            // fscod(2) bsid(5) bsmod(3) acmod(3) lfeon(1) ...
                            table.ac3Channels = Self.ac3Channels(mode: Int(child[1] >> 3), lfe: Int(child[1] >> 2))
                        case "dec3" where child.count >= 5:
                            // data_rate(13) num_ind_sub(3), then fscod(2) bsid(5) reserved(1) asvc(1) bsmod(3) acmod(3) lfeon(1) ...
                            table.ac3Channels = Self.ac3Channels(mode: Int(child[3] >> 1), lfe: Int(child[3]))
                        default: break
                        }
                    }
                case "stsz":
                    guard content.count >= 12 else { return }
                    let fixed = Int(content.be32(4))
                    let count = Int(content.be32(8))
                    try checkTableCount(count, of: type)
                    guard fixed > 0 || content.count >= 12 + 4 * count else { throw malformedStream("MPEG-4 'stsz' shorter than its \(count) entries") }
                    sizes = (0 ..< count).map { fixed > 0 ? fixed : Int(content.be32(12 + 4 * $0)) }
                case "stco", "co64":
                    guard content.count >= 8 else { return }
                    let count = Int(content.be32(4))
                    let width = type == "stco" ? 4 : 8
                    try checkTableCount(count, of: type)
                    guard content.count >= 8 + width * count else { throw malformedStream("MPEG-4 '\(type)' shorter than its \(count) entries") }
                    chunkOffsets = (0 ..< count).map { width == 4 ? Int64(content.be32(8 + 4 * $0)) : Int64(bitPattern: content.be64(8 + 8 * $0)) }
                    if let negative = chunkOffsets.first(where: { $0 < 0 }) {
                        throw malformedStream("MPEG-4 '\(type)' chunk offset \(negative): expected 0 or more")
                    }
                case "stsc":
                    guard content.count >= 8 else { return }
                    let count = Int(content.be32(4))
                    try checkTableCount(count, of: type)
                    guard content.count >= 8 + 12 * count else { throw malformedStream("MPEG-4 'stsc' shorter than its \(count) entries") }
                    perChunk = (0 ..< count).map { (Int(content.be32(8 + 12 * $0)), Int(content.be32(12 + 12 * $0))) }
                default: break
                }
            }
        }
        try walk(trak, depth: 0)
        // AAC needs its ES_Descriptor and Opus its head; AC-3 and E-AC-3 need nothing.
        guard isAudio, !table.entry.isEmpty, !table.cookie.isEmpty || table.entry == "ac-3" || table.entry == "ec-3" else { return nil }
        // Sample offsets: chunk by chunk, each chunk's samples back to back ('stsc' runs apply
        // from their first chunk on, in order), never more samples than 'stsz' lists.
        var sample = 0
        var entry = -1
        for (index, chunkOffset) in chunkOffsets.enumerated() where sample < sizes.count {
            let chunk = index + 1
            while entry + 1 < perChunk.count, perChunk[entry + 1].firstChunk <= chunk { entry += 1 }
            let run = entry >= 0 ? min(perChunk[entry].samples, sizes.count - sample) : 0
            var position = chunkOffset
            for _ in 0 ..< run {
                table.samples.append((position, sizes[sample]))
                guard case let (next, false) = position.addingReportingOverflow(Int64(sizes[sample])) else {
                    throw malformedStream("MPEG-4 chunk at byte \(chunkOffset) runs past 2^63")
                }
                position = next
                sample += 1
            }
        }
        return table
    }

    /// A fragment's samples ('traf'/'tfhd'/'trun'), appended to the table.
    private func readFragment(_ moof: UnsafeRawBufferPointer, boxStart: Int64) throws(AudioFileError) {
        try boxes(moof) { (type, traf) throws(AudioFileError) in
            guard type == "traf" else { return }
            var base = boxStart
            var sampleSize = defaultSampleSize
            try boxes(traf) { (type, content) throws(AudioFileError) in
                guard content.count >= 8 else { return }
                let flags = Int(content.be32(0) & 0xFF_FFFF)
                if type == "tfhd" {
                    var cursor = 8
                    if flags & 0x01 != 0, content.count >= cursor + 8 {
                        base = Int64(bitPattern: content.be64(cursor))
                        guard base >= 0 else { throw malformedStream("MPEG-4 'tfhd' base offset \(base): expected 0 or more") }
                        cursor += 8
                    }
                    if flags & 0x02 != 0 { cursor += 4 }
                    if flags & 0x08 != 0 { cursor += 4 }
                    if flags & 0x10 != 0, content.count >= cursor + 4 { sampleSize = Int(content.be32(cursor)) }
                } else if type == "trun" {
                    let count = Int(content.be32(4))
                    try checkTableCount(samples.count + count, of: type)
                    var cursor = 8
                    var position = base
                    if flags & 0x01 != 0 {
                        guard case let (start, false) = base.addingReportingOverflow(Int64(Int32(bitPattern: content.be32(cursor)))), start >= 0 else {
                            throw malformedStream("MPEG-4 'trun' data offset from base \(base) is out of range")
                        }
                        position = start
                        cursor += 4
                    }
                    if flags & 0x04 != 0 { cursor += 4 }
                    let fields = [0x100, 0x200, 0x400, 0x800].filter { flags & $0 != 0 }.count
                    guard content.count >= cursor + 4 * fields * count else { throw malformedStream("MPEG-4 'trun' shorter than its \(count) samples") }
                    for _ in 0 ..< count {
                        var size = sampleSize
                        if flags & 0x100 != 0 { cursor += 4 }
                        if flags & 0x200 != 0 { size = Int(content.be32(cursor)); cursor += 4 }
                        if flags & 0x400 != 0 { cursor += 4 }
                        if flags & 0x800 != 0 { cursor += 4 }
                        samples.append((position, size))
                        guard case let (next, false) = position.addingReportingOverflow(Int64(size)) else {
                            throw malformedStream("MPEG-4 'trun' runs past 2^63 bytes")
                        }
                        position = next
                    }
                }
            }
        }
    }

    /// Refuses a sample table of more than ``StreamLimits/packets`` entries before any is read.
    private func checkTableCount(_ count: Int, of type: String) throws(AudioFileError) {
        guard count <= StreamLimits.packets else {
            throw malformedStream("MPEG-4 '\(type)' lists \(count) entries: expected at most \(StreamLimits.packets)")
        }
    }

    func seek(toPacket packet: Int64, info: AudioStreamInfo) throws(AudioFileError) -> (offset: Int64, estimated: Bool)? {
        guard haveTable, !samples.isEmpty else { return nil }
        nextSample = Int(min(packet, Int64(samples.count - 1)))
        state = .data
        return (samples[nextSample].offset, false)
    }
}
