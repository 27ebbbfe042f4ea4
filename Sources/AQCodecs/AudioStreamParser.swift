import AQMedia
import CAudioTypes

/// What a stream parser has learned about the stream so far (Audio File Stream Services'
/// properties). A class: the property listener reads it while the parser is filling it in.
public final class AudioStreamInfo {
    /// `AudioFileTypeID` ('WAVE', 'caff', 'adts', 'MPG3', 'm4af').
    public var fileType: UInt32 = 0
    public var dataFormat = AudioStreamBasicDescription()
    public var magicCookie: [UInt8] = []
    /// The byte offset of the first audio data byte in the stream.
    public var dataOffset: Int64 = 0
    /// Audio data bytes and packets, when the container says (WAV, CAF, MPEG-4).
    public var audioDataByteCount: Int64?
    public var audioDataPacketCount: Int64?
    /// Priming and remainder frames (CAF 'pakt', MPEG-4 edit list).
    public var packetTable: PacketTable?
    /// The largest packet seen or declared, bytes.
    public var maximumPacketSize = 0
    /// Bits per second, when known (MP3 and ADTS from their frames, MPEG-4 from its esds).
    public var bitRate: UInt32 = 0
    public var isReadyToProducePackets = false
    /// Byte offset and size of every packet when the container lists them (CAF 'pakt', MPEG-4
    /// 'stsz'/'stco'), for exact seeks; relative to ``dataOffset`` for CAF, absolute for MPEG-4.
    var packetOffsets: [Int64] = []

    public init() {}
}

/// What the parser reports, in stream order.
public enum AudioStreamEvent {
    /// An Apple `kAudioFileStreamProperty_*` ID whose value is now known.
    case property(UInt32)
}

/// Receives packets: the bytes of `count` whole packets, with a description each for
/// variable-size packets (nil for constant-size linear PCM). The memory is valid during the call.
public typealias AudioStreamPacketHandler = (UnsafeRawBufferPointer, Int, UnsafeBufferPointer<AudioStreamPacketDescription>?) -> Void

/// One container's parser: consumes bytes from the front of what has arrived.
protocol StreamContainerParser: AnyObject {
    /// Parses from `input`, which starts at stream offset `offset`; returns the bytes consumed (0
    /// when it needs more before it can go on).
    func step(_ input: UnsafeRawBufferPointer, at offset: Int64, info: AudioStreamInfo,
              events: (AudioStreamEvent) -> Void, packets: AudioStreamPacketHandler) throws(AudioFileError) -> Int
    /// Where packet `packet` (0 or more) starts (absolute byte offset) and whether that is an
    /// estimate; the parser then expects bytes from there. Nil when the stream cannot tell yet.
    ///
    /// - Throws: `kAudio_ParamError` for a packet whose offset the stream cannot have (past
    ///   2^63 bytes); the parser is then unchanged.
    func seek(toPacket packet: Int64, info: AudioStreamInfo) throws(AudioFileError) -> (offset: Int64, estimated: Bool)?
}

/// What a stream's header may claim, so that no claim sizes an allocation, a wait or a loop:
/// a header chunk or box is read whole only up to ``headerBytes``, a packet table lists at most
/// ``packets`` packets of at most ``packetBytes`` each, boxes nest at most ``depth`` deep, and
/// at most ``stashBytes`` of an 'mdat' are kept while waiting for a 'moov' after it. Beyond
/// these the stream is refused with an error naming the claim.
enum StreamLimits {
    /// 32 MiB: a packet table of 2^22 packets in 4-byte entries with room to spare.
    static let headerBytes = 1 << 25
    /// 2^22 packets: 24 hours of 48 kHz AAC (1,024 frames a packet).
    static let packets = 1 << 22
    /// 16 MiB, far above any codec's packet (an ALAC packet of 4,096 frames of 8 channels of
    /// 32 bits is 128 KiB).
    static let packetBytes = 1 << 24
    /// MPEG-4 sample tables sit 4 boxes below 'trak'; 16 leaves room for any real file.
    static let depth = 16
    /// 32 MiB of 'mdat' held for a 'moov' that comes after it; past that,
    /// `kAudioFileStreamError_NotOptimized` as Apple's parser answers such files.
    static let stashBytes = 1 << 25
}

