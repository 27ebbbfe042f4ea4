import AQCodecs
import AQCore
import AQMedia
import CAudioTypes
import Foundation
import Synchronization

/// The playback queue's parameters (volume, pan, rate, pitch) and read-only properties.
extension AudioOutputQueue {
    // MARK: Parameters and properties

    /// The values the parameters take (Apple documents Volume 0 ... 1 and Pan -1 ... 1; a ramp
    /// is at most an hour). Setters clamp into them and ignore NaN; `AudioQueueSetParameter`
    /// refuses values outside them with `kAudio_ParamError`.
    public static let volumeRange: ClosedRange<Float> = 0 ... 1
    public static let panRange: ClosedRange<Float> = -1 ... 1
    public static let volumeRampTimeRange: ClosedRange<Double> = 0 ... 3600

    /// Linear volume 0 ... 1 (`kAudioQueueParam_Volume`), reached over ``volumeRampTime``.
    public var volumeLevel: Float {
        get { lock.withLock { volume } }
        set {
            lock.withLock { if !newValue.isNaN { volume = newValue.clamped(to: Self.volumeRange) } }
            applyVolume(rampFrames: Int(lock.withLock { volumeRampSeconds * Double(deviceRate) }))
        }
    }

    /// Seconds over which later volume changes ramp (`kAudioQueueParam_VolumeRampTime`).
    public var volumeRampTime: Double {
        get { lock.withLock { volumeRampSeconds } }
        // NaN and infinities would reach Int(seconds × rate) and trap: clamped, NaN as 0.
        set { lock.withLock { volumeRampSeconds = newValue.isNaN ? 0 : newValue.clamped(to: Self.volumeRampTimeRange) } }
    }

    /// Stereo balance -1 ... 1 (`kAudioQueueParam_Pan`); no effect on other channel counts.
    public var panPosition: Float {
        get { lock.withLock { pan } }
        set {
            lock.withLock { if !newValue.isNaN { pan = newValue.clamped(to: Self.panRange) } }
            processor.setPan(lock.withLock { pan })
        }
    }

    func applyVolume(rampFrames: Int) {
        processor.setGain(lock.withLock { volume }, rampFrames: rampFrames)
    }

    /// The JACK client whose input ports the queue feeds (`kAudioQueueProperty_CurrentDevice`).
    public var currentDevice: String {
        get { lock.withLock { device } }
        set { lock.withLock { device = newValue } }
    }

    /// Full names of the input ports each channel feeds (`kAudioQueueProperty_ChannelAssignments`);
    /// an empty list connects nothing.
    public var channelDestinations: [String]? {
        get { lock.withLock { explicitDestinations } }
        set { lock.withLock { explicitDestinations = newValue } }
    }

    /// The converter used when the format's rate differs from the server's. Set before enqueuing.
    public var sampleRateConverterQuality: Resampler.Quality {
        get { lock.withLock { pipeline.converterQuality } }
        set { lock.withLock { pipeline.converterQuality = newValue } }
    }

    /// The library that converts the rate (libsoxr by default, or libsamplerate). Set before
    /// the first frames are converted.
    public var resamplerEngine: Resampler.Engine {
        get { lock.withLock { pipeline.resamplerEngine } }
        set { lock.withLock { pipeline.resamplerEngine = newValue } }
    }

    /// Time-pitch (Apple's `kAudioQueueProperty_EnableTimePitch`, `TimePitchAlgorithm`,
    /// `TimePitchBypass`): the algorithm that plays at ``playRate`` with ``pitchCents``, or nil
    /// for none (the default, and a bypass). Changes apply from the next frames converted.
    public var timePitchAlgorithm: TimePitchAlgorithm? {
        get { lock.withLock { pipeline.timePitchAlgorithm } }
        set { lock.withLock { pipeline.timePitchAlgorithm = newValue } }
    }

    /// The play rates and pitch shifts Apple documents (`kAudioQueueParam_PlayRate`, `Pitch`).
    public static let playRateRange: ClosedRange<Float> = 0.5 ... 2
    public static let pitchRange: ClosedRange<Float> = -2400 ... 2400

    /// 0.5 ... 2 (`kAudioQueueParam_PlayRate`): 2 plays twice as fast; heard only with a
    /// ``timePitchAlgorithm``.
    public var playRate: Float {
        get { lock.withLock { Float(pipeline.playRate) } }
        set { lock.withLock { if !newValue.isNaN { pipeline.playRate = Double(newValue.clamped(to: Self.playRateRange)) } } }
    }

    /// Cents, -2400 ... 2400 (`kAudioQueueParam_Pitch`): heard with the Spectral and TimeDomain
    /// algorithms (Varispeed's pitch follows its rate).
    public var pitchCents: Float {
        get { lock.withLock { Float(pipeline.pitchCents) } }
        set { lock.withLock { if !newValue.isNaN { pipeline.pitchCents = Double(newValue.clamped(to: Self.pitchRange)) } } }
    }

    /// Called on the queue thread when the first frame has really been played after a start
    /// (`true`) and when playing has stopped, after a drain once the last frame has left (`false`).
    public var onRunningChange: (@Sendable (Bool) -> Void)? {
        get { lock.withLock { runningHandler } }
        set { lock.withLock { runningHandler = newValue } }
    }

    /// Frames taken from the buffers and played so far.
    public var playedFrameCount: Int { processor.playedFrameCount.load(ordering: .relaxed) }

    /// Frames of silence played because no data was ready while playing, and how many times.
    public var underrunFrameCount: Int { processor.underrunFrameCount.load(ordering: .relaxed) }
    public var underrunEventCount: Int { processor.underrunEventCount.load(ordering: .relaxed) }

    /// The device frame at which the first frame played since the latest start, once it has.
    public var playbackStartFrame: UInt64? {
        let frame = processor.firstPlayedFrame.load(ordering: .acquiring)
        return frame == .max ? nil : frame
    }

    /// The queue's position: device frames elapsed since playback started (including silence
    /// played in underruns), in the format's rate; 0 before the first frame.
    /// Level metering (`kAudioQueueProperty_EnableLevelMetering`): off by default.
    public var isLevelMeteringEnabled: Bool {
        get { lock.withLock { pipeline.meteringEnabled } }
        set { lock.withLock { pipeline.meteringEnabled = newValue } }
    }

    /// Each channel's RMS (`mAveragePower`) and peak over the 1024 frames playing now, linear
    /// (`kAudioQueueProperty_CurrentLevelMeter`); nil while metering is off.
    public var currentLevels: [AudioQueueLevelMeterState]? {
        let played = processor.playedFrameCount.load(ordering: .relaxed)
        return lock.withLock { pipeline.meteringEnabled ? pipeline.levels(atPlayedFrame: played) : nil }
    }

    /// The rate the queue plays at: the device's, or the offline render format's (Hz).
    public var playbackRate: Int { lock.withLock { deviceRate } }

    public var currentSampleTime: Double {
        guard let start = playbackStartFrame else { return 0 }
        let now = processor.nextCycleFrame.load(ordering: .relaxed)
        return Double(now > start ? now - start : 0) * format.mSampleRate / Double(lock.withLock { deviceRate })
    }

}
