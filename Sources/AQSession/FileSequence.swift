import AQCodecs
import AQCore
import AQMedia
import AudioQueue
import CAudioTypes
import Foundation

/// Files played one after another (looping as asked), read into output buffers as native
/// floats: linear PCM, FLAC, ALAC, Ogg, MP3 ... through libsndfile, AAC decoded and trimmed by
/// its packet table; a file of another rate or channel count than the output goes through a
/// ``FormatConverter`` (the resampler engine given, channel mapping: mono to every channel,
/// others padded with silence). Queue thread and the starting thread, one at a time (a lock
/// orders them); the read-ahead's helper thread before them.
public final class FileSequence: @unchecked Sendable {
    private let readers: [FrameSource]
    /// Per file: the converter to the output's shape, or nil when it already has it.
    private let converters: [FormatConverter?]
    private let lock = NSLock()
    private var fileIndex = 0
    private var loopsLeft: Int?
    private var exhausted = false
    private var finishReported = false
    private var scratch: [Float] = []
    private var converterFinished = false
    /// Frames read from the current file in this pass, against what its header promised.
    private var framesFromFile: Int64 = 0
    private var readFailure: String?
    /// Frames read ahead by ``startReadAhead(frames:)`` (interleaved, `channelCount` wide),
    /// handed out by ``fill(_:)`` before anything newer; released once used up.
    private var readAhead: UnsafeMutableBufferPointer<Float>?
    private var readAheadFrames = 0
    private var readAheadUsed = 0
    /// The read-ahead's thread until the first ``fill(_:)`` has waited for it.
    private var readAheadTask: BackgroundValue<Void>?
    private var readAheadStarted = false

    /// Frames per second of the output (the queue's format).
    public let sampleRate: Double
    /// Channels of the output: each frame `channelCount` interleaved Floats.
    public let channelCount: Int

    /// - Parameters:
    ///   - readers: the files, in the order they play.
    ///   - loops: times the whole sequence plays; nil plays it until stopped.
    ///   - channelCount, sampleRate: the output's shape.
    public init(readers: [FrameSource], loops: Int? = 1, channelCount: Int, sampleRate: Double,
                resampler: Resampler.Engine = .soxr) throws(AudioFileError) {
        self.readers = readers
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        var converters: [FormatConverter?] = []
        for reader in readers {
            if reader.channelCount == channelCount && reader.sampleRate == sampleRate {
                converters.append(nil)
            } else {
                let converter = try inDomain(AudioFileError.self) { () throws(AudioConverterError) in
                    try FormatConverter(from: CompressedFormatValues.floatPCM(sampleRate: reader.sampleRate, channelCount: reader.channelCount),
                                        to: CompressedFormatValues.floatPCM(sampleRate: sampleRate, channelCount: channelCount))
                }
                converter.sampleRateConverterQuality = 0x7F
                converter.resamplerEngine = resampler
                converters.append(converter)
            }
        }
        self.converters = converters
        loopsLeft = loops.map { $0 - 1 }
        let frames = readers.reduce(0.0) { $0 + Double($1.frameCount) * sampleRate / $1.sampleRate }
        totalFrames = loops.map { Int64(frames.rounded()) * Int64($0) }
    }

    /// Frames in all, every loop counted (at the output rate), or nil when looping forever.
    /// Fixed at creation: it does not shrink as loops are played.
    public let totalFrames: Int64?

    /// Why a file could not be played to its end (read error, or shorter than its header
    /// said), or nil.
    public var failure: String? { lock.withLock { readFailure } }

    /// Reads from file `index` into `output`; 0 at its end. A read error, or an end before the
    /// frames its header promised, is kept in `readFailure` and ends playback.
    private func readFile(_ index: Int, into output: UnsafeMutablePointer<Float>, maximumFrames: Int) -> Int {
        let reader = readers[index]
        let got: Int
        do throws(AudioFileError) {
            got = try reader.read(into: output, maximumFrames: maximumFrames)
        } catch {
            readFailure = "reading \(reader.path) failed after \(framesFromFile) of its \(reader.frameCount) frames: \(error.message)"
            exhausted = true
            return 0
        }
        framesFromFile += Int64(got)
        if got == 0 && reader.frameCountIsExact && framesFromFile < reader.frameCount {
            readFailure = "\(reader.path) ended after \(framesFromFile) of the \(reader.frameCount) frames its header gives (was it truncated while playing?)"
            exhausted = true
        }
        return got
    }