/// `base + packet * bytesPerPacket`, the byte offset of a constant-size packet.
///
/// - Throws: `kAudio_ParamError` when it does not fit in 63 bits.
func packetOffset(_ packet: Int64, bytesPerPacket: Int64, from base: Int64) throws(AudioFileError) -> Int64 {
    let (bytes, overflow) = packet.multipliedReportingOverflow(by: bytesPerPacket)
    let (offset, overflow2) = base.addingReportingOverflow(bytes)
    guard !overflow, !overflow2 else { throw packetOutOfRange(packet) }
    return offset
}

/// The `kAudio_ParamError` for a seek or translation to a packet the stream cannot have.
func packetOutOfRange(_ packet: Int64) -> AudioFileError {
    AudioFileError(AudioFileError.parameterCode, "packet \(packet) is out of range: its byte offset would pass 2^63")
}

/// Audio File Stream Services' engine: bytes of a WAVE/RF64, CAF, ADTS, MP3 or MPEG-4 (M4A)
/// stream arrive in pieces of any size, and the parser reports the stream's properties as it
/// learns them and hands out whole packets, the same packets whatever the pieces (a property
/// or packet split across two pieces waits for the second). One thread at a time.
public final class AudioStreamParser {
    public let info = AudioStreamInfo()
    private var container: (any StreamContainerParser)?
    private let typeHint: UInt32
    /// Bytes not yet consumed, and the stream offset of the first.
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var offset: Int64 = 0
    /// Bytes of a leading ID3v2 tag still to skip (MP3 and ADTS streams often start with one).
    private var tagLeft: Int64 = 0
    /// The error that stopped the stream: every later call answers it.
    private var failed: AudioFileError?

    /// A parser for a stream of `typeHint` (0: tell from the first bytes).
    public init(typeHint: UInt32 = 0) { self.typeHint = typeHint }

