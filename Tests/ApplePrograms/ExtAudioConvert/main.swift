import AudioToolbox
import Foundation

// Learning Core Audio, chapter 6: converting with ExtAudioFile, ported to Swift.

func CheckError(_ error: OSStatus, _ operation: String) {
    guard error != noErr else { return }
    var code = CFSwapInt32HostToBig(UInt32(bitPattern: error))
    let text = withUnsafeBytes(of: &code) { bytes in
        bytes.allSatisfy { isprint(Int32($0)) != 0 } ? "'" + String(decoding: bytes, as: UTF8.self) + "'" : String(error)
    }
    fputs("Error: \(operation) (\(text))\n", stderr)
    exit(1)
}

let arguments = CommandLine.arguments
let inputURL = URL(fileURLWithPath: arguments[1])
let outputURL = URL(fileURLWithPath: arguments[2])

var inputFile: ExtAudioFileRef?
CheckError(ExtAudioFileOpenURL(inputURL as CFURL, &inputFile), "ExtAudioFileOpenURL failed")

var inputFormat = AudioStreamBasicDescription()
var propertySize = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
CheckError(ExtAudioFileGetProperty(inputFile!, kExtAudioFileProperty_FileDataFormat, &propertySize, &inputFormat),
           "Couldn't get file's data format")

var outputFormat = AudioStreamBasicDescription()
outputFormat.mSampleRate = 44100.0
outputFormat.mFormatID = kAudioFormatLinearPCM
outputFormat.mFormatFlags = kAudioFormatFlagIsBigEndian | kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked
outputFormat.mBitsPerChannel = 16
outputFormat.mChannelsPerFrame = inputFormat.mChannelsPerFrame
outputFormat.mBytesPerFrame = 2 * outputFormat.mChannelsPerFrame
outputFormat.mFramesPerPacket = 1
outputFormat.mBytesPerPacket = outputFormat.mBytesPerFrame

var outputFile: ExtAudioFileRef?
CheckError(ExtAudioFileCreateWithURL(outputURL as CFURL, kAudioFileAIFFType, &outputFormat, nil, AudioFileFlags.eraseFile.rawValue, &outputFile),
           "ExtAudioFileCreateWithURL failed")
CheckError(ExtAudioFileSetProperty(inputFile!, kExtAudioFileProperty_ClientDataFormat,
                                   UInt32(MemoryLayout<AudioStreamBasicDescription>.size), &outputFormat),
           "Couldn't set client data format on input ext file")

let outputBufferSize: UInt32 = 32 * 1024
let packetsPerBuffer = outputBufferSize / outputFormat.mBytesPerPacket
let outputBuffer = UnsafeMutableRawPointer.allocate(byteCount: Int(outputBufferSize), alignment: 16)
defer { outputBuffer.deallocate() }

var totalFrames: Int64 = 0
while true {
    var convertedData = AudioBufferList()
    convertedData.mNumberBuffers = 1
    convertedData.mBuffers.mNumberChannels = outputFormat.mChannelsPerFrame
    convertedData.mBuffers.mDataByteSize = outputBufferSize
    convertedData.mBuffers.mData = outputBuffer

    var frameCount = packetsPerBuffer
    CheckError(ExtAudioFileRead(inputFile!, &frameCount, &convertedData), "ExtAudioFileRead failed")
    if frameCount == 0 {
        print("done reading from file")
        break
    }
    CheckError(ExtAudioFileWrite(outputFile!, frameCount, &convertedData), "ExtAudioFileWrite failed")
    totalFrames += Int64(frameCount)
}

ExtAudioFileDispose(outputFile!)
ExtAudioFileDispose(inputFile!)
print("converted \(totalFrames) frames")
