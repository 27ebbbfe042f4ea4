import AQCore
import AQMedia
import CAudioTypes
import CFFmpeg
import Foundation
import Glibc

/// Writes AAC or Apple Lossless packets to an MPEG-4 file (`.m4a` 'm4af' through FFmpeg's ipod
/// muxer, `.mp4` 'mp4f' through its mp4 muxer).
///
/// While packets arrive the file is fragmented (an empty 'moov' first, then a 'moof'+'mdat'
/// fragment for each ``writePackets(_:byteCount:descriptions:startPacket:)`` call, which a
/// recording queue makes at least every half second), so a recording killed mid-way is readable
/// up to its last complete fragment. When a write fails (disk full) the file is cut back to the
/// end of its last complete fragment and ``packetCount`` to the packets in it, so the file stays
/// readable and the count says what it holds (issue 9, item 4). FFmpeg 5.1 writes no edit list
/// into fragmented files, so ``close()`` rewrites the packets into a plain MPEG-4 file (one 'moov' with an edit list) and renames it
/// over the fragmented one: priming is the first packet's timestamp −priming (an edit list
/// that players and ffmpeg trim) and the last packet's duration leaves out the remainder.
/// The last packet is held back until ``close()`` so its duration can honour the remainder.
public final class MPEG4FileWriter: PacketFileWriting {
    public let fileType: UInt32
    public let dataFormat: AudioStreamBasicDescription
    public private(set) var packetCount: Int64 = 0
    public private(set) var byteCount: Int64 = 0
    public private(set) var maximumPacketSize = 0
    public private(set) var magicCookie: [UInt8]
    public var packetTable: PacketTable?
    private let path: String
    /// The codec's stream parameters: AAC's AudioSpecificConfig or ALAC's 'alac' atom.
    private var codecID: AVCodecID
    private var extradata: [UInt8]
    private let sampleRate: Int
    private let channelCount: Int
    private let framesPerPacket: Int
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var headerWritten = false
    private var heldBack: [UInt8]?
    private var closed = false
    /// The size of the file and the packets muxed when the last fragment reached the disk.
    private var committedSize: Int64 = 0
    private var committedPackets: Int64 = 0
    /// Set when a write failed: the file was cut back and is left fragmented.
    private var failed = false

    private let fragmented: Bool
    /// The file's tags (``describeStart(_:frame:originated:)``), written with the header.
    private var tags: [(key: String, value: String)] = []

    public convenience init(path: String, fileType: UInt32, format: AudioStreamBasicDescription, eraseExisting: Bool) throws(AudioFileError) {
        try self.init(path: path, fileType: fileType, format: format, eraseExisting: eraseExisting, fragmented: true)
    }

