import AQMedia

// Every format ID of Apple's CoreAudioBaseTypes.h (macOS 14 SDK), so code naming any of them
// compiles. What aqjack plays, records and converts is the list `kAudioFormatProperty_DecodeFormatIDs`
// and `EncodeFormatIDs` answer (AudioFormatFunctions.swift); a queue or converter asked for
// another answers 'fmt?' (kAudioFormatUnsupportedDataFormatError) naming it.

public let kAudioFormatLinearPCM: AudioFormatID = AudioFormatValues.linearPCM            // 'lpcm'
public let kAudioFormatAC3: AudioFormatID = AudioFormatValues.ac3                          // 'ac-3'
public let kAudioFormat60958AC3: AudioFormatID = 0x6361_6333                               // 'cac3'
public let kAudioFormatAppleIMA4: AudioFormatID = 0x696D_6134                              // 'ima4'
public let kAudioFormatMPEG4AAC: AudioFormatID = AudioFormatValues.mpeg4AAC                // 'aac '
public let kAudioFormatMPEG4CELP: AudioFormatID = 0x6365_6C70                              // 'celp'
public let kAudioFormatMPEG4HVXC: AudioFormatID = 0x6876_7863                              // 'hvxc'
public let kAudioFormatMPEG4TwinVQ: AudioFormatID = 0x7477_7671                            // 'twvq'
public let kAudioFormatMACE3: AudioFormatID = 0x4D41_4333                                  // 'MAC3'
public let kAudioFormatMACE6: AudioFormatID = 0x4D41_4336                                  // 'MAC6'
public let kAudioFormatULaw: AudioFormatID = 0x756C_6177                                   // 'ulaw'
public let kAudioFormatALaw: AudioFormatID = 0x616C_6177                                   // 'alaw'
public let kAudioFormatQDesign: AudioFormatID = 0x5144_4D43                                // 'QDMC'
public let kAudioFormatQDesign2: AudioFormatID = 0x5144_4D32                               // 'QDM2'
public let kAudioFormatQUALCOMM: AudioFormatID = 0x5163_6C70                               // 'Qclp'
public let kAudioFormatMPEGLayer1: AudioFormatID = AudioFormatValues.mpegLayer1            // '.mp1'
public let kAudioFormatMPEGLayer2: AudioFormatID = AudioFormatValues.mpegLayer2            // '.mp2'
public let kAudioFormatMPEGLayer3: AudioFormatID = AudioFormatValues.mpegLayer3            // '.mp3'
public let kAudioFormatTimeCode: AudioFormatID = 0x7469_6D65                               // 'time'
public let kAudioFormatMIDIStream: AudioFormatID = 0x6D69_6469                             // 'midi'
public let kAudioFormatParameterValueStream: AudioFormatID = 0x6170_7673                   // 'apvs'
public let kAudioFormatAppleLossless: AudioFormatID = AudioFormatValues.appleLossless      // 'alac'
public let kAudioFormatMPEG4AAC_HE: AudioFormatID = AudioFormatValues.mpeg4AACHighEfficiency  // 'aach'
public let kAudioFormatMPEG4AAC_LD: AudioFormatID = AudioFormatValues.mpeg4AACLowDelay        // 'aacl'
public let kAudioFormatMPEG4AAC_ELD: AudioFormatID = AudioFormatValues.mpeg4AACEnhancedLowDelay // 'aace'
public let kAudioFormatMPEG4AAC_ELD_SBR: AudioFormatID = 0x6161_6366                       // 'aacf'
public let kAudioFormatMPEG4AAC_ELD_V2: AudioFormatID = 0x6161_6367                        // 'aacg'
public let kAudioFormatMPEG4AAC_HE_V2: AudioFormatID = AudioFormatValues.mpeg4AACHighEfficiencyV2 // 'aacp'
public let kAudioFormatMPEG4AAC_Spatial: AudioFormatID = 0x6161_6373                       // 'aacs'
public let kAudioFormatMPEGD_USAC: AudioFormatID = 0x7573_6163                             // 'usac'
public let kAudioFormatAMR: AudioFormatID = 0x7361_6D72                                    // 'samr'
public let kAudioFormatAMR_WB: AudioFormatID = 0x7361_7762                                 // 'sawb'
public let kAudioFormatAudible: AudioFormatID = 0x4155_4442                                // 'AUDB'
public let kAudioFormatiLBC: AudioFormatID = 0x696C_6263                                   // 'ilbc'
public let kAudioFormatDVIIntelIMA: AudioFormatID = 0x6D73_0011
public let kAudioFormatMicrosoftGSM: AudioFormatID = 0x6D73_0031
public let kAudioFormatAES3: AudioFormatID = 0x6165_7333                                   // 'aes3'
public let kAudioFormatEnhancedAC3: AudioFormatID = AudioFormatValues.enhancedAC3              // 'ec-3'
public let kAudioFormatFLAC: AudioFormatID = AudioFormatValues.flac                        // 'flac'
public let kAudioFormatOpus: AudioFormatID = AudioFormatValues.opus                          // 'opus'
public let kAudioFormatAPAC: AudioFormatID = 0x6170_6163                                   // 'apac'
