import AudioQueue
import AudioToolbox

// As macOS code completes a format: Apple's names, types and codes.
var format = AudioStreamBasicDescription()
format.mFormatID = kAudioFormatLinearPCM
format.mSampleRate = 44100
format.mChannelsPerFrame = 2
format.mBitsPerChannel = 16
format.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger
var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
let status: OSStatus = AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &size, &format)
print(status == noErr ? "bytes per frame \(format.mBytesPerFrame)" : "status \(status)")
// An OSStatus left unused, as C calls are written (no warning: @discardableResult).
AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &size, &format)
// CoreFoundation's byte-order functions, for big-endian file fields.
print(CFSwapInt32HostToBig(0x0102_0304) == 0x0403_0201 && CFSwapInt16BigToHost(0x3412) == 0x1234
      && CFConvertFloat32SwappedToHost(CFConvertFloat32HostToSwapped(0.5)) == 0.5 ? "swapped" : "not swapped")