    init(path: String, fileType: UInt32, format: AudioStreamBasicDescription, eraseExisting: Bool, fragmented: Bool) throws(AudioFileError) {
        try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try CodecLibraries.require() }
        self.fragmented = fragmented
        switch format.mFormatID {
        case AudioFormatValues.mpeg4AAC:
            let completed = try CompressedFormatValues.completedAAC(format)
            let config = try AudioSpecificConfig(objectType: Int(completed.mFormatFlags), sampleRate: Int(completed.mSampleRate),
                                                 channelCount: Int(completed.mChannelsPerFrame))
            dataFormat = completed
            codecID = AV_CODEC_ID_AAC
            extradata = config.bytes
            framesPerPacket = 1024
            magicCookie = ElementaryStreamDescriptor(audioSpecificConfig: config, bufferSize: UInt32(CompressedFormatValues.aacMaximumPacketBytes(channels: Int(config.channelCount)))).bytes
        case AudioFormatValues.appleLossless:
            guard format.mSampleRate.isFinite, format.mSampleRate >= 1, format.mSampleRate <= 1_536_000, (1 ... 8).contains(format.mChannelsPerFrame) else {
                throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                       "ALAC at \(format.mSampleRate) Hz with \(format.mChannelsPerFrame) channels: expected a rate and 1 ... 8 channels")
            }
            var completed = format
            if completed.mFramesPerPacket == 0 { completed.mFramesPerPacket = UInt32(ALAC.framesPerPacket) }
            dataFormat = completed
            codecID = AV_CODEC_ID_ALAC
            extradata = []   // from the magic cookie, which must be set before the first packet
            framesPerPacket = Int(completed.mFramesPerPacket)
            magicCookie = []
        default:
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                   "MPEG-4 files hold AAC or Apple Lossless here; the format is \(fourCharacterCode(format.mFormatID))")
        }
        sampleRate = Int(dataFormat.mSampleRate)
        channelCount = Int(dataFormat.mChannelsPerFrame)
        self.fileType = fileType
        self.path = path
        // Create (or refuse) the file now, as the other writers do.
        _ = try WritableFile(path: path, eraseExisting: eraseExisting)
    }

    deinit {
        if let context {
            if context.pointee.pb != nil { _ = aqff_avio_closep(&context.pointee.pb) }
            aqff_avformat_free_context(context)
        }
    }

    /// Sets the stream's codec configuration from a cookie (AAC: an ES_Descriptor; ALAC: the
    /// ALACSpecificConfig); before the first packet only.
    public func setMagicCookie(_ cookie: [UInt8]) throws(AudioFileError) {
        let parameters = codecID == AV_CODEC_ID_ALAC ? try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try ALAC.extradata(fromAppleCookie: cookie) }
                                                     : try ElementaryStreamDescriptor(parsing: cookie).audioSpecificConfig.bytes
        if headerWritten {
            guard parameters == extradata else {
                throw AudioFileError(AudioFileError.fileUnsupportedPropertyCode, "\(path): the magic cookie cannot change after packets were written")
            }
            return
        }
        extradata = parameters
        magicCookie = cookie
    }

    /// Tags the file with ``RecordingMetadata/mpeg4Tags(originated:)`` (title, album, artist,
    /// comment, grouping, date); before the first packet.
    public func describeStart(_ metadata: RecordingMetadata, frame: UInt64, originated: Date) throws(AudioFileError) {
        guard !headerWritten else {
            throw AudioFileError(AudioFileError.fileUnsupportedPropertyCode, "\(path): an MPEG-4 file's tags go in before its first packet")
        }
        tags = metadata.mpeg4Tags(originated: originated)
    }

    private func failure(_ what: String, _ code: Int32) -> AudioFileError {
        AudioFileError(AudioFileError.fileUnspecifiedCode, "\(path): \(what): " + CodecLibraries.message(for: code))
    }

    private func writeHeader() throws(AudioFileError) {
        var context: UnsafeMutablePointer<AVFormatContext>?
        let muxer = fileType == AudioFileTypeValues.m4a ? "ipod" : "mp4"
        let allocated = FilePath.withCString(path) { aqff_avformat_alloc_output_context2(&context, nil, muxer, $0) }
        guard allocated >= 0, let context else { throw failure("cannot set up the \(muxer) muxer", allocated) }
        self.context = context
        guard let stream = aqff_avformat_new_stream(context, nil) else { throw failure("cannot add a stream", -1) }
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        guard !extradata.isEmpty else {
            throw AudioFileError(AudioFileError.fileUnsupportedPropertyCode,
                                   "\(path): an Apple Lossless file needs its magic cookie (kAudioFilePropertyMagicCookieData) before the first packet")
        }
        parameters.pointee.codec_id = codecID
        parameters.pointee.sample_rate = Int32(sampleRate)
        parameters.pointee.frame_size = Int32(framesPerPacket)
        parameters.pointee.initial_padding = primingFrames
        if codecID == AV_CODEC_ID_ALAC {
            parameters.pointee.bits_per_raw_sample = Int32(ALAC.bitDepth(formatFlag: dataFormat.mFormatFlags))
        }
        aqff_av_channel_layout_default(&parameters.pointee.ch_layout, Int32(channelCount))
        let buffer = aqff_av_mallocz(extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))!.assumingMemoryBound(to: UInt8.self)
        for (index, byte) in extradata.enumerated() { buffer[index] = byte }
        parameters.pointee.extradata = buffer
        parameters.pointee.extradata_size = Int32(extradata.count)
        stream.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        for tag in tags { _ = aqff_av_dict_set(&context.pointee.metadata, tag.key, tag.value, 0) }
        let opened = FilePath.withCString(path) { aqff_avio_open(&context.pointee.pb, $0, AVIO_FLAG_WRITE) }
        guard opened >= 0 else { throw failure("cannot open for writing", opened) }
        var options: OpaquePointer?
        // The edit list (priming, length) is in the movie's timescale, 1000 by default: at that
        // resolution a length of 93440 frames comes back as 93408. The sample rate keeps it exact.
        _ = aqff_av_dict_set(&options, "movie_timescale", String(sampleRate), 0)
        if fragmented {
            // frag_custom: a fragment is cut where writePackets flushes, never in between.
            _ = aqff_av_dict_set(&options, "movflags", "empty_moov+default_base_moof+frag_discont+frag_custom", 0)
        }
        let written = aqff_avformat_write_header(context, &options)
        aqff_av_dict_free(&options)
        guard written >= 0 else { throw failure("cannot write the header", written) }
        headerWritten = true
    }

    public func writePackets(_ data: UnsafeRawPointer, byteCount: Int, descriptions: UnsafeBufferPointer<AudioStreamPacketDescription>,
                             startPacket: Int64) throws(AudioFileError) {
        try validatedPackets(descriptions, byteCount: byteCount, startPacket: startPacket, expected: packetCount, path: path)
        guard !failed else { throw AudioFileError(AudioFileError.fileNotOpenCode, "\(path): writing stopped after an earlier failure") }
        do throws(AudioFileError) {
            if !headerWritten { try writeHeader() }
            for description in descriptions {
                let size = Int(description.mDataByteSize)
                let bytes = Array(UnsafeRawBufferPointer(start: data + Int(description.mStartOffset), count: size))
                if let previous = heldBack { try mux(previous, duration: framesPerPacket) }
                heldBack = bytes
                packetCount += 1
                self.byteCount += Int64(size)
                maximumPacketSize = max(maximumPacketSize, size)
            }
            try flushFragment()
        } catch {
            abandon()
            throw error
        }
    }

    /// Writes the packets muxed so far as one fragment and makes sure it reached the file.
    private func flushFragment() throws(AudioFileError) {
        guard let context, let io = context.pointee.pb else { return }
        if fragmented && muxedPackets > committedPackets {
            let flushed = aqff_av_write_frame(context, nil)
            guard flushed >= 0 else { throw failure("cannot write a fragment", flushed) }
        }
        aqff_avio_flush(io)
        guard io.pointee.error >= 0 else { throw failure("writing failed after \(committedPackets) packets", io.pointee.error) }
        var status = stat()
        if FilePath.withCString(path, { stat($0, &status) }) == 0 { committedSize = Int64(status.st_size) }
        committedPackets = muxedPackets
    }

    /// After a failed write: closes the file and cuts it back to its last complete fragment,
    /// so it stays readable, with ``packetCount`` the packets it holds.
    private func abandon() {
        failed = true
        if let context {
            if context.pointee.pb != nil { _ = aqff_avio_closep(&context.pointee.pb) }
            aqff_avformat_free_context(context)
            self.context = nil
        }
        if fragmented && committedSize > 0 { _ = FilePath.withCString(path) { truncate($0, off_t(committedSize)) } }   // -1: complete, keep
        packetCount = committedPackets
        heldBack = nil
    }

    private var muxedPackets: Int64 = 0

    /// False once a failed write left the file fragmented: its empty 'moov' has no edit list.
    public var marksPriming: Bool { !(failed && fragmented) }

    /// The packet table's priming, else aqjack's AAC encoder delay (as the CAF writer assumes);
    /// ALAC has none.
    private var primingFrames: Int32 {
        packetTable?.primingFrames ?? (codecID == AV_CODEC_ID_AAC ? Int32(AACEncoder.defaultPrimingFrames) : 0)
    }

    private func mux(_ bytes: [UInt8], duration: Int) throws(AudioFileError) {
        guard let context, let packet = aqff_av_packet_alloc() else { return }
        var owned: UnsafeMutablePointer<AVPacket>? = packet
        defer { aqff_av_packet_free(&owned) }
        guard aqff_av_new_packet(packet, Int32(bytes.count)) >= 0 else { throw failure("out of memory", -1) }
        bytes.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: bytes.count) }
        let time = muxedPackets * Int64(framesPerPacket) - Int64(primingFrames)
        packet.pointee.pts = time
        packet.pointee.dts = time
        packet.pointee.duration = Int64(duration)
        packet.pointee.stream_index = 0
        packet.pointee.flags = AV_PKT_FLAG_KEY
        let written = aqff_av_write_frame(context, packet)
        guard written >= 0 else { throw failure("cannot write packet \(muxedPackets)", written) }
        muxedPackets += 1
    }

    public func close() throws(AudioFileError) {
        guard !closed else { return }
        closed = true
        // After a failure the file stays as cut back: fragmented, complete to its last fragment.
        guard !failed else { return }
        do throws(AudioFileError) {
            if !headerWritten { try writeHeader() }
            if let last = heldBack {
                try mux(last, duration: max(1, framesPerPacket - Int(packetTable?.remainderFrames ?? 0)))
                heldBack = nil
            }
            guard let context else { return }
            let trailer = aqff_av_write_trailer(context)
            let error = context.pointee.pb?.pointee.error ?? 0
            _ = aqff_avio_closep(&context.pointee.pb)
            aqff_avformat_free_context(context)
            self.context = nil
            guard trailer >= 0, error >= 0 else { throw failure("cannot finish the file", trailer < 0 ? trailer : error) }
            // The fragmented file is complete now; a rewrite that fails (no room for the copy)
            // leaves it as it is.
            if fragmented {
                committedPackets = packetCount
                committedSize = -1
                try rewriteUnfragmented()
            }
        } catch {
            // Disk full at the end: keep the fragmented file as far as it reached the disk.
            abandon()
            throw error
        }
    }

    /// Copies the packets into a plain MPEG-4 file beside this one, then renames it over.
    private func rewriteUnfragmented() throws(AudioFileError) {
        let reader = try MPEG4FileReader(path: path)
        let temporary = path + ".aqjack-partial"
        let plain = try MPEG4FileWriter(path: temporary, fileType: fileType, format: dataFormat, eraseExisting: true, fragmented: false)
        do throws(AudioFileError) {
            try plain.setMagicCookie(magicCookie)
            plain.packetTable = packetTable
            plain.tags = tags
            let capacity = 64 * max(CompressedFormatValues.aacMaximumPacketBytes(channels: Int(channelCount)), Int(reader.maximumPacketSize))
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            let descriptions = UnsafeMutablePointer<AudioStreamPacketDescription>.allocate(capacity: 64)
            defer {
                buffer.deallocate()
                descriptions.deallocate()
            }
            var next: Int64 = 0
            while true {
                let read = try reader.readPackets(startPacket: next, packetCount: 64, into: buffer, capacity: capacity, descriptions: descriptions)
                if read.packets == 0 { break }
                try plain.writePackets(buffer, byteCount: read.bytes, descriptions: UnsafeBufferPointer(start: descriptions, count: read.packets),
                                       startPacket: next)
                next += Int64(read.packets)
            }
            try plain.close()
            guard FilePath.withCString(temporary, { from in FilePath.withCString(path) { rename(from, $0) } }) == 0 else {
                throw AudioFileError(AudioFileError.fileUnspecifiedCode, "cannot rename \(temporary) to \(path): \(SystemError.describe(errno))")
            }
        } catch {
            _ = FilePath.withCString(temporary) { unlink($0) }
            throw error
        }
    }
}

