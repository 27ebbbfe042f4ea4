import CLV2Support
import Foundation

/// The features this host gives every instance, in C memory that lives as long as the instance:
/// URID map and unmap, options (block lengths, sequence size, sample rate), bounded block
/// length, a log that prefixes each line with the plugin's name on standard error, and the
/// worker's `schedule` (its worker made by the instance: ``LV2Worker``),
/// `state:makePath` and `state:freePath` (files under the instance's scratch folder); and, to an
/// instance that runs in fixed blocks, fixed and power-of-two block lengths.
///
/// Supported required features are exactly these; a plugin that requires another is refused
/// by name before it is instantiated.
final class LV2Features {
    static let supported: Set<String> = [LV2URI.uridMap, LV2URI.uridUnmap, LV2URI.options, LV2URI.boundedBlockLength, LV2URI.log,
                                         LV2URI.workerSchedule, LV2URI.fixedBlockLength, LV2URI.powerOf2BlockLength,
                                         LV2URI.stateMakePath, LV2URI.stateFreePath]
    /// Features that make an instance run in fixed blocks.
    static let fixedBlockFeatures: Set<String> = [LV2URI.fixedBlockLength, LV2URI.powerOf2BlockLength]

    /// The NULL-terminated feature array for `lilv_plugin_instantiate`.
    let array: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
    private let features: UnsafeMutablePointer<LV2_Feature>
    private let options: UnsafeMutablePointer<LV2_Options_Option>
    private let values: UnsafeMutablePointer<Int32>
    private let rate: UnsafeMutablePointer<Float>
    private let log: UnsafeMutablePointer<LV2_Log_Log>
    private let logStorage: UnsafeMutablePointer<aq_lv2_log_storage>
    private let makePath: UnsafeMutablePointer<LV2_State_Make_Path>
    private let freePath: UnsafeMutablePointer<LV2_State_Free_Path>
    private let pathStorage: UnsafeMutablePointer<aq_lv2_path_storage>
    private let uriStrings: [UnsafeMutablePointer<CChar>]
    private let logContext: Unmanaged<LogContext>

    /// Where log lines go: the plugin's name, and the URIDs of the log types.
    final class LogContext {
        let pluginName: String
        let error: UInt32, warning: UInt32, trace: UInt32
        init(pluginName: String, urids: URIDMap) {
            self.pluginName = pluginName
            error = urids.map(LV2URI.logError)
            warning = urids.map(LV2URI.logWarning)
            trace = urids.map(LV2URI.logTrace)
        }
    }

    /// - Parameters:
    ///   - maximumBlock: the most frames one run gets (`bufsz:maxBlockLength`).
    ///   - fixedBlock: the frames every run gets, when the instance runs in fixed blocks: then
    ///     it is also the minimum, maximum and nominal length, and the fixed and power-of-two
    ///     features are given.
    ///   - sequenceBytes: the capacity of each atom port's buffer (`bufsz:sequenceSize`).
    ///   - worker: the `worker:schedule` data given to the plugin.
    ///   - scratchDirectory: where `state:makePath` makes the plugin's files (an existing folder
    ///     whose path fits CLV2Support's 4 KiB; a longer one leaves the feature out).
    init(urids: URIDMap, sampleRate: Double, maximumBlock: Int, fixedBlock: Int?, sequenceBytes: Int, pluginName: String,
         worker: UnsafeMutablePointer<LV2_Worker_Schedule>, scratchDirectory: String) {
        values = .allocate(capacity: 4)
        let lengths = fixedBlock.map { [$0, $0, $0] } ?? [0, maximumBlock, maximumBlock]
        values.initialize(from: lengths.map(Int32.init) + [Int32(sequenceBytes)], count: 4)
        rate = .allocate(capacity: 1)
        rate.initialize(to: Float(sampleRate))
        let atomInt = urids.map(LV2URI.atomInt)
        let keys = [LV2URI.minBlockLength, LV2URI.maxBlockLength, LV2URI.nominalBlockLength, LV2URI.sequenceSize]
        options = .allocate(capacity: keys.count + 2)
        for (slot, key) in keys.enumerated() {
            (options + slot).initialize(to: LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: urids.map(key),
                                                               size: 4, type: atomInt, value: UnsafeRawPointer(values + slot)))
        }
        (options + keys.count).initialize(to: LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: urids.map(LV2URI.sampleRate),
                                                                 size: 4, type: urids.map(LV2URI.atomFloat), value: UnsafeRawPointer(rate)))
        (options + keys.count + 1).initialize(to: LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: 0, size: 0, type: 0, value: nil))

        logContext = Unmanaged.passRetained(LogContext(pluginName: pluginName, urids: urids))
        log = .allocate(capacity: 1)
        logStorage = .allocate(capacity: 1)
        aq_lv2_log_initialize(log, logStorage, { context, type, line in
            guard let context, let line else { return }
            let log = Unmanaged<LogContext>.fromOpaque(context).takeUnretainedValue()
            // Traces are for plugin developers; errors and warnings name their plugin.
            guard type != log.trace else { return }
            let text = String(cString: line)
            let kind = type == log.error ? "error" : type == log.warning ? "warning" : "note"
            FileHandle.standardError.write(Data("aqjack: plugin '\(log.pluginName)' \(kind): \(text.hasSuffix("\n") ? String(text.dropLast()) : text)\n".utf8))
        }, logContext.toOpaque())

        var entries: [(String, UnsafeMutableRawPointer?)] = [
            (LV2URI.uridMap, UnsafeMutableRawPointer(urids.mapFeature)),
            (LV2URI.uridUnmap, UnsafeMutableRawPointer(urids.unmapFeature)),
            (LV2URI.options, UnsafeMutableRawPointer(options)),
            (LV2URI.boundedBlockLength, nil),
            (LV2URI.log, UnsafeMutableRawPointer(log)),
            (LV2URI.workerSchedule, UnsafeMutableRawPointer(worker)),
        ]
        if fixedBlock != nil { entries += [(LV2URI.fixedBlockLength, nil), (LV2URI.powerOf2BlockLength, nil)] }
        makePath = .allocate(capacity: 1)
        freePath = .allocate(capacity: 1)
        pathStorage = .allocate(capacity: 1)
        if aq_lv2_path_initialize(makePath, freePath, pathStorage, scratchDirectory) != 0 {
            entries += [(LV2URI.stateMakePath, UnsafeMutableRawPointer(makePath)), (LV2URI.stateFreePath, UnsafeMutableRawPointer(freePath))]
        }
        uriStrings = entries.map { strdup($0.0) }
        features = .allocate(capacity: entries.count)
        array = .allocate(capacity: entries.count + 1)
        for (slot, entry) in entries.enumerated() {
            (features + slot).initialize(to: LV2_Feature(URI: uriStrings[slot], data: entry.1))
            (array + slot).initialize(to: UnsafePointer(features + slot))
        }
        (array + entries.count).initialize(to: nil)
    }

    deinit {
        array.deallocate()
        features.deallocate()
        uriStrings.forEach { free($0) }
        options.deallocate()
        values.deallocate()
        rate.deallocate()
        log.deallocate()
        logStorage.deallocate()
        makePath.deallocate()
        freePath.deallocate()
        pathStorage.deallocate()
        logContext.release()
    }
}
