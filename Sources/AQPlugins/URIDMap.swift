import AQCore
import CLV2Support
import Glibc
import Synchronization

/// The host's URID map and unmap (LV2 `urid:map`, `urid:unmap`): URIs to small integers from 1,
/// each URI's C string kept for the map's lifetime. Any thread (plugins map at instantiation,
/// some in their worker); a mutex guards the tables, so not for the real-time thread.
public final class URIDMap: @unchecked Sendable {
    private struct Tables {
        var ids: [String: LV2_URID] = [:]
        var strings: [UnsafeMutablePointer<CChar>] = []
    }
    private let tables = Mutex(Tables())
    /// The C structs handed to plugins; their handle is this object (unretained: plugins live
    /// shorter than the map, which instances keep).
    let mapFeature: UnsafeMutablePointer<LV2_URID_Map>
    let unmapFeature: UnsafeMutablePointer<LV2_URID_Unmap>

    public init() {
        mapFeature = .allocate(capacity: 1)
        unmapFeature = .allocate(capacity: 1)
        let handle = Unmanaged.passUnretained(self).toOpaque()
        mapFeature.initialize(to: LV2_URID_Map(handle: handle, map: { handle, uri in
            guard let handle, let uri else { return 0 }
            return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().map(String(cString: uri))
        }))
        unmapFeature.initialize(to: LV2_URID_Unmap(handle: handle, unmap: { handle, urid in
            guard let handle else { return nil }
            return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().cString(urid)
        }))
    }

    deinit {
        tables.withLock { $0.strings.forEach { free($0) } }
        mapFeature.deallocate()
        unmapFeature.deallocate()
    }

    /// The URID of `uri` (made on first use).
    public func map(_ uri: String) -> LV2_URID {
        tables.withLock { tables in
            if let id = tables.ids[uri] { return id }
            tables.strings.append(strdup(uri))
            let id = LV2_URID(tables.strings.count)
            tables.ids[uri] = id
            return id
        }
    }

    /// The URI of `urid`, or nil for one never mapped.
    public func uri(_ urid: LV2_URID) -> String? { cString(urid).map { String(cString: $0) } }

    private func cString(_ urid: LV2_URID) -> UnsafePointer<CChar>? {
        tables.withLock { tables in
            guard urid >= 1, Int(urid) <= tables.strings.count else { return nil }
            return UnsafePointer(tables.strings[Int(urid) - 1])
        }
    }
}

extension AtomSequence.PositionTypes {
    /// The URIDs of a `time:Position` object in `urids`' map (not real-time: mapping may lock).
    init(urids: URIDMap) {
        self.init()
        object = urids.map(LV2URI.atomObject)
        long = urids.map(LV2URI.atomLong)
        float = urids.map(LV2URI.atomFloat)
        int = urids.map(LV2URI.atomInt)
        position = urids.map(LV2URI.timePosition)
        frame = urids.map(LV2URI.timeFrame)
        speed = urids.map(LV2URI.timeSpeed)
        bar = urids.map(LV2URI.timeBar)
        barBeat = urids.map(LV2URI.timeBarBeat)
        beatUnit = urids.map(LV2URI.timeBeatUnit)
        beatsPerBar = urids.map(LV2URI.timeBeatsPerBar)
        beatsPerMinute = urids.map(LV2URI.timeBeatsPerMinute)
    }
}
