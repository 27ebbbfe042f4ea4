import AQCore
import AQMedia
import CAudioTypes
import Glibc

/// afconvert's job, as `aqjack convert` runs it: any file aqjack reads (linear PCM, FLAC, ALAC,
/// Ogg, MP3 ... through libsndfile; AAC in ADTS, CAF or MPEG-4) to linear PCM (WAVE, AIFF,
/// AIFC, CAF, W64, RF64), FLAC, ALAC-in-CAF or AAC (ADTS, CAF, M4A, MP4), with optional
/// sample-rate (libsamplerate) and channel-count conversion. Frames travel as Float, which is
/// exact for 16- and 24-bit samples, so lossless round trips are bit-exact. AAC input is
/// trimmed by its packet table (priming and remainder), so decoded audio lines up with the
/// original frame for frame.
public struct FileConversion {
    /// What the output should be; nil fields follow the input (or the file type's default).
    public struct Request {
        public var inputPath: String
        public var outputPath: String
        public var fileType: UInt32?
        /// 'lpcm', 'aac ', 'alac' or 'flac'.
        public var codec: UInt32?
        public var bitRate: Int?
        public var quality: Int?
        public var sampleRate: Double?
        public var channelCount: Int?
        public var bitDepth: Int?
        /// Apple's 0 ... 0x7F sample-rate converter quality (≥ 0x60 best, 0x40 medium, 0x20
        /// fastest, below linear: ``Resampler/Quality`` says what each is in each engine).
        public var sampleRateConverterQuality: UInt32 = 0x7F
        /// The library that converts rates.
        public var resampler = Resampler.Engine.soxr
        public var eraseExisting = false
        /// Processing after the rate and channel conversion (LV2 plugins: `--lv2`), in order, at
        /// the output's rate and channel count; their latency is compensated (the output's
        /// first frame is the input's first frame, processed, and none is lost at the end).
        public var stages: [any AudioProcessingStage] = []
        public init(inputPath: String, outputPath: String) {
            self.inputPath = inputPath
            self.outputPath = outputPath
        }
    }

    /// What was written.
    public struct Summary: Sendable {
        public var inputFrames: Int64
        public var outputFrames: Int64
        public var outputFormat: AudioStreamBasicDescription
        public var fileType: UInt32
        public var packets: Int64
        public var primingFrames: Int
        public var remainderFrames: Int
    }

    /// The file type an extension names (afconvert's defaults; ``FileTypes``), or nil.
    public static func fileType(forExtension ext: String) -> UInt32? { FileTypes.entry(forExtension: ext)?.typeID }

    /// The codec a file type takes when none is asked for (``FileTypes``).
    static func defaultCodec(for fileType: UInt32) -> UInt32 { FileTypes.entry(fileType)?.defaultCodec ?? AudioFormatValues.linearPCM }

    public let request: Request
    public init(_ request: Request) { self.request = request }

