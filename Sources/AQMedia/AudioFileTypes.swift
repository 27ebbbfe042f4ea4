/// File type codes (`AudioFileTypeID`), Apple's values (AudioFile.h, macOS 10.15 SDK).
public enum AudioFileTypeValues {
    /// `kAudioFileAIFFType` ('AIFF'): big-endian signed integers.
    public static let aiff: UInt32 = 0x4149_4646
    /// `kAudioFileAIFCType` ('AIFC'): also floats and little-endian integers ('sowt').
    public static let aifc: UInt32 = 0x4149_4643
    /// `kAudioFileWAVEType` ('WAVE'): little-endian; 8-bit WAVE is unsigned, so signed 8-bit is refused.
    public static let wave: UInt32 = 0x5741_5645
    /// `kAudioFileRF64Type` ('RF64').
    public static let rf64: UInt32 = 0x5246_3634
    /// `kAudioFileCAFType` ('caff').
    public static let caf: UInt32 = 0x6361_6666
    /// Sony Wave64 ('W64f'). An aqjack addition: Apple's AudioFile has no Wave64 type.
    public static let wave64: UInt32 = 0x5736_3466
}