/// Reads the first audio track of an MPEG-4 file whose codec Apple's AudioFile reads there as
/// packets (AAC, Apple Lossless, FLAC, Opus, AC-3, E-AC-3, MPEG Layer I/II/III) through
/// libavformat: indexes every packet's position and size once, then reads packet bytes straight
/// from the file. Formats and magic cookies as the MPEG-4 stream parser gives them (AAC: the
/// ES_Descriptor; FLAC: the 'dfLa' payload; Opus: an OpusHead; the others none). Priming comes
/// from the demuxer's skip-samples (the edit list or a negative first timestamp), less what the
/// decoder drops itself (``PacketDecoders/framesSkippedByDecoder(_:cookie:)``: Opus's pre-skip);
/// the valid frames from the packets' durations, which FLAC's packets of varying length also
/// carry in their descriptions (`mVariableFramesInPacket`).
public final class MPEG4FileReader: PacketFileReading {
    public let fileType: UInt32
    public let dataFormat: AudioStreamBasicDescription
    public let magicCookie: [UInt8]
    public let packetTable: PacketTable?
    public var packetCount: Int64 { Int64(index.count) }
    public var byteCount: Int64 { index.totalBytes }
    public var maximumPacketSize: Int { index.maximumSize }
    private let file: ReadableFile
    private let index: PacketIndex
    /// Each packet's frames, when the format's packets vary in length (mFramesPerPacket 0).
    private let packetFrames: [UInt32]?

