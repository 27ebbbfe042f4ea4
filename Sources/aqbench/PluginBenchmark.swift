import AQCore
import AQPlugins
import Foundation

/// The live host's callback cost: ``PluginHostProcessor/process(_:)`` over an LV2 plugin,
/// measured off-line on this thread with buffers of JACK's shape (the processor cannot tell).
enum PluginBenchmark {
    /// - Returns: nanoseconds per cycle (best of 5 runs of `cycles`) at `period` frames, the
    ///   plugin's inputs fed a sine, a control change queued every cycle when `changeControl`
    ///   names one.
    static func hostCycle(uri: String, period: Int, cycles: Int, changeControl: String?) throws -> Double {
        let instance = try LV2PluginInstance(world: LV2World(), uri: uri, sampleRate: 48000, maximumBlock: max(4096, period))
        let (processor, controls) = PluginHostProcessor.make(ports: instance.hostPorts())
        let ins = instance.description.audioInputs.count, outs = instance.description.audioOutputs.count
        let inputs = (0 ..< max(ins, 1)).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: period) }
        let outputs = (0 ..< max(outs, 1)).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: period) }
        defer { (inputs + outputs).forEach { $0.deallocate() } }
        for buffer in inputs { for frame in 0 ..< period { buffer[frame] = 0.25 * sin(Float(frame) * 0.0575) } }
        let inputTable = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: inputs.count)
        let outputTable = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: outputs.count)
        defer { inputTable.deallocate(); outputTable.deallocate() }
        for (index, buffer) in inputs.enumerated() { inputTable[index] = UnsafePointer(buffer) }
        for (index, buffer) in outputs.enumerated() { outputTable[index] = buffer }
        let port = try changeControl.map { (symbol) throws(PluginError) in try instance.checkedControlPort(symbol, value: 0) }
        var best = Double.infinity
        for _ in 0 ..< 5 {
            var nanoseconds: UInt64 = 0
            for index in 0 ..< cycles {
                if let port { controls.set(port: port, to: Float(index % 13) - 6) }
                let cycle = ProcessCycle(frameCount: period, frameTime: UInt32(truncatingIfNeeded: index * period), cycleStartMicros: 0, nextCycleStartMicros: 0,
                                         inputs: UnsafeBufferPointer(start: inputTable, count: ins), outputs: UnsafeBufferPointer(start: outputTable, count: outs))
                let start = DispatchTime.now().uptimeNanoseconds
                processor.process(cycle)
                nanoseconds += DispatchTime.now().uptimeNanoseconds - start
            }
            best = min(best, Double(nanoseconds) / Double(cycles))
        }
        return best
    }
}