    /// Converts; `progress` gets the fraction of input read (0 ... 1) now and then, and
    /// `isCancelled` is asked as often: when it answers true the conversion is abandoned with
    /// 'wht?' ("interrupted"), leaving no output.
    ///
    /// - Throws: ``AudioFileError`` naming the file and what was wrong (unreadable input, a
    ///   codec the file type cannot hold, an existing output without `eraseExisting`).
    ///
    /// The output is written to a hidden temporary file in the output's folder and renamed over
    /// the output only when the conversion succeeded, so a failed conversion leaves no partial
    /// file and an existing output untouched; an output that is the input file itself (same
    /// path, hard link or symbolic link) is refused before anything is written (issue 9,
    /// items 1 and 5).
    public func run(progress: (Double) -> Void = { _ in }, isCancelled: () -> Bool = { false }) throws(AudioFileError) -> Summary {
        let source = try FrameSource.open(request.inputPath)
        let finalPath = request.outputPath
        if OutputPath.sameFile(request.inputPath, finalPath) {
            throw AudioFileError(AudioFileError.filePermissionsCode,
                                   "the output '\(finalPath)' is the input file '\(request.inputPath)': write to another file (the input was left untouched)")
        }
        try OutputPath.checkCreatable(finalPath, eraseExisting: request.eraseExisting)
        let name = String(finalPath.split(separator: "/").last ?? "")
        let ext = name.contains(".") ? String(name.split(separator: ".").last ?? "") : ""
        let temporary = OutputPath.directory(of: finalPath) + "/." + name + ".aqjack-\(getpid()).partial" + (ext.isEmpty ? "" : "." + ext)
        var staged = request
        staged.outputPath = temporary
        staged.eraseExisting = true
        do throws(AudioFileError) {
            let summary = try FileConversion(staged).convert(source, fileExtension: ext, progress: progress, isCancelled: isCancelled)
            guard FilePath.withCString(temporary, { from in FilePath.withCString(finalPath) { rename(from, $0) } }) == 0 else {
                throw AudioFileError(AudioFileError.fileUnspecifiedCode, "cannot move the converted file into place as '\(finalPath)': \(SystemError.describe(errno))")
            }
            return summary
        } catch {
            let started = FilePath.withCString(temporary) { unlink($0) } == 0
            throw AudioFileError(error.status, error.message.replacing(temporary, with: finalPath)
                                   + (started ? " (the conversion was abandoned: its partial output was removed)" : ""))
        }
    }

    private func convert(_ source: FrameSource, fileExtension ext: String, progress: (Double) -> Void,
                         isCancelled: () -> Bool) throws(AudioFileError) -> Summary {
        guard let fileType = request.fileType ?? Self.fileType(forExtension: ext) else {
            throw AudioFileError(AudioFileError.fileUnsupportedTypeCode,
                                   "cannot tell the output file type from '.\(ext)': use -f (\(FileTypes.typeIDList)) or one of \(FileTypes.extensionList(prefix: "."))")
        }
        let codec = request.codec ?? Self.defaultCodec(for: fileType)
        let rate = request.sampleRate ?? source.sampleRate
        let channels = request.channelCount ?? source.channelCount
        guard rate >= 1, (1 ... 1024).contains(channels) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode, "output rate \(rate) Hz and \(channels) channels: expected a rate ≥ 1 Hz and 1 ... 1024 channels")
        }
        // Float at the output rate and channel count: the converter does SRC and channel mapping.
        let floatOut = CompressedFormatValues.floatPCM(sampleRate: rate, channelCount: channels)
        let sink = try FrameSink.create(request: request, fileType: fileType, codec: codec, format: floatOut,
                                        sourceBitDepth: source.bitDepth)
        let mapper = try inDomain(AudioFileError.self) { () throws(AudioConverterError) in
            try FormatConverter(from: CompressedFormatValues.floatPCM(sampleRate: source.sampleRate, channelCount: source.channelCount), to: floatOut)
        }
        mapper.sampleRateConverterQuality = request.sampleRateConverterQuality
        mapper.resamplerEngine = request.resampler
        let chunk = 8192
        var input = [Float](repeating: 0, count: chunk * source.channelCount)
        var output = [Float](repeating: 0, count: 4 * chunk * channels + 64 * channels)
        var inputFrames: Int64 = 0
        var stages = CompensatedStages(request.stages, channelCount: channels)
        func drain() throws(AudioFileError) {
            while mapper.availableFrames > 0 {
                let frames = output.withUnsafeMutableBytes { mapper.pullFrames(into: $0.baseAddress!, maximumFrames: $0.count / (4 * channels)) }
                try output.withUnsafeMutableBufferPointer { (floats) throws(AudioFileError) in
                    let (offset, count) = stages.process(floats.baseAddress!, frameCount: frames)
                    if count > 0 { try sink.write(floats.baseAddress! + offset * channels, frameCount: count) }
                }
            }
        }
        while true {
            let frames = try input.withUnsafeMutableBufferPointer { (floats) throws(AudioFileError) in
                try source.read(into: floats.baseAddress!, maximumFrames: chunk)
            }
            if frames == 0 { break }
            inputFrames += Int64(frames)
            try input.withUnsafeBufferPointer { (floats) throws(AudioFileError) in
                try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try mapper.push(frames: UnsafeRawPointer(floats.baseAddress!), frameCount: frames) }
            }
            try drain()
            if source.frameCount > 0 { progress(min(1, Double(inputFrames) / Double(source.frameCount))) }
            if isCancelled() {
                throw AudioFileError(AudioFileError.fileUnspecifiedCode, "interrupted after \(inputFrames) of \(source.frameCount) input frames")
            }
        }
        try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try mapper.finish() }
        try drain()
        try stages.finish { (floats, count) throws(AudioFileError) in try sink.write(floats, frameCount: count) }
        let written = try sink.finish()
        progress(1)
        return Summary(inputFrames: inputFrames, outputFrames: written.frames, outputFormat: written.format, fileType: fileType,
                       packets: written.packets, primingFrames: written.priming, remainderFrames: written.remainder)
    }
}

