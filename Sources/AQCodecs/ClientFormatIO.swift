import AQCore
import AQMedia
import CAudioTypes

/// Frames of a file at another rate and channel count (ExtAudioFile's "client" side, reading):
/// a ``FrameSource`` through a ``FormatConverter``, fed in the same 8192-frame chunks as
/// ``FileConversion``, so what it reads is sample for sample what `aqjack convert` writes for the
/// same rate, channels and resampler. Interleaved Float frames. One thread at a time.
public final class ClientFrameReader {
    public let source: FrameSource
    /// The rate and channel count frames are read at (the file's until ``setClient``).
    public private(set) var sampleRate: Double
    public private(set) var channelCount: Int
    /// Apple's 0 ... 0x7F sample-rate converter quality and the resampling library, as
    /// ``FileConversion/Request`` takes them; they apply from the next ``setClient`` or seek.
    public var sampleRateConverterQuality: UInt32 = 0x7F
    public var resampler = Resampler.Engine.soxr

    private static let chunk = 8192
    private var mapper: FormatConverter
    private var input: [Float]
    private var output: [Float] = []
    private var outputRead = 0
    private var sourceEnded = false
    /// The file frame the converter started at (a seek), and client frames read since.
    private var startFrame: Int64 = 0
    private var clientFramesRead: Int64 = 0

    public init(_ source: FrameSource) throws(AudioFileError) {
        self.source = source
        sampleRate = source.sampleRate
        channelCount = source.channelCount
        input = [Float](repeating: 0, count: Self.chunk * source.channelCount)
        mapper = try Self.makeMapper(source, sampleRate: sampleRate, channelCount: channelCount, quality: 0x7F, engine: .soxr)
    }

    private static func makeMapper(_ source: FrameSource, sampleRate: Double, channelCount: Int, quality: UInt32,
                                   engine: Resampler.Engine) throws(AudioFileError) -> FormatConverter {
        let mapper = try inDomain(AudioFileError.self) { () throws(AudioConverterError) in
            try FormatConverter(from: CompressedFormatValues.floatPCM(sampleRate: source.sampleRate, channelCount: source.channelCount),
                                to: CompressedFormatValues.floatPCM(sampleRate: sampleRate, channelCount: channelCount))
        }
        mapper.sampleRateConverterQuality = quality
        mapper.resamplerEngine = engine
        return mapper
    }

    /// Reads at `sampleRate` Hz and `channelCount` channels from the current file position on.
    ///
    /// - Throws: ``AudioFileError`` ('fmt?') for a rate below 1 Hz or a channel count outside
    ///   1 ... 1024, naming the value.
    public func setClient(sampleRate: Double, channelCount: Int) throws(AudioFileError) {
        guard sampleRate >= 1, sampleRate <= 1_536_000, (1 ... 1024).contains(channelCount) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                 "client format of \(sampleRate) Hz and \(channelCount) channels: expected 1 ... 1536000 Hz and 1 ... 1024 channels")
        }
        let position = framePosition
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        try seek(toFrame: position)
    }

    /// The position in file frames (at the file's rate): where the next client frame comes from.
    public var framePosition: Int64 {
        startFrame + Int64((Double(clientFramesRead) * source.sampleRate / sampleRate).rounded())
    }

    /// Client frames in the whole file (the file's frames at the client rate, rounded).
    public var clientFrameCount: Int64 {
        Int64((Double(source.frameCount) * sampleRate / source.sampleRate).rounded())
    }

    /// Moves to file frame `frame`; the converter starts afresh there (as after a discontinuity).
    public func seek(toFrame frame: Int64) throws(AudioFileError) {
        try source.seek(toFrame: frame)
        mapper = try Self.makeMapper(source, sampleRate: sampleRate, channelCount: channelCount,
                                     quality: sampleRateConverterQuality, engine: resampler)
        output.removeAll(keepingCapacity: true)
        outputRead = 0
        sourceEnded = false
        startFrame = frame
        clientFramesRead = 0
    }

    /// Reads up to `maximumFrames` interleaved client frames; 0 at the end of the file.
    public func read(into destination: UnsafeMutablePointer<Float>, maximumFrames: Int) throws(AudioFileError) -> Int {
        while output.count - outputRead < channelCount, !(sourceEnded && mapper.availableFrames == 0) {
            try refill()
        }
        let frames = min(maximumFrames, (output.count - outputRead) / channelCount)
        guard frames > 0 else { return 0 }
        output.withUnsafeBufferPointer { floats in
            destination.update(from: floats.baseAddress! + outputRead, count: frames * channelCount)
        }
        outputRead += frames * channelCount
        clientFramesRead += Int64(frames)
        return frames
    }

    /// Pushes one chunk of the file (or the converter's end) and keeps what comes out.
    private func refill() throws(AudioFileError) {
        if outputRead > 0 {
            output.removeFirst(outputRead)
            outputRead = 0
        }
        if !sourceEnded {
            let frames = try input.withUnsafeMutableBufferPointer { (floats) throws(AudioFileError) in
                try source.read(into: floats.baseAddress!, maximumFrames: Self.chunk)
            }
            try inDomain(AudioFileError.self) { () throws(AudioConverterError) in
                if frames == 0 {
                    sourceEnded = true
                    try mapper.finish()
                } else {
                    try input.withUnsafeBufferPointer { (floats) throws(AudioConverterError) in
                        try mapper.push(frames: UnsafeRawPointer(floats.baseAddress!), frameCount: frames)
                    }
                }
            }
        }
        let available = mapper.availableFrames
        guard available > 0 else { return }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: available * channelCount))
        let pulled = output.withUnsafeMutableBufferPointer { floats in
            mapper.pullFrames(into: UnsafeMutableRawPointer(floats.baseAddress! + start), maximumFrames: available)
        }
        output.removeLast((available - pulled) * channelCount)
    }
}

