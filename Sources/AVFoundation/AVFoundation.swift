// `import AVFoundation` as a ported iOS/macOS file writes it: AVFAudio's names (AVAudioSession)
// and, through it, AudioToolbox's. Nothing else of Apple's AVFoundation is here.
@_exported import AVFAudio