    /// Parses `bytes`, reporting properties to `events` and packets to `packets` as they are
    /// complete. A `discontinuity` (after a seek) drops any partial packet held from before.
    ///
    /// - Throws: ``AudioFileError``: 'typ?' for a stream that is none of the five types,
    ///   'dta?' for a malformed one (and every later call, as Apple's stream stays failed).
    public func parse(_ bytes: UnsafeRawBufferPointer, discontinuity: Bool,
                      events: (AudioStreamEvent) -> Void, packets: AudioStreamPacketHandler) throws(AudioFileError) {
        if let failed { throw failed }
        if discontinuity, info.isReadyToProducePackets {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
        pending.append(contentsOf: bytes)
        do throws(AudioFileError) {
            try run(events: events, packets: packets)
        } catch {
            failed = error
            throw error
        }
    }

    private func run(events: (AudioStreamEvent) -> Void, packets: AudioStreamPacketHandler) throws(AudioFileError) {
        while pendingStart < pending.count {
            if tagLeft > 0 {
                let skipped = Int(min(tagLeft, Int64(pending.count - pendingStart)))
                tagLeft -= Int64(skipped)
                pendingStart += skipped
                offset += Int64(skipped)
                continue
            }
            if container == nil {
                let available = pending.count - pendingStart
                if available >= 10, pending[pendingStart] == 0x49, pending[pendingStart + 1] == 0x44, pending[pendingStart + 2] == 0x33 {
                    // "ID3": a synchsafe size after 6 bytes, plus the 10-byte header (and footer).
                    let size = pending[pendingStart + 6 ..< pendingStart + 10].reduce(Int64(0)) { $0 << 7 | Int64($1 & 0x7F) }
                    tagLeft = size + 10 + (pending[pendingStart + 5] & 0x10 != 0 ? 10 : 0)
                    continue
                }
                if available < 10, pending[pendingStart...].starts(with: [0x49, 0x44, 0x33].prefix(available)) { return }
                guard let chosen = pending.withUnsafeBytes({ raw in
                    Self.detect(UnsafeRawBufferPointer(rebasing: raw[pendingStart...]), hint: typeHint)
                }) else {
                    if available >= 4096 {
                        throw AudioFileError(AudioFileError.fileUnsupportedTypeCode,
                                             "the first \(available) bytes are not WAVE, RF64, CAF, ADTS, MP3 or MPEG-4 audio")
                    }
                    return
                }
                container = chosen.parser
                info.fileType = chosen.fileType
                events(.property(AudioFileStreamProperties.fileFormat))
            }
            // The format list is known with the format and cookie: announced just before the
            // stream is ready, as Apple's parser does (players pick HE-AAC from it there).
            let consumed = try pending.withUnsafeBufferPointer { (buffer) throws(AudioFileError) in
                try container!.step(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[pendingStart...]), at: offset, info: info,
                                    events: { event in
                                        if case .property(AudioFileStreamProperties.readyToProducePackets) = event {
                                            events(.property(AudioFileStreamProperties.formatList))
                                        }
                                        events(event)
                                    }, packets: packets)
            }
            if consumed == 0 { break }
            pendingStart += consumed
            offset += Int64(consumed)
        }
        // Keep only what is left, without copying on every small piece.
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        } else if pendingStart > 65536 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
    }

    /// Where packet `packet` starts in the stream, and whether that is an estimate (ADTS, MP3:
    /// from the average packet size). The next bytes passed in must start there (with the
    /// discontinuity flag).
    ///
    /// - Throws: 'more' (`kAudioFileStreamError_DataUnavailable`) before the stream is ready.
    /// - Throws: `kAudio_ParamError` for a negative packet or one whose offset would pass 2^63
    ///   bytes (the stream is unchanged).
    public func seek(toPacket packet: Int64) throws(AudioFileError) -> (offset: Int64, estimated: Bool) {
        guard packet >= 0 else { throw AudioFileError(AudioFileError.parameterCode, "packet \(packet) is out of range: expected 0 or more") }
        guard info.isReadyToProducePackets, let container, let target = try container.seek(toPacket: packet, info: info) else {
            throw AudioFileError(AudioFileStreamProperties.dataUnavailableCode, "the stream is not ready to produce packets: parse its header first")
        }
        pending.removeAll(keepingCapacity: true)
        pendingStart = 0
        offset = target.offset
        return target
    }

    /// The container `bytes` start with, or nil when it cannot be told yet (fewer than 12 bytes)
    /// or the bytes are none of them.
    static func detect(_ bytes: UnsafeRawBufferPointer, hint: UInt32) -> (parser: any StreamContainerParser, fileType: UInt32)? {
        guard bytes.count >= 12 else { return nil }
        let tag = String(decoding: bytes[0 ..< 4], as: UTF8.self)
        let tag2 = String(decoding: bytes[4 ..< 8], as: UTF8.self)
        if tag == "RIFF" || tag == "RF64" { return (WAVEStreamParser(rf64: tag == "RF64"), tag == "RF64" ? AudioFileTypeValues.rf64 : AudioFileTypeValues.wave) }
        if tag == "caff" { return (CAFStreamParser(), AudioFileTypeValues.caf) }
        if tag2 == "ftyp" {
            let brand = String(decoding: bytes[8 ..< 12], as: UTF8.self)
            return (MPEG4StreamParser(), brand.hasPrefix("M4A") ? AudioFileTypeValues.m4a : AudioFileTypeValues.mpeg4)
        }
        if ADTSHeader(parsing: bytes) != nil && hint != AudioFileTypeValues.mp3 {
            return (ADTSStreamParser(), AudioFileTypeValues.adts)
        }
        if MP3FrameHeader(bytes) != nil { return (MP3StreamParser(), AudioFileTypeValues.mp3) }
        return nil
    }
}

