import AudioToolbox
import Foundation

// A converter fed by an input proc, the AudioBufferList handled through Apple's overlay
// (UnsafeMutableAudioBufferListPointer): one second of a 440 Hz float sine at 48 kHz to 16-bit
// integers, written to a WAVE file.

final class SineSource {
    let samples: UnsafeMutableBufferPointer<Float>
    var frame = 0
    init(frames: Int) {
        samples = .allocate(capacity: frames * 2)
        for index in 0 ..< frames {
            let value = Float(0.5 * sin(2 * Double.pi * 440 * Double(index) / 48000))
            samples[2 * index] = value
            samples[2 * index + 1] = -value
        }
    }
    deinit { samples.deallocate() }
}

let inputProc: AudioConverterComplexInputDataProc = { _, ioNumberDataPackets, ioData, _, inUserData in
    let source = Unmanaged<SineSource>.fromOpaque(inUserData!).takeUnretainedValue()
    let frames = min(Int(ioNumberDataPackets.pointee), source.samples.count / 2 - source.frame)
    let buffers = UnsafeMutableAudioBufferListPointer(ioData)
    buffers[0].mData = UnsafeMutableRawPointer(source.samples.baseAddress! + 2 * source.frame)
    buffers[0].mDataByteSize = UInt32(frames * 8)
    buffers[0].mNumberChannels = 2
    source.frame += frames
    ioNumberDataPackets.pointee = UInt32(frames)
    return noErr
}

var floatFormat = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM,
                                              mFormatFlags: kAudioFormatFlagsNativeFloatPacked, mBytesPerPacket: 8, mFramesPerPacket: 1,
                                              mBytesPerFrame: 8, mChannelsPerFrame: 2, mBitsPerChannel: 32, mReserved: 0)
var shortFormat = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM,
                                              mFormatFlags: kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked, mBytesPerPacket: 4,
                                              mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 2, mBitsPerChannel: 16, mReserved: 0)
var converter: AudioConverterRef?
guard AudioConverterNew(&floatFormat, &shortFormat, &converter) == noErr, let converter else { print("AudioConverterNew failed"); exit(1) }

var file: AudioFileID?
guard AudioFileCreateWithURL(URL(fileURLWithPath: CommandLine.arguments[1]) as CFURL, kAudioFileWAVEType, &shortFormat, .eraseFile, &file) == noErr,
      let file else { print("AudioFileCreateWithURL failed"); exit(1) }

let source = SineSource(frames: 48000)
let outputList = AudioBufferList.allocate(maximumBuffers: 1)
defer { free(outputList.unsafeMutablePointer) }
let chunk = 1000
var outputBytes = [Int16](repeating: 0, count: chunk * 2)
var written: Int64 = 0
while true {
    var packets = UInt32(chunk)
    let status = outputBytes.withUnsafeMutableBytes { raw -> OSStatus in
        outputList[0] = AudioBuffer(mNumberChannels: 2, mDataByteSize: UInt32(raw.count), mData: raw.baseAddress)
        return AudioConverterFillComplexBuffer(converter, inputProc, Unmanaged.passUnretained(source).toOpaque(), &packets, outputList.unsafeMutablePointer, nil)
    }
    if status != noErr { print("AudioConverterFillComplexBuffer failed: \(status)"); exit(1) }
    if packets == 0 { break }
    var count = packets
    AudioFileWritePackets(file, false, packets * 4, nil, written, &count, outputBytes)
    written += Int64(count)
}
AudioFileClose(file)
AudioConverterDispose(converter)
print("converted \(written) frames")
