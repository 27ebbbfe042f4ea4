import AQMedia

/// One file type aqjack reads and writes: Apple's type ID, the names and extensions that pick
/// it, and the codecs it holds.
public struct FileTypeEntry: Sendable, Equatable {
    /// `AudioFileTypeID` ('WAVE', 'caff', 'm4af' ...).
    public let typeID: UInt32
    /// The extensions (lower case) that pick this type; the first is the one messages show.
    public let extensions: [String]
    /// Format IDs it holds ('lpcm', 'aac ', 'alac', 'flac'); the first is the default.
    public let codecs: [UInt32]
    /// Codecs `aqjack record` writes to it live (a subset: ALAC in CAF goes through libsndfile,
    /// whose file is unreadable after a crash, so it is recorded as PCM and converted).
    public let recordableCodecs: [UInt32]

    public var defaultCodec: UInt32 { codecs[0] }
    public var primaryExtension: String { extensions[0] }
}

/// The file types in one table: what an extension or a `-f` name means, which codec a type
/// takes when none is given, and which it can hold. `aqjack record`, `aqjack convert` and
/// ``FileConversion`` all decide here.
public enum FileTypes {
    private static let pcm = AudioFormatValues.linearPCM
    private static let aac = AudioFormatValues.mpeg4AAC
    private static let alac = AudioFormatValues.appleLossless
    private static let flac = AudioFormatValues.flac

    public static let all: [FileTypeEntry] = [
        FileTypeEntry(typeID: AudioFileTypeValues.wave, extensions: ["wav", "wave"], codecs: [pcm], recordableCodecs: [pcm]),
        FileTypeEntry(typeID: AudioFileTypeValues.wave64, extensions: ["w64"], codecs: [pcm], recordableCodecs: [pcm]),
        FileTypeEntry(typeID: AudioFileTypeValues.rf64, extensions: ["rf64"], codecs: [pcm], recordableCodecs: [pcm]),
        FileTypeEntry(typeID: AudioFileTypeValues.aiff, extensions: ["aiff", "aif"], codecs: [pcm], recordableCodecs: [pcm]),
        FileTypeEntry(typeID: AudioFileTypeValues.aifc, extensions: ["aifc"], codecs: [pcm], recordableCodecs: [pcm]),
        FileTypeEntry(typeID: AudioFileTypeValues.caf, extensions: ["caf"], codecs: [pcm, aac, alac], recordableCodecs: [pcm, aac]),
        FileTypeEntry(typeID: AudioFileTypeValues.adts, extensions: ["aac", "adts"], codecs: [aac], recordableCodecs: [aac]),
        FileTypeEntry(typeID: AudioFileTypeValues.m4a, extensions: ["m4a"], codecs: [aac, alac], recordableCodecs: [aac, alac]),
        FileTypeEntry(typeID: AudioFileTypeValues.mpeg4, extensions: ["mp4"], codecs: [aac, alac], recordableCodecs: [aac, alac]),
        FileTypeEntry(typeID: AudioFileTypeValues.flac, extensions: ["flac"], codecs: [flac], recordableCodecs: []),
    ]

    /// The type an extension (without the dot, any case) picks.
    public static func entry(forExtension ext: String) -> FileTypeEntry? {
        let lowered = ext.lowercased()
        return all.first { $0.extensions.contains(lowered) }
    }

    /// The type a `-f` argument names: an extension, or Apple's four-character code ('WAVE', 'caff', 'm4af' ...).
    public static func entry(named name: String) -> FileTypeEntry? {
        all.first { fourCharacterCode($0.typeID) == "'\(name)'" } ?? entry(forExtension: name)
    }

    /// The type with Apple's ID `typeID`.
    public static func entry(_ typeID: UInt32) -> FileTypeEntry? { all.first { $0.typeID == typeID } }

    /// The type a path's extension picks, or nil (no extension, or an unknown one).
    public static func entry(forPath path: String) -> FileTypeEntry? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return nil }
        return entry(forExtension: String(name[name.index(after: dot)...]))
    }

    /// The primary extensions of the types that pass `filter`, for messages, joined as a list
    /// ("wav, w64, ... or mp4"), each behind `prefix` (".").
    public static func extensionList(prefix: String = "", where filter: (FileTypeEntry) -> Bool = { _ in true }) -> String {
        let names = all.filter(filter).map { prefix + $0.primaryExtension }
        guard names.count > 1 else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// The four-character codes of every type, for messages ("WAVE, W64f, ...").
    public static var typeIDList: String { all.map { fourCharacterCode($0.typeID).filter { $0 != "'" } }.joined(separator: ", ") }

    /// A codec's name for messages.
    public static func codecName(_ formatID: UInt32) -> String {
        switch formatID {
        case AudioFormatValues.linearPCM: "linear PCM"
        case AudioFormatValues.mpeg4AAC: "AAC"
        case AudioFormatValues.appleLossless: "Apple Lossless"
        case AudioFormatValues.flac: "FLAC"
        default: fourCharacterCode(formatID)
        }
    }
}