/// Interleaved Float frames from any file aqjack reads: libsndfile's formats, or AAC packets
/// decoded and trimmed by the packet table (priming and remainder dropped), so the frames are
/// exactly the audio. What `aqjack convert` and `aqjack play` read. One thread at a time.
public final class FrameSource {
    public let path: String
    public let sampleRate: Double
    public let channelCount: Int
    /// Frames of audio: exact for PCM, the packet table's for AAC.
    public let frameCount: Int64
    /// Bits of the stored samples when they are integers (PCM, FLAC, ALAC), else nil.
    public let bitDepth: Int?
    private let pcm: AudioFileReader?
    private let packets: (any PacketFileReading)?
    private let decoder: (any PacketDecoding)?
    private var nextFrame: Int64 = 0
    private var nextPacket: Int64 = 0
    /// Decoded frames waiting, and how many leading/trailing frames still to drop.
    private var decoded: [Float] = []
    private var decodedRead = 0
    private var skip: Int
    private var remaining: Int64

    private init(path: String, pcm: AudioFileReader?, packets: (any PacketFileReading)?, decoder: (any PacketDecoding)?) {
        self.path = path
        self.pcm = pcm
        self.packets = packets
        self.decoder = decoder
        if let pcm {
            sampleRate = pcm.dataFormat.mSampleRate
            channelCount = pcm.layout.channelCount
            frameCount = pcm.packetCount
            bitDepth = pcm.storedBitDepth
            skip = 0
            remaining = pcm.packetCount
        } else {
            let packets = packets!
            sampleRate = packets.dataFormat.mSampleRate
            channelCount = Int(packets.dataFormat.mChannelsPerFrame)
            frameCount = packets.frameCount
            bitDepth = packets.dataFormat.mFormatID == AudioFormatValues.appleLossless ? ALAC.bitDepth(formatFlag: packets.dataFormat.mFormatFlags) : nil
            skip = max(0, Int(packets.packetTable?.primingFrames ?? 0))
            remaining = packets.frameCount
        }
    }

    /// Opens `path`; throws ``AudioFileError`` naming the file and what is wrong with it.
    public static func open(_ path: String) throws(AudioFileError) -> FrameSource {
        try reading(AudioFile.open(path: path), path: path)
    }

