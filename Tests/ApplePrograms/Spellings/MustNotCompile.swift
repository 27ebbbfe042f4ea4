// Spellings that Apple's SDK rejects in Swift, one per section: each must fail to compile here
// too (`SpellingTests` compiles each section alone against the AudioToolbox module and expects
// an error in it). A section starts with a MARK comment naming what it checks.

// MARK: kMPEG4Object_AAC_LC is not a Swift name (MPEG4ObjectID is an enum: .AAC_LC)
import AudioToolbox
let objectType = kMPEG4Object_AAC_LC

// MARK: MPEG4ObjectID's cases keep Apple's spelling (.AAC_LC, not .aac_LC)
import AudioToolbox
let objectType = MPEG4ObjectID.aac_LC

// MARK: a processing tap's client data is not optional (no `!`)
import AudioToolbox
let tap: AudioQueueProcessingTapCallback = { clientData, _, _, _, _, _, _ in _ = clientData! }

// MARK: a CF_OPTIONS type's long C names are not Swift names (.sampleTimeValid)
import AudioToolbox
let flags = kAudioTimeStampSampleTimeValid

// MARK: AudioFileFlags' C name is not a Swift name (.eraseFile)
import AudioToolbox
let flags = kAudioFileFlags_EraseFile

// MARK: an option set is not an integer
import AudioToolbox
let flags: UInt32 = AudioTimeStampFlags.sampleTimeValid
