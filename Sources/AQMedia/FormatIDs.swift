/// Every format ID, linear-PCM flag and file type code, Apple's values: the one table the
/// queues, files, codecs and Apple's constants (AudioToolbox) take them from.

/// Format IDs and linear-PCM flags, with Apple's values (CoreAudioBaseTypes.h).
public enum AudioFormatValues {
    /// `kAudioFormatLinearPCM` ('lpcm').
    public static let linearPCM: UInt32 = 0x6C70_636D
    /// `kAudioFormatMPEG4AAC` ('aac ').
    public static let mpeg4AAC: UInt32 = 0x6161_6320
    /// `kAudioFormatAppleLossless` ('alac').
    public static let appleLossless: UInt32 = 0x616C_6163
    /// `kAudioFormatFLAC` ('flac').
    public static let flac: UInt32 = 0x666C_6163
    /// `kAudioFormatMPEG4AAC_HE` ('aach'): AAC with spectral band replication (SBR).
    public static let mpeg4AACHighEfficiency: UInt32 = 0x6161_6368
    /// `kAudioFormatMPEG4AAC_HE_V2` ('aacp'): HE-AAC with parametric stereo (PS).
    public static let mpeg4AACHighEfficiencyV2: UInt32 = 0x6161_6370
    /// `kAudioFormatMPEG4AAC_LD` ('aacl'): low-delay AAC.
    public static let mpeg4AACLowDelay: UInt32 = 0x6161_636C
    /// `kAudioFormatMPEG4AAC_ELD` ('aace'): enhanced low-delay AAC.
    public static let mpeg4AACEnhancedLowDelay: UInt32 = 0x6161_6365
    /// `kAudioFormatOpus` ('opus').
    public static let opus: UInt32 = 0x6F70_7573
    /// `kAudioFormatAC3` ('ac-3').
    public static let ac3: UInt32 = 0x6163_2D33
    /// `kAudioFormatEnhancedAC3` ('ec-3').
    public static let enhancedAC3: UInt32 = 0x6563_2D33
    /// `kAudioFormatMPEGLayer1` ('.mp1').
    public static let mpegLayer1: UInt32 = 0x2E6D_7031
    /// `kAudioFormatMPEGLayer2` ('.mp2').
    public static let mpegLayer2: UInt32 = 0x2E6D_7032
    /// `kAudioFormatMPEGLayer3` ('.mp3').
    public static let mpegLayer3: UInt32 = 0x2E6D_7033
    /// `kMPEG4Object_AAC_LC`: the AAC object type Apple keeps in mFormatFlags.
    public static let aacLowComplexity: UInt32 = 2
    /// `kAudioFormatFlagIsFloat`.
    public static let isFloat: UInt32 = 1 << 0
    /// `kAudioFormatFlagIsBigEndian`.
    public static let isBigEndian: UInt32 = 1 << 1
    /// `kAudioFormatFlagIsSignedInteger`.
    public static let isSignedInteger: UInt32 = 1 << 2
    /// `kAudioFormatFlagIsPacked`.
    public static let isPacked: UInt32 = 1 << 3
    /// `kAudioFormatFlagIsAlignedHigh`.
    public static let isAlignedHigh: UInt32 = 1 << 4
    /// `kAudioFormatFlagIsNonInterleaved`.
    public static let isNonInterleaved: UInt32 = 1 << 5
    /// `kAudioFormatFlagIsNonMixable`.
    public static let isNonMixable: UInt32 = 1 << 6
}

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
    /// `kAudioFileAAC_ADTSType` ('adts').
    public static let adts: UInt32 = 0x6164_7473
    /// `kAudioFileM4AType` ('m4af').
    public static let m4a: UInt32 = 0x6D34_6166
    /// `kAudioFileMPEG4Type` ('mp4f').
    public static let mpeg4: UInt32 = 0x6D70_3466
    /// `kAudioFileFLACType` ('flac').
    public static let flac: UInt32 = 0x666C_6163
    /// `kAudioFileMP3Type` ('MPG3').
    public static let mp3: UInt32 = 0x4D50_4733
    /// Ogg ('OggS'): an aqjack code, Apple's AudioFile has no Ogg type.
    public static let ogg: UInt32 = 0x4F67_6753
    /// No type known ('????').
    public static let unknown: UInt32 = 0x3F3F_3F3F
}