    /// Frames of `file`, opened for reading (ExtAudioFileWrapAudioFileID); `path` names it in
    /// errors. Reading moves through the file from its first frame, whatever was read before.
    public static func reading(_ file: AudioFile, path: String) throws(AudioFileError) -> FrameSource {
        guard !file.isWritable else {
            throw AudioFileError(AudioFileError.filePermissionsCode, "'\(path)' is open for writing: expected a file opened for reading")
        }
        if let packets = file.packetReader {
            let format = packets.dataFormat
            do throws(AudioFileError) {
                let decoder = try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try PacketDecoders.decoder(for: format, cookie: packets.magicCookie) }
                return FrameSource(path: path, pcm: nil, packets: packets, decoder: decoder)
            } catch {
                throw AudioFileError(AudioFileError.fileInvalidFileCode, "'\(path)' is malformed: \(error.message)")
            }
        }
        return FrameSource(path: path, pcm: file.pcmReader, packets: nil, decoder: nil)
    }

    /// Whether ``frameCount`` is exact, so reading fewer frames means the file is damaged:
    /// PCM, FLAC and packet files; not the decoded lossy formats (Ogg, MP3), whose counts
    /// libsndfile estimates, nor a packet file whose every packet was decoded before its table's
    /// count was reached (the table overstated it: ffmpeg's ALAC CAFs count every packet as
    /// 4096 frames, the last one included; a packet lost to damage is a read error instead).
    public var frameCountIsExact: Bool {
        guard let pcm else { return !packetsExhausted }
        return !pcm.isDecoded || pcm.fileType == AudioFileTypeValues.flac
    }

    /// Set when the packets ran out before the table's frames did.
    private var packetsExhausted = false

    /// Back to the first frame (for looping).
    public func rewind() {
        nextFrame = 0
        nextPacket = 0
        decoded.removeAll(keepingCapacity: true)
        decodedRead = 0
        decoder?.reset()
        packetsExhausted = false
        skip = max(0, Int(packets?.packetTable?.primingFrames ?? 0))
        remaining = frameCount
    }

    /// Moves to `frame` (0 = the first frame of audio; ExtAudioFileSeek). Linear PCM moves at
    /// once; packet formats decode from the start and drop frames up to `frame`, which is exact
    /// (the decoder sees every packet before the target, as when playing through) and costs a
    /// decode of the skipped audio.
    ///
    /// - Throws: ``AudioFileError`` when the file cannot be read up to `frame`.
    public func seek(toFrame frame: Int64) throws(AudioFileError) {
        rewind()
        guard frame > 0 else { return }
        if pcm != nil {
            nextFrame = frame
            return
        }
        var scratch = [Float](repeating: 0, count: 4096 * channelCount)
        var left = frame
        while left > 0 {
            let read = try scratch.withUnsafeMutableBufferPointer { (floats) throws(AudioFileError) in
                try self.read(into: floats.baseAddress!, maximumFrames: Int(min(left, 4096)))
            }
            if read == 0 { return }
            left -= Int64(read)
        }
    }

    /// Reads up to `maximumFrames` frames; 0 at the end.
    public func read(into destination: UnsafeMutablePointer<Float>, maximumFrames: Int) throws(AudioFileError) -> Int {
        if let pcm {
            let frames = try pcm.readFloatFrames(startFrame: nextFrame, into: destination, maximumFrames: maximumFrames)
            nextFrame += Int64(frames)
            return frames
        }
        guard let packets, let decoder else { return 0 }
        while decodedRead * 1 >= decoded.count {
            guard remaining > 0 else { return 0 }
            decoded.removeAll(keepingCapacity: true)
            decodedRead = 0
            var buffer = [UInt8](repeating: 0, count: max(1, packets.maximumPacketSize))
            var description = AudioStreamPacketDescription()
            let read = try buffer.withUnsafeMutableBufferPointer { (raw) throws(AudioFileError) in
                try packets.readPackets(startPacket: nextPacket, packetCount: 1, into: raw.baseAddress!, capacity: raw.count, descriptions: &description)
            }
            guard read.packets == 1 else {
                packetsExhausted = true
                return 0
            }
            nextPacket += 1
            try buffer.withUnsafeBufferPointer { (raw) throws(AudioFileError) in
                try inDomain(AudioFileError.self) { () throws(AudioConverterError) in
                    try decoder.decode(UnsafeRawBufferPointer(start: raw.baseAddress, count: read.bytes)) { pointer, frames in
                        decoded += UnsafeBufferPointer(start: pointer, count: frames * channelCount)
                    }
                }
            }
            // Drop the priming, then hand out at most the valid frames.
            let dropped = min(skip, decoded.count / channelCount)
            skip -= dropped
            decodedRead = dropped * channelCount
        }
        let available = (decoded.count - decodedRead) / channelCount
        let frames = Int(min(Int64(min(maximumFrames, available)), remaining))
        for index in 0 ..< frames * channelCount { destination[index] = decoded[decodedRead + index] }
        decodedRead += frames * channelCount
        remaining -= Int64(frames)
        if remaining == 0 { decodedRead = decoded.count }
        return frames
    }
}
