import AQCodecs
import AQMedia

// AudioConverter.h and CoreAudioBaseTypes.h values used with converters (macOS 10.15 SDK).

public typealias AudioConverterPropertyID = UInt32

/// Apple's Swift has no `kMPEG4Object_AAC_LC`: `MPEG4ObjectID` is an enum there (and here).
@available(*, unavailable, message: "Swift spells it UInt32(MPEG4ObjectID.AAC_LC.rawValue), as on Apple's platforms")
public let kMPEG4Object_AAC_LC: UInt32 = AudioFormatValues.aacLowComplexity

public let kAudioEncoderComponentType: UInt32 = 0x6165_6E63               // 'aenc'
public let kAudioDecoderComponentType: UInt32 = 0x6164_6563               // 'adec'
public let kAppleSoftwareAudioCodecManufacturer: UInt32 = 0x6170_706C     // 'appl'
public let kAppleHardwareAudioCodecManufacturer: UInt32 = 0x6170_6877     // 'aphw'

public let kAudioConverterPropertyMinimumInputBufferSize: AudioConverterPropertyID = 0x6D69_6273   // 'mibs'
public let kAudioConverterPropertyMinimumOutputBufferSize: AudioConverterPropertyID = 0x6D6F_6273  // 'mobs'
public let kAudioConverterPropertyMaximumInputPacketSize: AudioConverterPropertyID = 0x7869_7073   // 'xips'
public let kAudioConverterPropertyMaximumOutputPacketSize: AudioConverterPropertyID = 0x786F_7073  // 'xops'
public let kAudioConverterSampleRateConverterComplexity: AudioConverterPropertyID = 0x7372_6361    // 'srca'
public let kAudioConverterSampleRateConverterQuality: AudioConverterPropertyID = 0x7372_6371       // 'srcq'
public let kAudioConverterCodecQuality: AudioConverterPropertyID = 0x6364_7175                     // 'cdqu'
public let kAudioConverterPrimeMethod: AudioConverterPropertyID = 0x7072_6D6D                      // 'prmm'
public let kAudioConverterPrimeInfo: AudioConverterPropertyID = 0x7072_696D                        // 'prim'
public let kAudioConverterDecompressionMagicCookie: AudioConverterPropertyID = 0x646D_6763         // 'dmgc'
public let kAudioConverterCompressionMagicCookie: AudioConverterPropertyID = 0x636D_6763           // 'cmgc'
public let kAudioConverterEncodeBitRate: AudioConverterPropertyID = 0x6272_6174                    // 'brat'
public let kAudioConverterApplicableEncodeBitRates: AudioConverterPropertyID = 0x6165_6272         // 'aebr'
public let kAudioConverterApplicableEncodeSampleRates: AudioConverterPropertyID = 0x6165_7372      // 'aesr'
public let kAudioConverterCurrentOutputStreamDescription: AudioConverterPropertyID = 0x6163_6F64   // 'acod'
public let kAudioConverterChannelMap: AudioConverterPropertyID = 0x6368_6D70                       // 'chmp'
public let kAudioConverterCurrentInputStreamDescription: AudioConverterPropertyID = 0x6163_6964    // 'acid'

public let kAudioConverterQuality_Max: UInt32 = 0x7F
public let kAudioConverterQuality_High: UInt32 = 0x60
public let kAudioConverterQuality_Medium: UInt32 = 0x40
public let kAudioConverterQuality_Low: UInt32 = 0x20
public let kAudioConverterQuality_Min: UInt32 = 0

public let kAudioConverterSampleRateConverterComplexity_Linear: UInt32 = 0x6C69_6E65      // 'line'
public let kAudioConverterSampleRateConverterComplexity_Normal: UInt32 = 0x6E6F_726D      // 'norm'
public let kAudioConverterSampleRateConverterComplexity_Mastering: UInt32 = 0x6261_7473   // 'bats'
public let kAudioConverterSampleRateConverterComplexity_MinimumPhase: UInt32 = 0x6D69_6E70 // 'minp'

public let kConverterPrimeMethod_Pre: UInt32 = 0
public let kConverterPrimeMethod_Normal: UInt32 = 1
public let kConverterPrimeMethod_None: UInt32 = 2

public let kAudioConverterErr_FormatNotSupported: OSStatus = 0x666D_743F              // 'fmt?'
public let kAudioConverterErr_OperationNotSupported: OSStatus = 0x6F70_3F3F           // 'op??'
public let kAudioConverterErr_PropertyNotSupported: OSStatus = 0x7072_6F70            // 'prop'
public let kAudioConverterErr_InvalidInputSize: OSStatus = 0x696E_737A                // 'insz'
public let kAudioConverterErr_InvalidOutputSize: OSStatus = 0x6F74_737A               // 'otsz'
public let kAudioConverterErr_UnspecifiedError: OSStatus = 0x7768_6174                // 'what'
public let kAudioConverterErr_BadPropertySizeError: OSStatus = 0x2173_697A            // '!siz'
public let kAudioConverterErr_RequiresPacketDescriptionsError: OSStatus = 0x2170_6B64 // '!pkd'
public let kAudioConverterErr_InputSampleRateOutOfRange: OSStatus = 0x2169_7372       // '!isr'
public let kAudioConverterErr_OutputSampleRateOutOfRange: OSStatus = 0x216F_7372      // '!osr'
