/* CAudioTypes: the Core Audio structs and callback types with Apple's exact layouts
   (CoreAudioTypes.h / AudioQueue.h / AudioFile.h, macOS 10.15 SDK).

   Declared in C, not Swift, so that the callback typedefs are C function pointers
   (@convention(c) in Swift) exactly as on Apple's platforms: a Swift struct cannot appear in a
   @convention(c) type, and ported code assigns closure literals to these types. */
#ifndef AQJACK_CAUDIOTYPES_H
#define AQJACK_CAUDIOTYPES_H

#include <stdint.h>
#include <string.h>

#pragma clang assume_nonnull begin

typedef struct AudioStreamBasicDescription {
    double   mSampleRate;
    uint32_t mFormatID;
    uint32_t mFormatFlags;
    uint32_t mBytesPerPacket;
    uint32_t mFramesPerPacket;
    uint32_t mBytesPerFrame;
    uint32_t mChannelsPerFrame;
    uint32_t mBitsPerChannel;
    uint32_t mReserved;
} AudioStreamBasicDescription;

typedef struct SMPTETime {
    int16_t  mSubframes;
    int16_t  mSubframeDivisor;
    uint32_t mCounter;
    uint32_t mType;
    uint32_t mFlags;
    int16_t  mHours;
    int16_t  mMinutes;
    int16_t  mSeconds;
    int16_t  mFrames;
} SMPTETime;

/* CF_OPTIONS as Apple's headers spell it: Swift imports such an enum as an OptionSet with the
   short member names (`.sampleTimeValid`) and makes the C constant names unavailable, as it
   does for Apple's SDK. */
#define AQ_OPTIONS(_type, _name) enum __attribute__((flag_enum, enum_extensibility(open))) _name : _type

AQ_OPTIONS(uint32_t, AudioTimeStampFlags) {
    kAudioTimeStampNothingValid = 0U,
    kAudioTimeStampSampleTimeValid = (1U << 0),
    kAudioTimeStampHostTimeValid = (1U << 1),
    kAudioTimeStampRateScalarValid = (1U << 2),
    kAudioTimeStampWordClockTimeValid = (1U << 3),
    kAudioTimeStampSMPTETimeValid = (1U << 4),
    kAudioTimeStampSampleHostTimeValid = (kAudioTimeStampSampleTimeValid | kAudioTimeStampHostTimeValid)
};
typedef enum AudioTimeStampFlags AudioTimeStampFlags;

typedef struct AudioTimeStamp {
    double    mSampleTime;
    uint64_t  mHostTime;
    double    mRateScalar;
    uint64_t  mWordClockTime;
    SMPTETime mSMPTETime;
    AudioTimeStampFlags mFlags;
    uint32_t  mReserved;
} AudioTimeStamp;

typedef struct AudioStreamPacketDescription {
    int64_t  mStartOffset;
    uint32_t mVariableFramesInPacket;
    uint32_t mDataByteSize;
} AudioStreamPacketDescription;

typedef struct AudioQueueBuffer {
    const uint32_t mAudioDataBytesCapacity;
    void * const mAudioData;
    uint32_t mAudioDataByteSize;
    void * _Nullable mUserData;
    const uint32_t mPacketDescriptionCapacity;
    AudioStreamPacketDescription * const _Nullable mPacketDescriptions;
    uint32_t mPacketDescriptionCount;
} AudioQueueBuffer;

typedef struct AudioQueueLevelMeterState {
    float mAveragePower;
    float mPeakPower;
} AudioQueueLevelMeterState;

typedef struct AudioQueueParameterEvent {
    uint32_t mID;
    float    mValue;
} AudioQueueParameterEvent;

/// One channel of a layout (Core Audio's AudioChannelDescription).
typedef struct AudioChannelDescription {
    uint32_t mChannelLabel;
    uint32_t mChannelFlags;
    float    mCoordinates[3];
} AudioChannelDescription;

/// A channel layout (Core Audio's AudioChannelLayout): a tag, a bitmap, or descriptions; the
/// array runs on past its declared single element.
typedef struct AudioChannelLayout {
    uint32_t mChannelLayoutTag;
    uint32_t mChannelBitmap;
    uint32_t mNumberChannelDescriptions;
    AudioChannelDescription mChannelDescriptions[1];
} AudioChannelLayout;