/// Apple's Audio File Stream property IDs and codes, for the parser's events.
public enum AudioFileStreamProperties {
    public static let readyToProducePackets: UInt32 = 0x7265_6479  // 'redy'
    public static let fileFormat: UInt32 = 0x6666_6D74              // 'ffmt'
    public static let dataFormat: UInt32 = 0x6466_6D74              // 'dfmt'
    public static let magicCookieData: UInt32 = 0x6D67_6963         // 'mgic'
    public static let formatList: UInt32 = 0x666C_7374              // 'flst'
    public static let audioDataByteCount: UInt32 = 0x6263_6E74      // 'bcnt'
    public static let audioDataPacketCount: UInt32 = 0x7063_6E74    // 'pcnt'
    public static let dataOffset: UInt32 = 0x646F_6666              // 'doff'
    public static let packetTableInfo: UInt32 = 0x706E_666F         // 'pnfo'
    public static let bitRate: UInt32 = 0x6272_6174                 // 'brat'
    /// `kAudioFileStreamError_DataUnavailable` ('more').
    public static let dataUnavailableCode: Int32 = 0x6D6F_7265
    /// `kAudioFileStreamError_NotOptimized` ('optm'): the packet table comes after the audio.
    public static let notOptimizedCode: Int32 = 0x6F70_746D
}

/// Where a chunked container's parser is: its header, between chunks (boxes), skipping one it
/// does not read, in the audio data, or past it (WAVE, CAF; MPEG-4 without header and trailer).
enum ChunkedState {
    case header, chunks, skipping(Int64), data, trailer

    /// Skips `size` bytes next (none: straight on to the next chunk).
    static func skip(_ size: Int64) -> ChunkedState { size > 0 ? .skipping(size) : .chunks }

    /// In `.skipping` and `.trailer`: consumes what they pass over of `input` and moves on;
    /// nil in the states the parser reads.
    mutating func pass(_ input: UnsafeRawBufferPointer) -> Int? {
        switch self {
        case .skipping(let left):
            let consumed = Int(min(left, Int64(input.count)))
            self = left > Int64(consumed) ? .skipping(left - Int64(consumed)) : .chunks
            return consumed
        case .trailer: return input.count
        default: return nil
        }
    }
}

/// Hands out the whole constant-size frames at the front of `input` (at most `left` bytes of
/// data when the size is known); returns the bytes consumed.
func emitFrames(_ input: UnsafeRawBufferPointer, frameBytes: Int, left: Int64?, packets: AudioStreamPacketHandler) -> Int {
    let usable = left.map { Int(min(Int64(input.count), $0)) } ?? input.count
    let frames = usable / max(1, frameBytes)
    guard frames > 0 else { return 0 }
    packets(UnsafeRawBufferPointer(rebasing: input[0 ..< frames * frameBytes]), frames, nil)
    return frames * frameBytes
}

/// Little- and big-endian reads from a raw buffer.
extension UnsafeRawBufferPointer {
    func le16(_ at: Int) -> UInt32 { UInt32(self[at]) | UInt32(self[at + 1]) << 8 }
    func le32(_ at: Int) -> UInt32 { le16(at) | le16(at + 2) << 16 }
    func le64(_ at: Int) -> UInt64 { UInt64(le32(at)) | UInt64(le32(at + 4)) << 32 }
    func be16(_ at: Int) -> UInt32 { UInt32(self[at]) << 8 | UInt32(self[at + 1]) }
    func be32(_ at: Int) -> UInt32 { be16(at) << 16 | be16(at + 2) }
    func be64(_ at: Int) -> UInt64 { UInt64(be32(at)) << 32 | UInt64(be32(at + 4)) }
    func fourCC(_ at: Int) -> String { String(decoding: self[at ..< at + 4], as: UTF8.self) }
}

/// A malformed-stream error ('dta?') naming what was wrong.
func malformedStream(_ what: String) -> AudioFileError {
    AudioFileError(AudioFileError.fileInvalidFileCode, "malformed stream: " + what)
}

/// A header chunk or box of `size` bytes that is read whole: refused past
/// ``StreamLimits/headerBytes``.
func checkHeaderSize(_ size: Int64, of what: String) throws(AudioFileError) {
    guard size <= Int64(StreamLimits.headerBytes) else {
        throw malformedStream("\(what) of \(size) bytes: expected at most \(StreamLimits.headerBytes)")
    }
}