/// Frames written to a file from another rate and channel count (ExtAudioFile's client side,
/// writing): a ``FormatConverter`` in front of a ``FrameSink``. Interleaved Float frames. One
/// thread at a time.
public final class ClientFrameWriter {
    public let sink: FrameSink
    public let fileSampleRate: Double
    public let fileChannelCount: Int
    public private(set) var sampleRate: Double
    public private(set) var channelCount: Int
    public var sampleRateConverterQuality: UInt32 = 0x7F
    public var resampler = Resampler.Engine.soxr
    private var mapper: FormatConverter?
    private var output: [Float] = []
    private var finished = false

    /// Writes `sink`'s file; frames arrive at its rate and channel count until ``setClient``.
    public init(_ sink: FrameSink) {
        self.sink = sink
        fileSampleRate = sink.fileFormat.mSampleRate
        fileChannelCount = Int(sink.fileFormat.mChannelsPerFrame)
        sampleRate = fileSampleRate
        channelCount = fileChannelCount
    }

    /// Frames will arrive at `sampleRate` Hz and `channelCount` channels. Set it before the
    /// first frame (Apple: the client format is set before writing).
    public func setClient(sampleRate: Double, channelCount: Int) throws(AudioFileError) {
        guard sampleRate >= 1, sampleRate <= 1_536_000, (1 ... 1024).contains(channelCount) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                 "client format of \(sampleRate) Hz and \(channelCount) channels: expected 1 ... 1536000 Hz and 1 ... 1024 channels")
        }
        try flushMapper()
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        guard sampleRate != fileSampleRate || channelCount != fileChannelCount else {
            mapper = nil
            return
        }
        let mapper = try inDomain(AudioFileError.self) { () throws(AudioConverterError) in
            try FormatConverter(from: CompressedFormatValues.floatPCM(sampleRate: sampleRate, channelCount: channelCount),
                                to: CompressedFormatValues.floatPCM(sampleRate: fileSampleRate, channelCount: fileChannelCount))
        }
        mapper.sampleRateConverterQuality = sampleRateConverterQuality
        mapper.resamplerEngine = resampler
        self.mapper = mapper
    }

    /// Frames in the file so far (at the file's rate).
    public var fileFrameCount: Int64 { sink.framesWritten }

    /// Writes `frameCount` interleaved client frames.
    public func write(_ floats: UnsafePointer<Float>, frameCount: Int) throws(AudioFileError) {
        guard frameCount > 0 else { return }
        guard let mapper else {
            try sink.write(floats, frameCount: frameCount)
            return
        }
        try inDomain(AudioFileError.self) { () throws(AudioConverterError) in
            try mapper.push(frames: UnsafeRawPointer(floats), frameCount: frameCount)
        }
        try drain(mapper)
    }

    private func drain(_ mapper: FormatConverter) throws(AudioFileError) {
        while mapper.availableFrames > 0 {
            let available = mapper.availableFrames
            if output.count < available * fileChannelCount { output = [Float](repeating: 0, count: available * fileChannelCount) }
            let pulled = output.withUnsafeMutableBufferPointer { floats in
                mapper.pullFrames(into: UnsafeMutableRawPointer(floats.baseAddress!), maximumFrames: available)
            }
            guard pulled > 0 else { return }
            try output.withUnsafeBufferPointer { (floats) throws(AudioFileError) in try sink.write(floats.baseAddress!, frameCount: pulled) }
        }
    }

    /// Sends what the converter still holds to the file (a client format change or the end).
    private func flushMapper() throws(AudioFileError) {
        guard let mapper else { return }
        try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try mapper.finish() }
        try drain(mapper)
        self.mapper = nil
    }

    /// Flushes the converter and the encoder and closes the file; later calls do nothing.
    public func finish() throws(AudioFileError) {
        guard !finished else { return }
        finished = true
        try flushMapper()
        try sink.finish()
    }
}