/// One format a stream decodes to (Core Audio's AudioFormatListItem): the
/// kAudioFormatProperty_FormatList, kAudioFilePropertyFormatList and
/// kAudioFileStreamProperty_FormatList items, richest first.
typedef struct AudioFormatListItem {
    AudioStreamBasicDescription mASBD;
    uint32_t mChannelLayoutTag;
} AudioFormatListItem;

/// A format with its magic cookie (Core Audio's AudioFormatInfo): the specifier of
/// kAudioFormatProperty_FormatList.
typedef struct AudioFormatInfo {
    AudioStreamBasicDescription mASBD;
    const void * _Nullable mMagicCookie;
    uint32_t mMagicCookieSize;
} AudioFormatInfo;

typedef struct OpaqueAudioQueue *AudioQueueRef;
typedef AudioQueueBuffer *AudioQueueBufferRef;
typedef struct OpaqueAudioQueueTimeline *AudioQueueTimelineRef;
typedef struct OpaqueAudioFileID *AudioFileID;

/* AudioFile.h: a file read through the caller's functions (AudioFileOpenWithCallbacks). */
typedef int32_t (*AudioFile_ReadProc)(void *inClientData, int64_t inPosition, uint32_t requestCount,
                                      void *buffer, uint32_t *actualCount);
typedef int32_t (*AudioFile_WriteProc)(void *inClientData, int64_t inPosition, uint32_t requestCount,
                                       const void *buffer, uint32_t *actualCount);
typedef int64_t (*AudioFile_GetSizeProc)(void *inClientData);
typedef int32_t (*AudioFile_SetSizeProc)(void *inClientData, int64_t inSize);

typedef void (*AudioQueueInputCallback)(void * _Nullable inUserData, AudioQueueRef inAQ,
                                        AudioQueueBufferRef inBuffer, const AudioTimeStamp *inStartTime,
                                        uint32_t inNumberPacketDescriptions,
                                        const AudioStreamPacketDescription * _Nullable inPacketDescs);
typedef void (*AudioQueueOutputCallback)(void * _Nullable inUserData, AudioQueueRef inAQ, AudioQueueBufferRef inBuffer);
typedef void (*AudioQueuePropertyListenerProc)(void * _Nullable inUserData, AudioQueueRef inAQ, uint32_t inID);

/* CoreAudioBaseTypes.h: a CF_ENUM, which Swift imports as an enum whose cases keep Apple's
   spelling (`MPEG4ObjectID.AAC_LC`, so `UInt32(MPEG4ObjectID.AAC_LC.rawValue)`); its C names
   (`kMPEG4Object_AAC_LC`) are not Swift names, as on Apple's. */
#define AQ_ENUM(_type, _name) enum __attribute__((enum_extensibility(open))) _name : _type
AQ_ENUM(long, MPEG4ObjectID) {
    kMPEG4Object_AAC_Main __attribute__((swift_name("AAC_Main"))) = 1,
    kMPEG4Object_AAC_LC __attribute__((swift_name("AAC_LC"))) = 2,
    kMPEG4Object_AAC_SSR __attribute__((swift_name("AAC_SSR"))) = 3,
    kMPEG4Object_AAC_LTP __attribute__((swift_name("AAC_LTP"))) = 4,
    kMPEG4Object_AAC_SBR __attribute__((swift_name("AAC_SBR"))) = 5,
    kMPEG4Object_AAC_Scalable __attribute__((swift_name("AAC_Scalable"))) = 6,
    kMPEG4Object_TwinVQ __attribute__((swift_name("TwinVQ"))) = 7,
    kMPEG4Object_CELP __attribute__((swift_name("CELP"))) = 8,
    kMPEG4Object_HVXC __attribute__((swift_name("HVXC"))) = 9
};
typedef enum MPEG4ObjectID MPEG4ObjectID;

/* AudioQueue.h, processing taps (macOS 10.7, iOS 6). */
typedef struct OpaqueAudioQueueProcessingTap *AudioQueueProcessingTapRef;
AQ_OPTIONS(uint32_t, AudioQueueProcessingTapFlags) {
    kAudioQueueProcessingTap_PreEffects = (1U << 0),
    kAudioQueueProcessingTap_PostEffects = (1U << 1),
    kAudioQueueProcessingTap_Siphon = (1U << 2),
    kAudioQueueProcessingTap_StartOfStream = (1U << 8),
    kAudioQueueProcessingTap_EndOfStream = (1U << 9)
};
typedef enum AudioQueueProcessingTapFlags AudioQueueProcessingTapFlags;
struct AudioBufferList;
/* Apple declares it inside CF_ASSUME_NONNULL: every pointer non-null, the client data too, so
   a callback's `Unmanaged<T>.fromOpaque(inClientData)` compiles as on macOS. */
