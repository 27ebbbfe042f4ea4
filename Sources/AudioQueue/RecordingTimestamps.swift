import AQCodecs
import AQCore
import AQMedia
import CAudioTypes
import Foundation
import Synchronization

/// The recording pipeline's timestamps: a delivered frame's device frame and host time.
extension RecordingPipeline {
    /// The timestamp of the `offset`th frame being emitted from `record`: its JACK frame, or
    /// for resampled output the (fractional) device frame it corresponds to.
    func timestamp(ofOutputFrame offset: Int, record: CaptureCycle) -> AudioTimeStamp {
        if isResampling, let anchor = resampleAnchor {
            // resampledFrames already counts every frame emitted before this one.
            let deviceFrame = anchor + Double(resampledFrames) * Double(deviceRate) / format.sampleRate
            return timestamp(ofDeviceFrame: deviceFrame, in: record)
        }
        return timestamp(ofDeviceFrame: Double(record.frameTime) + Double(offset), in: record)
    }

    /// The timestamp of device frame `frame` (JACK frame time; fractional when resampling),
    /// host time interpolated from the cycle's times.
    func timestamp(ofDeviceFrame arrival: Double, in record: CaptureCycle) -> AudioTimeStamp {
        // The frame as it entered the graph upstream, when compensating its latency.
        let frame = arrival - Double(latencyCompensationFrames)
        var stamp = AudioTimeStamp()
        stamp.mSampleTime = frame
        stamp.mFlags = .sampleTimeValid
        if record.cycleStartMicros != 0 && record.nextCycleStartMicros > record.cycleStartMicros {
            let cycleMicros = Double(record.nextCycleStartMicros - record.cycleStartMicros)
            let framesIntoRecord = frame - Double(record.frameTime)
            let nanoseconds = Double(record.cycleStartMicros) * 1000 + framesIntoRecord * cycleMicros * 1000 / Double(record.frameCount)
            stamp.mHostTime = UInt64(max(0, nanoseconds))   // a delayed frame of an offline clock near 0
            let nominalMicros = Double(record.frameCount) * 1_000_000 / Double(deviceRate)
            stamp.mRateScalar = nominalMicros / cycleMicros
            stamp.mFlags.formUnion([.hostTimeValid, .rateScalarValid])
        }
        return stamp
    }
}