    /// Reads up to `maximumFrames` output frames of file `index`, converted; 0 at its end.
    private func read(file index: Int, into output: UnsafeMutablePointer<Float>, maximumFrames: Int) -> Int {
        guard let converter = converters[index] else {
            return readFile(index, into: output, maximumFrames: maximumFrames)
        }
        let reader = readers[index]
        while converter.availableFrames == 0 && !converterFinished {
            let chunk = 4096
            if scratch.count < chunk * reader.channelCount { scratch = [Float](repeating: 0, count: chunk * reader.channelCount) }
            let got = scratch.withUnsafeMutableBufferPointer { readFile(index, into: $0.baseAddress!, maximumFrames: chunk) }
            if exhausted { return 0 }
            if got == 0 {
                try? converter.finish()
                converterFinished = true
            } else {
                try? scratch.withUnsafeBufferPointer { (floats) throws(AudioConverterError) in
                    try converter.push(frames: UnsafeRawPointer(floats.baseAddress!), frameCount: got)
                }
            }
        }
        return converter.pullFrames(into: UnsafeMutableRawPointer(output), maximumFrames: maximumFrames)
    }

    /// Starts reading the first `frames` output frames on a helper thread, so that the file
    /// is read while JACK opens the client and registers its ports (a cold file's first
    /// buffers come off the disk then, not after). Before the first ``feed(_:to:maximumFrames:)``,
    /// which waits for it; later calls do nothing.
    public func startReadAhead(frames: Int) {
        guard !readAheadStarted else { return }
        readAheadStarted = true
        readAheadTask = BackgroundValue { [self] in
            lock.withLock {
                let staging = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, frames * channelCount))
                readAhead = staging
                readAheadFrames = read(into: staging.baseAddress!, capacity: frames)
            }
        }
    }

    deinit {
        readAheadTask?.take()
        readAhead?.deallocate()
    }

    /// Fills `buffer` with the next frames (at most `maximumFrames`) and enqueues it; false when
    /// everything had been read (or the queue refused it: it is stopping). One buffer at a
    /// time, so the frames are enqueued in the order they were read whichever thread feeds:
    /// the starting thread and the queue's callback both do.
    public func feed(_ buffer: AudioQueueBufferRef, to queue: AudioOutputQueue, maximumFrames: Int = .max) -> Bool {
        if let task = readAheadTask {
            task.take()
            readAheadTask = nil
        }
        lock.lock()
        defer { lock.unlock() }
        // The queue's lock is taken inside, never the other way round: the queue calls back
        // without holding it.
        return fill(buffer, maximumFrames: maximumFrames) && (try? queue.enqueue(buffer)) != nil
    }

    /// Fills `buffer` with the next frames; false when everything has been read. The lock is
    /// held.
    private func fill(_ buffer: AudioQueueBufferRef, maximumFrames: Int) -> Bool {
        let capacity = min(maximumFrames, Int(buffer.pointee.mAudioDataBytesCapacity) / (4 * channelCount))
        let output = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
        var filled = 0
        if let staging = readAhead {
            filled = min(capacity, readAheadFrames - readAheadUsed)
            output.update(from: staging.baseAddress! + readAheadUsed * channelCount, count: filled * channelCount)
            readAheadUsed += filled
            if readAheadUsed == readAheadFrames {
                staging.deallocate()
                readAhead = nil
            }
        }
        filled += read(into: output + filled * channelCount, capacity: capacity - filled)
        buffer.pointee.mAudioDataByteSize = UInt32(filled * 4 * channelCount)
        return filled > 0
    }

    /// Reads up to `capacity` output frames into `output` across files and loops; the lock is
    /// held. Fewer only at the end.
    private func read(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        let channels = channelCount
        var filled = 0
        while filled < capacity && !exhausted {
            let got = read(file: fileIndex, into: output + filled * channels, maximumFrames: capacity - filled)
            if got == 0 {
                if !exhausted { advance() }
                continue
            }
            filled += got
        }
        return filled
    }

    private func advance() {
        framesFromFile = 0
        readers[fileIndex].rewind()
        converters[fileIndex]?.reset()
        converterFinished = false
        fileIndex += 1
        guard fileIndex == readers.count else { return }
        fileIndex = 0
        if let left = loopsLeft {
            if left == 0 { exhausted = true } else { loopsLeft = left - 1 }
        }
    }

    /// True once, when everything has been read and handed out: time to drain.
    public func finish() -> Bool {
        lock.withLock {
            guard exhausted, !finishReported else { return false }
            finishReported = true
            return true
        }
    }
}
