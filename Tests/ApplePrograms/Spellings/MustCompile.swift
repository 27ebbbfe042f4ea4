// The same things in the spellings Apple's SDK takes: this file must compile (`SpellingTests`),
// so that the failures of MustNotCompile.swift are the spellings' and not the compiler setup's.
import AudioToolbox

final class TapState {
    var frames: UInt32 = 0
}

let objectType = UInt32(MPEG4ObjectID.AAC_LC.rawValue)
let tap: AudioQueueProcessingTapCallback = { clientData, _, frames, _, _, outFrames, _ in
    let state = Unmanaged<TapState>.fromOpaque(clientData).takeUnretainedValue()
    state.frames += frames
    outFrames.pointee = frames
}
let stampFlags: AudioTimeStampFlags = .sampleTimeValid
let fileFlags: AudioFileFlags = .eraseFile
let raw: UInt32 = AudioTimeStampFlags.sampleTimeValid.rawValue