    /// The codecs read as packets, and what the error for a file with none of them names.
    static let packetCodecs: [AVCodecID] = [AV_CODEC_ID_AAC, AV_CODEC_ID_ALAC, AV_CODEC_ID_FLAC, AV_CODEC_ID_OPUS, AV_CODEC_ID_AC3, AV_CODEC_ID_EAC3,
                                            AV_CODEC_ID_MP3, AV_CODEC_ID_MP2, AV_CODEC_ID_MP1]
    static let packetCodecNames = "AAC, Apple Lossless, FLAC, Opus, AC-3, E-AC-3 or MPEG audio"

    public init(path: String) throws(AudioFileError) {
        try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try CodecLibraries.require() }
        file = try ReadableFile(path: path)
        var context: UnsafeMutablePointer<AVFormatContext>?
        let opened = FilePath.withCString(path) { aqff_avformat_open_input(&context, $0, nil, nil) }
        guard opened >= 0, let context else {
            throw AudioFileError(AudioFileError.fileInvalidFileCode, "\(path) is not a readable MPEG-4 file: " + CodecLibraries.message(for: opened))
        }
        var owned: UnsafeMutablePointer<AVFormatContext>? = context
        defer { aqff_avformat_close_input(&owned) }
        _ = aqff_avformat_find_stream_info(context, nil)
        var track = -1
        for number in 0 ..< Int(context.pointee.nb_streams) {
            if let stream = context.pointee.streams[number], Self.packetCodecs.contains(stream.pointee.codecpar.pointee.codec_id) {
                track = number
                break
            }
        }
        guard track >= 0, let stream = context.pointee.streams[track] else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode, "\(path) has no \(Self.packetCodecNames) track")
        }
        let parameters = stream.pointee.codecpar.pointee
        let codecBytes = parameters.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(max(0, parameters.extradata_size)))) } ?? []
        let (format, cookie) = try Self.describe(parameters, codecBytes: codecBytes, path: path)
        fileType = file.read(at: 8, count: 4).map { String(decoding: $0, as: UTF8.self) } == "M4A " ? AudioFileTypeValues.m4a : AudioFileTypeValues.mpeg4
        guard let packet = aqff_av_packet_alloc() else { throw AudioFileError(AudioFileError.fileUnspecifiedCode, "out of memory") }
        var ownedPacket: UnsafeMutablePointer<AVPacket>? = packet
        defer { aqff_av_packet_free(&ownedPacket) }
        var index = PacketIndex()
        var frames: [UInt32] = []
        var priming: Int32 = 0
        var durations: Int64 = 0
        var first = true
        // A packet's frames when the file gives no duration: the format's, else FLAC's largest.
        let nominal = Int64(format.mFramesPerPacket > 0 ? format.mFramesPerPacket : 4096)
        while aqff_av_read_frame(context, packet) >= 0 {
            defer { aqff_av_packet_unref(packet) }
            guard Int(packet.pointee.stream_index) == track else { continue }
            guard packet.pointee.pos >= 0 else {
                throw AudioFileError(AudioFileError.fileInvalidFileCode, "\(path): packet \(index.count) has no file position")
            }
            if first {
                var size = 0
                if let skip = aqff_av_packet_get_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, &size), size >= 4 {
                    priming = Int32(clamping: UInt32(skip[0]) | UInt32(skip[1]) << 8 | UInt32(skip[2]) << 16 | UInt32(skip[3]) << 24)
                } else if packet.pointee.pts < 0 && packet.pointee.pts != Int64.min {
                    priming = Int32(clamping: -packet.pointee.pts)
                }
                first = false
            }
            index.append(offset: packet.pointee.pos, size: Int(packet.pointee.size))
            // A packet's duration from the file, at most 2^32 - 1 frames, so the sum cannot overflow.
            let duration = packet.pointee.duration > 0 ? min(packet.pointee.duration, Int64(UInt32.max)) : nominal
            durations += duration
            if format.mFramesPerPacket == 0 { frames.append(UInt32(duration)) }
        }
        self.index = index
        packetFrames = format.mFramesPerPacket == 0 ? frames : nil
        // The frames the decoder drops itself (Opus's pre-skip) are not there to trim or count.
        let skipped = Int64(PacketDecoders.framesSkippedByDecoder(format.mFormatID, cookie: cookie))
        priming = Int32(clamping: max(0, Int64(priming) - skipped))
        durations -= skipped
        let total = (format.mFramesPerPacket > 0 ? Int64(index.count) * Int64(format.mFramesPerPacket) : durations + skipped) - skipped
        let valid = max(0, min(total - Int64(priming), durations - Int64(priming)))
        packetTable = PacketTable(validFrameCount: valid, primingFrames: priming, remainderFrames: Int32(clamping: max(0, total - valid - Int64(priming))))
        dataFormat = format
        magicCookie = cookie
    }

    /// The track's stream description and magic cookie, from libavformat's codec parameters
    /// and extradata (`codecBytes`).
    private static func describe(_ parameters: AVCodecParameters, codecBytes: [UInt8],
                                 path: String) throws(AudioFileError) -> (AudioStreamBasicDescription, [UInt8]) {
        let rate = Int(parameters.sample_rate), channels = Int(parameters.ch_layout.nb_channels)
        func track(_ entry: String, cookie: [UInt8]) -> MPEG4StreamParser.TrackTable {
            var table = MPEG4StreamParser.TrackTable()
            table.entry = entry
            table.cookie = cookie
            table.rate = rate
            table.channels = channels
            return table
        }
        switch parameters.codec_id {
        case AV_CODEC_ID_ALAC:
            guard codecBytes.count >= 24 else {
                throw AudioFileError(AudioFileError.fileInvalidFileCode, "\(path): the ALAC track has no codec configuration")
            }
            let cookie = ALAC.appleCookie(fromExtradata: codecBytes)
            let depth = Int(cookie.count >= 6 ? cookie[5] : 16)
            let frames = parameters.frame_size > 0 ? Int(parameters.frame_size) : ALAC.framesPerPacket
            return (CompressedFormatValues.alacDescription(sampleRate: Double(rate), channelCount: channels, bitDepth: depth, framesPerPacket: frames), cookie)
        case AV_CODEC_ID_AAC:
            guard codecBytes.count >= 2 else {
                throw AudioFileError(AudioFileError.fileInvalidFileCode, "\(path): the AAC track has no codec configuration")
            }
            let config = try AudioSpecificConfig(parsing: codecBytes)
            let cookie = ElementaryStreamDescriptor(audioSpecificConfig: config, averageBitRate: UInt32(clamping: parameters.bit_rate),
                                                    bufferSize: UInt32(CompressedFormatValues.aacMaximumPacketBytes(channels: Int(config.channelCount)))).bytes
            return (CompressedFormatValues.aacDescription(config), cookie)
        case AV_CODEC_ID_FLAC:
            // libavformat gives STREAMINFO; the cookie is the 'dfLa' payload, as in the file:
            // version and flags, then STREAMINFO as the last metadata block.
            guard codecBytes.count >= 34 else {
                throw AudioFileError(AudioFileError.fileInvalidFileCode, "\(path): the FLAC track has no STREAMINFO")
            }
            let cookie: [UInt8] = [0, 0, 0, 0, 0x80, 0, 0, 34] + codecBytes.prefix(34)
            return (try MPEG4StreamParser.format(of: track("fLaC", cookie: cookie)), cookie)
        case AV_CODEC_ID_OPUS:
            guard codecBytes.starts(with: Array("OpusHead".utf8)), codecBytes.count >= 19 else {
                throw AudioFileError(AudioFileError.fileInvalidFileCode, "\(path): the Opus track has no Opus header")
            }
            return (try MPEG4StreamParser.format(of: track("Opus", cookie: codecBytes)), codecBytes)
        case AV_CODEC_ID_AC3, AV_CODEC_ID_EAC3:
            return (try MPEG4StreamParser.format(of: track(parameters.codec_id == AV_CODEC_ID_AC3 ? "ac-3" : "ec-3", cookie: [])), [])
        default:
            // MPEG audio: Layer I 384 frames a packet; II 1152; III 1152 (MPEG-1) or 576.
            let id = parameters.codec_id == AV_CODEC_ID_MP1 ? AudioFormatValues.mpegLayer1
                : parameters.codec_id == AV_CODEC_ID_MP2 ? AudioFormatValues.mpegLayer2 : AudioFormatValues.mpegLayer3
            let frames = parameters.frame_size > 0 ? Int(parameters.frame_size)
                : id == AudioFormatValues.mpegLayer1 ? 384 : id == AudioFormatValues.mpegLayer3 && rate < 32000 ? 576 : 1152
            return (AudioStreamBasicDescription(mSampleRate: Double(rate), mFormatID: id, mFormatFlags: 0, mBytesPerPacket: 0,
                                                mFramesPerPacket: UInt32(frames), mBytesPerFrame: 0, mChannelsPerFrame: UInt32(channels),
                                                mBitsPerChannel: 0, mReserved: 0), [])
        }
    }

    public func readPackets(startPacket: Int64, packetCount: Int, into buffer: UnsafeMutableRawPointer, capacity: Int,
                            descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?) throws(AudioFileError) -> (packets: Int, bytes: Int) {
        try copyPackets(from: file, index: index, startPacket: startPacket, packetCount: packetCount, into: buffer, capacity: capacity,
                        descriptions: descriptions, frames: packetFrames)
    }

    public func close() {}
}