typedef void (*AudioQueueProcessingTapCallback)(void * _Nonnull inClientData, AudioQueueProcessingTapRef _Nonnull inAQTap,
                                                uint32_t inNumberFrames, AudioTimeStamp * _Nonnull ioTimeStamp,
                                                AudioQueueProcessingTapFlags * _Nonnull ioFlags, uint32_t * _Nonnull outNumberFrames,
                                                struct AudioBufferList * _Nonnull ioData);

/* AudioConverter.h, AudioFormat.h, AudioFile.h. */
typedef struct AudioBuffer {
    uint32_t mNumberChannels;
    uint32_t mDataByteSize;
    void * _Nullable mData;
} AudioBuffer;

/* A variable-length struct: mNumberBuffers buffers follow (Apple declares mBuffers[1]). */
typedef struct AudioBufferList {
    uint32_t mNumberBuffers;
    AudioBuffer mBuffers[1];
} AudioBufferList;

/* AudioFileStream.h: the parser's handle, flags and callbacks. */
typedef struct OpaqueAudioFileStreamID *AudioFileStreamID;
AQ_OPTIONS(uint32_t, AudioFileStreamPropertyFlags) {
    kAudioFileStreamPropertyFlag_PropertyIsCached = 1,
    kAudioFileStreamPropertyFlag_CacheProperty = 2
};
typedef enum AudioFileStreamPropertyFlags AudioFileStreamPropertyFlags;
AQ_OPTIONS(uint32_t, AudioFileStreamParseFlags) {
    kAudioFileStreamParseFlag_Discontinuity = 1
};
typedef enum AudioFileStreamParseFlags AudioFileStreamParseFlags;
AQ_OPTIONS(uint32_t, AudioFileStreamSeekFlags) {
    kAudioFileStreamSeekFlag_OffsetIsEstimated = 1
};
typedef enum AudioFileStreamSeekFlags AudioFileStreamSeekFlags;
typedef void (*AudioFileStream_PropertyListenerProc)(void *inClientData, AudioFileStreamID inAudioFileStream,
                                                     uint32_t inPropertyID, AudioFileStreamPropertyFlags *ioFlags);
typedef void (*AudioFileStream_PacketsProc)(void *inClientData, uint32_t inNumberBytes, uint32_t inNumberPackets,
                                            const void *inInputData,
                                            AudioStreamPacketDescription * _Nullable inPacketDescriptions);

/* AudioHardwareBase.h (CoreAudio): the address of a device property, and a range of values. */
typedef struct AudioObjectPropertyAddress {
    uint32_t mSelector;
    uint32_t mScope;
    uint32_t mElement;
} AudioObjectPropertyAddress;

typedef struct AudioClassDescription {
    uint32_t mType;
    uint32_t mSubType;
    uint32_t mManufacturer;
} AudioClassDescription;

typedef struct AudioConverterPrimeInfo {
    uint32_t leadingFrames;
    uint32_t trailingFrames;
} AudioConverterPrimeInfo;

typedef struct AudioFilePacketTableInfo {
    int64_t mNumberValidFrames;
    int32_t mPrimingFrames;
    int32_t mRemainderFrames;
} AudioFilePacketTableInfo;

typedef struct AudioValueRange {
    double mMinimum;
    double mMaximum;
} AudioValueRange;

typedef struct OpaqueAudioConverter *AudioConverterRef;

typedef int32_t (*AudioConverterComplexInputDataProc)(AudioConverterRef inAudioConverter, uint32_t *ioNumberDataPackets,
                                                      AudioBufferList *ioData,
                                                      AudioStreamPacketDescription * _Nullable * _Nullable outDataPacketDescription,
                                                      void * _Nullable inUserData);

/* Fills the const fields of a buffer the queue has just allocated. */
static inline void aq_buffer_initialize(AudioQueueBuffer *buffer, uint32_t capacity, void *data,
                                        uint32_t packetDescriptionCapacity,
                                        AudioStreamPacketDescription * _Nullable packetDescriptions) {
    AudioQueueBuffer value = { capacity, data, 0, 0, packetDescriptionCapacity, packetDescriptions, 0 };
    memcpy(buffer, &value, sizeof value);
}

#pragma clang assume_nonnull end
#endif
