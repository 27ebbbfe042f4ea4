import Foundation

/// What a recorded file says about itself, for the tools of post-production: a Broadcast Wave
/// `bext` chunk (EBU Tech 3285) and an iXML chunk (iXML 2.10) in WAVE and RF64 files, and the
/// same names in CAF's 'info' chunk and MPEG-4's tags (ContainerTags.swift). The
/// recording-wide part is set when the files are made; the time reference and the wall-clock
/// time of the first frame come per file, at ``AudioFileWriter/markStart(frame:originated:)``.
public struct RecordingMetadata: Sendable {
    /// bext Description (256 bytes at most; longer is cut at a character).
    public var description = "aqjack recording"
    /// bext Originator (32 bytes).
    public var originator = "aqjack"
    /// bext OriginatorReference (32 bytes); nil: a unique one in EBU R 99's form is made per file.
    public var originatorReference: String?
    /// iXML PROJECT, SCENE and TAKE.
    public var project: String?
    public var scene: String?
    public var take: String?
    /// iXML TRACK_LIST: a name per channel, in order (the source ports').
    public var trackNames: [String] = []
    /// bext version 2 with the loudness of the file (EBU R 128: integrated, range, true peak,
    /// maximum momentary and short-term), measured while it is written.
    public var measuresLoudness = false

    public init() {}

    /// Fixed text fields are bytes: `text` cut to at most `bytes` UTF-8 bytes, at a character.
    static func clipped(_ text: String, bytes: Int) -> String {
        var result = ""
        for character in text where result.utf8.count + String(character).utf8.count <= bytes { result.append(character) }
        return result
    }

    /// bext's OriginationDate ("yyyy-mm-dd") and OriginationTime ("hh:mm:ss") of `date`, in the
    /// local time zone (EBU Tech 3285 asks for local time).
    public static func originationFields(_ date: Date) -> (date: String, time: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: nearestMillisecond(date))
        return (String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0),
                String(format: "%02d:%02d:%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0))
    }

    /// `date` to the millisecond: a time computed from frames a hair before a whole second (a
    /// part cut on a boundary: within half a frame) is that second, not the one before.
    public static func nearestMillisecond(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    /// The OriginatorReference a file carries (bext's field, and the same in CAF's 'info'
    /// chunk): the one given, cut to bext's 32 bytes, else a unique one made at `date`.
    public func reference(originated date: Date) -> String {
        Self.clipped(originatorReference ?? Self.uniqueReference(date), bytes: 32)
    }

    /// A unique OriginatorReference in EBU R 99's layout: country (`ZZ`, none), organisation
    /// (`AQJ`), 12 characters of this machine and process, the time (hhmmss) and 9 random digits.
    public static func uniqueReference(_ date: Date) -> String {
        let time = originationFields(date).time.replacingOccurrences(of: ":", with: "")
        let machine = String(format: "%06X%06X", UInt32(truncatingIfNeeded: gethostid()) & 0xFFFFFF, UInt32(getpid()) & 0xFFFFFF)
        return "ZZAQJ" + machine + time + String(format: "%09u", UInt32.random(in: 0 ..< 1_000_000_000))
    }

    /// The iXML document for a file of `channels` channels whose first frame is
    /// `timeReference` at `sampleRate` Hz (TIMESTAMP_SAMPLES_SINCE_MIDNIGHT: the BWF TimeReference).
    public func iXML(channels: Int, sampleRate: Double, bitDepth: Int, timeReference: UInt64, reference: String) -> String {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        func element(_ name: String, _ value: String?) -> String { value.map { "<\(name)>\(escaped($0))</\(name)>" } ?? "" }
        let rate = Int(sampleRate.rounded())
        let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<BWFXML><IXML_VERSION>2.10</IXML_VERSION>"
            + element("PROJECT", project) + element("SCENE", scene) + element("TAKE", take)
            + element("FILE_UID", reference) + element("NOTE", description)
            + "<SPEED><FILE_SAMPLE_RATE>\(rate)</FILE_SAMPLE_RATE><AUDIO_BIT_DEPTH>\(bitDepth)</AUDIO_BIT_DEPTH>"
            + "<TIMESTAMP_SAMPLE_RATE>\(rate)</TIMESTAMP_SAMPLE_RATE>"
            + "<TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>\(timeReference >> 32)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>"
            + "<TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO>\(timeReference & 0xFFFF_FFFF)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO></SPEED>"
        // As many tracks as the document's size allows (a file of 1024 channels lists the first).
        var tracks = "", listed = 0, size = head.utf8.count + 80
        for index in 0 ..< channels {
            let track = "<TRACK><CHANNEL_INDEX>\(index + 1)</CHANNEL_INDEX><INTERLEAVE_INDEX>\(index + 1)</INTERLEAVE_INDEX>"
                + element("NAME", index < trackNames.count ? trackNames[index] : "channel \(index + 1)") + "</TRACK>"
            guard size + track.utf8.count <= Self.iXMLLimit else { break }
            tracks += track
            size += track.utf8.count
            listed += 1
        }
        return head + "<TRACK_LIST><TRACK_COUNT>\(listed)</TRACK_COUNT>\(tracks)</TRACK_LIST></BWFXML>\n"
    }

    /// The largest iXML document written, bytes: libsndfile reads back no file whose header
    /// passes 64 KiB (measured: a 60,000-byte chunk made its WAVE unreadable, "No 'data' chunk
    /// marker"), and the loudness is written into a header found in its first 64 KiB.
    public static let iXMLLimit = 32 * 1024
}
