import Foundation

/// Where ``RecordingMetadata``'s names go in containers other than Broadcast Wave: a CAF file's
/// 'info' chunk and an MPEG-4 file's iTunes-style tags. Each container keeps what it has a place
/// for; these are the only mappings (the writers call them).
extension RecordingMetadata {
    /// The entries of a CAF 'info' chunk (Apple's Core Audio Format specification: a dictionary
    /// of UTF-8 keys and values) for a file whose first frame is `timeReference` (samples since
    /// midnight, as bext's TimeReference), recorded at `originated`. Apple's keys where one
    /// fits: "title" (the take), "album" (the project), "artist" (the originator), "comments"
    /// (the description), "recorded date" (local time with its UTC offset, "2026-12-06 00:10:00
    /// +0100"), "encoding application"; and keys of aqjack's own for the rest: "scene",
    /// "originator reference", "time reference", "track 1" ... (a channel's source port). Track
    /// entries stop where the chunk would pass ``iXMLLimit`` (libsndfile's header room).
    public func cafInformation(timeReference: UInt64, originated: Date, reference: String) -> [(key: String, value: String)] {
        var entries: [(key: String, value: String)] = []
        if let take { entries.append(("title", take)) }
        if let project { entries.append(("album", project)) }
        entries.append(("artist", originator))
        entries.append(("comments", description))
        entries.append(("recorded date", Self.recordedDate(originated)))
        entries.append(("encoding application", "aqjack"))
        if let scene { entries.append(("scene", scene)) }
        entries.append(("originator reference", reference))
        entries.append(("time reference", String(timeReference)))
        var size = Self.cafInformationChunk(entries).count
        for (index, name) in trackNames.enumerated() {
            let entry = (key: "track \(index + 1)", value: name)
            size += entry.key.utf8.count + entry.value.utf8.count + 2
            guard size <= Self.iXMLLimit else { break }
            entries.append(entry)
        }
        return entries
    }

    /// A CAF 'info' chunk's body: the entry count (UInt32, big-endian), then each key and value
    /// as NUL-terminated UTF-8.
    public static func cafInformationChunk(_ entries: [(key: String, value: String)]) -> [UInt8] {
        var bytes = withUnsafeBytes(of: UInt32(entries.count).bigEndian) { Array($0) }
        for entry in entries { bytes += Array(entry.key.utf8) + [0] + Array(entry.value.utf8) + [0] }
        return bytes
    }

    /// An MPEG-4 file's tags, as FFmpeg's ipod and mp4 muxers take them (iTunes 'ilst' atoms):
    /// "title" (the take), "album" (the project), "artist" (the originator), "comment" (the
    /// description), "grouping" (the scene) and "date" (`originated` in UTC, ISO 8601). MPEG-4's
    /// tags have no place for the time reference or the track names.
    public func mpeg4Tags(originated: Date) -> [(key: String, value: String)] {
        var tags: [(key: String, value: String)] = []
        if let take { tags.append(("title", take)) }
        if let project { tags.append(("album", project)) }
        tags.append(("artist", originator))
        tags.append(("comment", description))
        if let scene { tags.append(("grouping", scene)) }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        tags.append(("date", formatter.string(from: Self.nearestMillisecond(originated))))
        return tags
    }

    /// "yyyy-MM-dd HH:mm:ss ±hhmm" in the local time zone, as bext's local date and time with
    /// the offset that makes it unambiguous.
    static func recordedDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return formatter.string(from: nearestMillisecond(date))
    }
}
