import AQCore
import CSndFile
import Foundation

/// A file read back through libsndfile, as the tests check recordings.
public struct SoundFileContents {
    public let frames: Int
    public let channels: Int
    public let sampleRate: Int
    public let format: Int32
    /// Every sample, interleaved, as Float (integers divided by their full scale).
    public let samples: [Float]
    /// The BWF TimeReference, or nil when the file has none.
    public let timeReference: Int64?

    public init(path: String) throws {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw NSError(domain: "libsndfile", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot open \(path): \(String(cString: sf_strerror(nil)))"])
        }
        defer { sf_close(file) }
        let frameCount = Int(info.frames)
        let channelCount = Int(info.channels)
        frames = frameCount
        channels = channelCount
        sampleRate = Int(info.samplerate)
        format = info.format
        var buffer = [Float](repeating: 0, count: frameCount * channelCount)
        // Integers read back exactly: libsndfile scales by 1/2^(bits-1) without normalisation tricks.
        sf_command(file, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        let read = buffer.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(frameCount)) }
        samples = Array(buffer[0 ..< Int(read) * channelCount])
        let reference = csndfile_time_reference(file)
        timeReference = reference >= 0 ? reference : nil
    }
}

/// The frame offset (mod the pattern's period) at which `samples` of the integer test signal
/// (``TestSignal/integerSample(channel:frame:bits:)``) start, checking that every frame follows
/// on from it; nil when any sample breaks the sequence.
public func integerSignalStart(_ samples: [Float], channels: Int, bits: Int) -> UInt32? {
    guard samples.count >= channels else { return nil }
    let period = UInt32(1) << UInt32(bits - 5)
    guard let start = (0 ..< period).first(where: { TestSignal.integerSample(channel: 0, frame: $0, bits: bits) == samples[0] }) else { return nil }
    for frame in 0 ..< samples.count / channels {
        for channel in 0 ..< channels where samples[frame * channels + channel] != TestSignal.integerSample(channel: channel, frame: start + UInt32(frame), bits: bits) {
            return nil
        }
    }
    return start
}

/// Like ``integerSignalStartAllowingSilence(_:channels:bits:)``, but a frame that is neither
/// silence nor the signal counts as wrong instead of failing the check: the frames of a cycle a
/// server xrun left stale (the generator not finished in time), for tests that allow one cycle
/// per reported xrun. Nil when there is no sound, or the first sound is not the signal. The
/// samples hold the signal's channels `firstChannel ..< firstChannel + channels` (a stem: one).
public func integerSignalCheck(_ samples: [Float], channels: Int, bits: Int, firstChannel: Int = 0) -> (start: UInt32, silentFrames: Int, wrongFrames: Int)? {
    let frames = samples.count / channels
    guard let firstSound = (0 ..< frames).first(where: { frame in (0 ..< channels).contains { samples[frame * channels + $0] != 0 } }) else { return nil }
    let period = UInt32(1) << UInt32(bits - 5)
    guard let soundFrame = (0 ..< period).first(where: { TestSignal.integerSample(channel: firstChannel, frame: $0, bits: bits) == samples[firstSound * channels] }) else { return nil }
    let start = soundFrame &- UInt32(firstSound)
    var silent = 0, wrong = 0
    for frame in 0 ..< frames {
        let base = frame * channels
        let expected = (0 ..< channels).map { TestSignal.integerSample(channel: firstChannel + $0, frame: start &+ UInt32(frame), bits: bits) }
        if (0 ..< channels).allSatisfy({ samples[base + $0] == 0 }) {
            // (Where the signal itself is 0 on every channel, as channel 0's is every 2^(bits-5) frames, it is the signal.)
            if expected.contains(where: { $0 != 0 }) { silent += 1 }
        } else if (0 ..< channels).contains(where: { samples[base + $0] != expected[$0] }) {
            wrong += 1
        }
    }
    return (start, silent, wrong)
}

/// Like ``integerSignalStart(_:channels:bits:)`` for a recording aligned to the JACK timeline in
/// which lost frames were written as silence: every frame must be the signal for its position,
/// or all zeros. Returns the start and the number of silent frames, or nil.
public func integerSignalStartAllowingSilence(_ samples: [Float], channels: Int, bits: Int) -> (start: UInt32, silentFrames: Int)? {
    guard let check = integerSignalCheck(samples, channels: channels, bits: bits), check.wrongFrames == 0 else { return nil }
    return (check.start, check.silentFrames)
}
